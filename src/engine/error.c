/* Errors as values: codes, trap kinds and their stable messages. */
#include <stdarg.h>
#include <stdio.h>

#include "runtime.h"

static const char *const trap_messages[RI_TRAP_COUNT] = {
    [RI_TRAP_NONE] = "no trap",
    [RI_TRAP_UNREACHABLE] = "unreachable",
    [RI_TRAP_INT_DIV_ZERO] = "integer divide by zero",
    [RI_TRAP_INT_OVERFLOW] = "integer overflow",
    [RI_TRAP_INVALID_CONVERSION] = "invalid conversion to integer",
    [RI_TRAP_MEMORY_OOB] = "out of bounds memory access",
    [RI_TRAP_TABLE_OOB] = "out of bounds table access",
    [RI_TRAP_UNDEFINED_ELEMENT] = "undefined element",
    [RI_TRAP_UNINITIALIZED_ELEMENT] = "uninitialized element",
    [RI_TRAP_INDIRECT_MISMATCH] = "indirect call type mismatch",
    [RI_TRAP_STACK_EXHAUSTED] = "call stack exhausted",
    [RI_TRAP_OUT_OF_GAS] = "out of gas",
    [RI_TRAP_INTERRUPTED] = "interrupted",
    [RI_TRAP_HOST] = "host function failed",
    [RI_TRAP_EXCEPTION] = "uncaught exception",
    [RI_TRAP_NULL_EXNREF] = "null exception reference",
};

const char *ri_trap_message(ri_trap trap) {
    if ((unsigned)trap >= RI_TRAP_COUNT) return "unknown trap";
    return trap_messages[trap];
}

const char *ri_errcode_name(ri_errcode code) {
    switch (code) {
    case RI_OK: return "ok";
    case RI_ERR_MALFORMED: return "malformed";
    case RI_ERR_INVALID: return "invalid";
    case RI_ERR_LIMIT: return "limit";
    case RI_ERR_UNLINKABLE: return "unlinkable";
    case RI_ERR_TRAP: return "trap";
    case RI_ERR_NOMEM: return "out of memory";
    case RI_ERR_ARGUMENT: return "argument";
    case RI_ERR_NOT_FOUND: return "not found";
    case RI_ERR_SUSPENDED: return "suspended";
    case RI_ERR_UNSUPPORTED: return "unsupported";
    }
    return "unknown";
}

void ri_error_set(ri_error *err, ri_errcode code, const char *fmt, ...) {
    if (!err) return;
    err->code = code;
    err->trap = RI_TRAP_NONE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

void ri_error_trap(ri_error *err, ri_trap trap) {
    if (!err) return;
    err->code = RI_ERR_TRAP;
    err->trap = trap;
    snprintf(err->message, sizeof err->message, "%s", ri_trap_message(trap));
}

const char *ri_valtype_name(ri_valtype type) {
    switch (type) {
    case RI_I32: return "i32";
    case RI_I64: return "i64";
    case RI_F32: return "f32";
    case RI_F64: return "f64";
    case RI_V128: return "v128";
    case RI_FUNCREF: return "funcref";
    case RI_EXTERNREF: return "externref";
    case RI_EXNREF: return "exnref";
    }
    return "unknown";
}
