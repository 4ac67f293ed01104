/*
 * The host imports of quickjs-wasi's QuickJS-NG build (docs/LANGUAGES.md, JavaScript), in
 * the profile: env.host_call (a JavaScript function made by qjs_new_host_function calls the
 * host), host_interrupt, host_promise_rejection, host_module_normalize, host_module_load,
 * host_get_timezone_offset.
 *
 * host_call sees its arguments as pointers to 8-byte NaN-boxed JSValues (low word the
 * payload, high word the tag; 0 an int). ri's driver (src/lang/javascript.c) makes one
 * such function, "ri", and calls it from its JavaScript runtime with ints only:
 *   ri(op, ...ints, slot)   slot: undefined, the block the result is returned in
 *   op 1 write: fd, n (UTF-16 code units), then the units two to an int (low unit first)
 *   op 2 read: the next stdin bytes (up to 3, packed low first, count << 24), -1 at its end,
 *        -2 when none has come yet and the process pauses (call again after)
 *   op 3 exit: code (ends the process as proc_exit)
 *   op 4 random: 32 bits of the sandbox's seeded PRNG
 * The glue must hand back a malloc'd JSValue the trampoline frees; the host cannot call
 * malloc, so it returns the slot argument's own block (holding the result int) and clears
 * its entry in argv, so that the trampoline's cleanup of argv frees it only once (its
 * cleanup of the NULL entry reads the zero JSValue at address 0, an int, and frees NULL).
 */
#include <stdio.h>
#include <string.h>

#include "emscripten/emsc_internal.h"

enum { OP_WRITE = 1, OP_READ = 2, OP_EXIT = 3, OP_RANDOM = 4 };
enum { TAG_INT = 0, TAG_UNDEFINED = 3 };
#define MAX_ARGS 8192u

/* argv[i]'s JSValue: its payload if it is an int. */
static bool arg_int(emsc_ctx *c, uint32_t argv, uint32_t i, int32_t *out, uint32_t *at) {
    uint32_t p;
    uint64_t v;
    if (!wasi_load_u32(&c->mem, argv + 4 * i, &p) || !wasi_load_u64(&c->mem, p, &v)) return false;
    if (at) *at = p;
    *out = (int32_t)(uint32_t)v;
    return (int32_t)(v >> 32) == TAG_INT;
}

/* UTF-16 units (lone surrogates as U+FFFD) to UTF-8, written to fd 1 or 2. */
static int do_write(emsc_ctx *c, uint32_t argv, uint32_t argc) {
    int32_t fd, n;
    if (argc < 4 || !arg_int(c, argv, 1, &fd, NULL) || !arg_int(c, argv, 2, &n, NULL) || (fd != 1 && fd != 2) || n < 0 ||
        (uint32_t)n > 2 * (argc - 4))
        return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed write");
    uint8_t buf[4 * 256 + 4];
    size_t len = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t w, w2 = 0;
        if (!arg_int(c, argv, 3 + (uint32_t)i / 2, &w, NULL)) return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed write");
        uint32_t u = i & 1 ? (uint32_t)w >> 16 : (uint32_t)w & 0xffff, cp = u;
        if (u >= 0xd800 && u < 0xdc00 && i + 1 < n) { /* a pair: peek at the next unit */
            if (!arg_int(c, argv, 3 + (uint32_t)(i + 1) / 2, &w2, NULL)) return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed write");
            uint32_t lo = (i + 1) & 1 ? (uint32_t)w2 >> 16 : (uint32_t)w2 & 0xffff;
            if (lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                i++;
            }
        }
        if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;
        if (cp < 0x80) buf[len++] = (uint8_t)cp;
        else if (cp < 0x800) buf[len++] = (uint8_t)(0xc0 | cp >> 6), buf[len++] = (uint8_t)(0x80 | (cp & 0x3f));
        else if (cp < 0x10000)
            buf[len++] = (uint8_t)(0xe0 | cp >> 12), buf[len++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)),
            buf[len++] = (uint8_t)(0x80 | (cp & 0x3f));
        else
            buf[len++] = (uint8_t)(0xf0 | cp >> 18), buf[len++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f)),
            buf[len++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), buf[len++] = (uint8_t)(0x80 | (cp & 0x3f));
        if (len >= sizeof buf - 4 || i + 1 >= n) {
            wasi_stdio_write(c->w, fd == 1 ? RI_WASI_STDOUT : RI_WASI_STDERR, buf, len);
            len = 0;
        }
    }
    return 0;
}

/* Up to 3 bytes of stdin, count << 24 | bytes; -1 at its end. With no input yet: -2 and a
 * pause after the call (*yield) when the process may pause (the runtime calls again once
 * resumed, which is when input or its end has come), else a pause before the call as out
 * of gas. */
static int do_read(emsc_ctx *c, int32_t *value, bool *yield) {
    switch (wasi_stdin_poll(c->w)) {
    case WASI_IN_READY: {
        uint8_t b[3] = {0, 0, 0};
        size_t n = wasi_stdin_take(c->w, b, sizeof b);
        *value = (int32_t)((uint32_t)n << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0]);
        return 0;
    }
    case WASI_IN_AGAIN:
        if (!wasi_stdin_wait(c->w, c->call)) return ri_host_pause_before(c->call);
        *value = -2;
        *yield = true;
        return 0;
    default: *value = -1; return 0;
    }
}

EMSC_HANDLER(qjs_host_call) {
    uint32_t name = emsc_u32(args, 0), name_len = emsc_u32(args, 1), argc = emsc_u32(args, 3), argv = emsc_u32(args, 4);
    const uint8_t *nm = wasi_mem_range(&c->mem, name, name_len);
    if (!nm || name_len != 2 || memcmp(nm, "ri", 2) != 0)
        return ri_host_fail(c->call, "a JavaScript host function other than ri's was called");
    int32_t op, value = 0;
    uint32_t slot, zero_tag;
    uint64_t slot_val;
    if (argc < 2 || argc > MAX_ARGS || !arg_int(c, argv, 0, &op, NULL))
        return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed call");
    /* the slot is undefined, and the trampoline's read of address 0 finds an int */
    if (!wasi_load_u32(&c->mem, argv + 4 * (argc - 1), &slot) || !wasi_load_u64(&c->mem, slot, &slot_val) ||
        (int32_t)(slot_val >> 32) != TAG_UNDEFINED || !wasi_load_u32(&c->mem, 4, &zero_tag) || zero_tag != TAG_INT)
        return ri_host_fail(c->call, "ri's JavaScript runtime: a call without its result slot");
    int failed = 0;
    bool yield = false;
    switch (op) {
    case OP_WRITE: failed = do_write(c, argv, argc); break;
    case OP_READ: failed = do_read(c, &value, &yield); break;
    case OP_EXIT: {
        int32_t code;
        uint32_t index;
        if (argc != 3 || !arg_int(c, argv, 1, &code, NULL)) return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed exit");
        if (!ri_wasi_lookup("proc_exit", 9, &index)) return ri_host_fail(c->call, "exit: no proc_exit");
        ri_val a = ri_val_i32(code);
        *c->outcome = ri_wasi_call(c->w, index, c->call, &a, NULL);
        break;
    }
    case OP_RANDOM: value = (int32_t)c->w->services.random32(c->w->services.ctx); break;
    default: return ri_host_fail(c->call, "ri's JavaScript runtime: unknown operation %d", op);
    }
    if (failed) return failed;
    wasi_store_u64(&c->mem, slot, (uint64_t)(uint32_t)value); /* an int JSValue */
    wasi_store_u32(&c->mem, argv + 4 * (argc - 1), 0);
    results[0] = ri_val_i32((int32_t)slot);
    return yield ? ri_host_yield(c->call) : 0;
}

/* QuickJS polls it only when the embedder enabled the interrupt handler: ri stops code
 * with gas and interrupts instead. */
EMSC_HANDLER(qjs_host_interrupt) {
    (void)c, (void)args;
    results[0] = ri_val_i32(0);
    return 0;
}

/* Enabled by qjs_set_promise_rejection_handler only, which ri's driver does not call. */
EMSC_HANDLER(qjs_host_promise_rejection) {
    (void)args, (void)results;
    return ri_host_fail(c->call, "an unhandled promise rejection was reported, but ri keeps no tracker");
}

/* Modules: no loader (import of another module fails as QuickJS says: NULL). */
EMSC_HANDLER(qjs_host_module) {
    (void)c, (void)args;
    results[0] = ri_val_i32(0);
    return 0;
}

/* Local time is UTC, as the rest of the profile. */
EMSC_HANDLER(qjs_host_timezone_offset) {
    (void)c, (void)args;
    results[0] = ri_val_i32(0);
    return 0;
}
