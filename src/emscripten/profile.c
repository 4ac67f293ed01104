/*
 * The profile's table: each env import it serves, with its type, and the dispatch; the
 * process functions (abort, exit, system, the heap, random numbers). Time is in time.c,
 * the file system's syscalls in syscalls.c, QuickJS's host imports in quickjs_host.c.
 */
#include <stdio.h>
#include <string.h>

#include "emscripten/emsc_internal.h"

/* ---- process and memory ---------------------------------------------------------------- */

static EMSC_HANDLER(abort) {
    (void)args, (void)results;
    return ri_host_fail(c->call, "abort() called by the program");
}

/* exit(code) ends the process as WASI's proc_exit does. */
static EMSC_HANDLER(exit) {
    (void)results;
    uint32_t index;
    if (!ri_wasi_lookup("proc_exit", 9, &index)) return ri_host_fail(c->call, "exit: no proc_exit");
    *c->outcome = ri_wasi_call(c->w, index, c->call, args, NULL);
    return 0;
}

/* No shell: system(NULL) says so (0), any command fails (-1). */
static EMSC_HANDLER(system) {
    results[0] = ri_val_i32(emsc_u32(args, 0) == 0 ? 0 : -1);
    (void)c;
    return 0;
}

/* emscripten_resize_heap(requested bytes): grows memory 0 as the glue does (about 20%
 * more than asked, in whole pages), within the sandbox's memory limit; 1 on success. */
static EMSC_HANDLER(resize_heap) {
    ri_memory *mem = ri_host_call_memory(c->call);
    uint64_t want = emsc_u32(args, 0);
    results[0] = ri_val_i32(0);
    if (!mem) return 0;
    uint64_t old = ri_memory_size(mem), max = (uint64_t)ri_memory_max_pages(mem) * 65536;
    if (want <= old) {
        results[0] = ri_val_i32(1);
        return 0;
    }
    if (want > max) return 0;
    for (uint64_t cut = 1; cut <= 4; cut++) {
        uint64_t over = old + old / (5 * cut);
        if (over > want + 100663296) over = want + 100663296;
        uint64_t size = (want > over ? want : over) + 65535;
        size -= size % 65536;
        if (size > max) size = max;
        if (ri_memory_grow(mem, (uint32_t)((size - old) / 65536)) >= 0) {
            results[0] = ri_val_i32(1);
            return 0;
        }
    }
    return 0;
}

/* MicroPython's random seed: the sandbox's seeded PRNG (in every snapshot). */
static EMSC_HANDLER(random_u32) {
    (void)args;
    results[0] = ri_val_i32((int32_t)c->w->services.random32(c->w->services.ctx));
    return 0;
}

/* ---- the table -------------------------------------------------------------------------- */

/* Types: parameters, '>', results; i i32, I i64, d f64. */
static const struct {
    const char *name;
    const char *type;
    emsc_fn fn;
} hosts[] = {
    {"abort", ">", emsc_abort},
    {"_abort_js", ">", emsc_abort},
    {"exit", "i>", emsc_exit},
    {"system", "i>i", emsc_system},
    {"emscripten_resize_heap", "i>i", emsc_resize_heap},
    {"mp_js_random_u32", ">i", emsc_random_u32},
    {"emscripten_date_now", ">d", emsc_date_now},
    {"_emscripten_get_now_is_monotonic", ">i", emsc_now_is_monotonic},
    {"mp_js_ticks_ms", ">i", emsc_ticks_ms},
    {"mp_js_time_ms", ">d", emsc_time_ms},
    {"_gmtime_js", "Ii>", emsc_gmtime},
    {"_localtime_js", "Ii>", emsc_localtime},
    {"_mktime_js", "i>I", emsc_mktime},
    {"_tzset_js", "iii>", emsc_tzset},
    {"strftime", "iiii>i", emsc_strftime},
    {"__syscall_openat", "iiii>i", emsc_openat},
    {"__syscall_fcntl64", "iii>i", emsc_fcntl64},
    {"__syscall_ioctl", "iii>i", emsc_ioctl},
    {"__syscall_dup3", "iii>i", emsc_dup3},
    {"__syscall_unlinkat", "iii>i", emsc_unlinkat},
    {"__syscall_rmdir", "i>i", emsc_rmdir},
    {"__syscall_renameat", "iiii>i", emsc_renameat},
    {"__syscall_readlinkat", "iiii>i", emsc_readlinkat},
    {"__syscall_chdir", "i>i", emsc_chdir},
    {"__syscall_getcwd", "ii>i", emsc_getcwd},
    {"__syscall_mkdirat", "iii>i", emsc_mkdirat},
    {"__syscall_poll", "iii>i", emsc_poll},
    {"__syscall_getdents64", "iii>i", emsc_getdents64},
    {"__syscall_fstat64", "ii>i", emsc_fstat64},
    {"__syscall_stat64", "ii>i", emsc_stat64},
    {"__syscall_newfstatat", "iiii>i", emsc_newfstatat},
    {"__syscall_lstat64", "ii>i", emsc_lstat64},
    {"__syscall_statfs64", "iii>i", emsc_statfs64},
    {"host_call", "iiiii>i", emsc_qjs_host_call},
    {"host_interrupt", ">i", emsc_qjs_host_interrupt},
    {"host_promise_rejection", "iii>", emsc_qjs_host_promise_rejection},
    {"host_module_normalize", "ii>i", emsc_qjs_host_module},
    {"host_module_load", "ii>i", emsc_qjs_host_module},
    {"host_get_timezone_offset", "ii>i", emsc_qjs_host_timezone_offset},
};
#define NHOSTS ((uint32_t)(sizeof hosts / sizeof hosts[0]))

/* MicroPython's JavaScript proxies (its `js` module, promises): there is no JavaScript
 * here. Admitted so that the module loads; a call fails with a clear message. */
static const char *const stubs[] = {
    "proxy_convert_mp_to_js_then_js_to_mp_obj_jsside", "proxy_convert_mp_to_js_then_js_to_js_then_js_to_mp_obj_jsside",
    "js_get_proxy_js_ref_info", "call0_kwarg", "calln_kwarg", "call0", "call1", "call2", "calln", "lookup_attr",
    "store_attr", "js_subscr_load", "js_subscr_store", "has_attr", "js_get_iter", "proxy_js_free_obj",
    "js_reflect_construct", "js_iter_next", "js_check_existing", "js_get_error_info", "js_then_resolve",
    "create_promise", "js_then_continue", "js_then_reject",
};
#define NSTUBS ((uint32_t)(sizeof stubs / sizeof stubs[0]))

static bool name_is(const char *name, size_t len, const char *literal) {
    return strlen(literal) == len && memcmp(name, literal, len) == 0;
}

static char type_char(ri_valtype t) {
    switch (t) {
    case RI_I32: return 'i';
    case RI_I64: return 'j';
    case RI_F32: return 'f';
    case RI_F64: return 'd';
    default: return '?';
    }
}

/* t as the table writes types (I for i64). */
static void type_text(const ri_functype *t, char *out, size_t cap) {
    size_t n = 0;
    for (uint32_t i = 0; i < t->nparams && n + 2 < cap; i++) out[n++] = t->params[i] == RI_I64 ? 'I' : type_char(t->params[i]);
    if (n + 1 < cap) out[n++] = '>';
    for (uint32_t i = 0; i < t->nresults && n + 2 < cap; i++) out[n++] = t->results[i] == RI_I64 ? 'I' : type_char(t->results[i]);
    out[n] = 0;
}

/* invoke_<sig>: sig's first letter the result (v none), the rest the arguments after the
 * table index, as Emscripten names them (i i32, j i64, f f32, d f64). */
static bool invoke_type_ok(const char *sig, size_t len, const ri_functype *t) {
    if (len < 1 || t->nparams != len || t->params[0] != RI_I32) return false;
    if (sig[0] == 'v' ? t->nresults != 0 : (t->nresults != 1 || type_char(t->results[0]) != sig[0])) return false;
    for (size_t i = 1; i < len; i++)
        if (type_char(t->params[i]) != sig[i]) return false;
    return true;
}

bool ri_emsc_lookup(const char *name, size_t len, const ri_functype *t, ri_emsc_kind *kind, uint32_t *index,
                    char *why, size_t cap) {
    char got[64];
    type_text(t, got, sizeof got);
    if (len > 7 && memcmp(name, "invoke_", 7) == 0) {
        if (!invoke_type_ok(name + 7, len - 7, t)) {
            snprintf(why, cap, "its type %s is not the one its name spells (Emscripten's invoke_<result><arguments>)", got);
            return false;
        }
        *kind = RI_EMSC_INVOKE;
        *index = 0;
        return true;
    }
    if (name_is(name, len, "_emscripten_throw_longjmp")) {
        if (t->nparams || t->nresults) {
            snprintf(why, cap, "its type is %s, not >", got);
            return false;
        }
        *kind = RI_EMSC_THROW;
        *index = 0;
        return true;
    }
    for (uint32_t i = 0; i < NHOSTS; i++) {
        if (!name_is(name, len, hosts[i].name)) continue;
        if (strcmp(got, hosts[i].type) != 0) {
            snprintf(why, cap, "its type is %s, the profile's %s (parameters>results; i i32, I i64, d f64)", got,
                     hosts[i].type);
            return false;
        }
        *kind = RI_EMSC_HOST;
        *index = i;
        return true;
    }
    for (uint32_t i = 0; i < NSTUBS; i++) {
        if (name_is(name, len, stubs[i])) {
            *kind = RI_EMSC_STUB;
            *index = NHOSTS + i;
            return true;
        }
    }
    snprintf(why, cap, "it is not in the Emscripten profile");
    return false;
}

int ri_emsc_call(ri_wasi *w, uint32_t index, ri_host_call *call, const ri_val *args, ri_val *results,
                 ri_wasi_outcome *outcome) {
    *outcome = RI_WASI_DONE;
    if (index >= NHOSTS) {
        const char *name = index - NHOSTS < NSTUBS ? stubs[index - NHOSTS] : "?";
        return ri_host_fail(call, "env.%s is a JavaScript function of the interpreter's web build; there is no JavaScript in this sandbox",
                            name);
    }
    emsc_ctx c = {w, call, wasi_mem_of(call), outcome};
    return hosts[index].fn(&c, args, results);
}

const char *ri_emsc_name(uint32_t index) {
    if (index < NHOSTS) return hosts[index].name;
    return index - NHOSTS < NSTUBS ? stubs[index - NHOSTS] : "?";
}

const char *emsc_cstring(const wasi_mem *m, uint32_t ptr, uint32_t max, uint32_t *len) {
    if (!m->data || ptr >= m->size) return NULL;
    uint64_t avail = m->size - ptr;
    if (avail > (uint64_t)max + 1) avail = (uint64_t)max + 1;
    const char *s = (const char *)m->data + ptr;
    const char *nul = memchr(s, 0, (size_t)avail);
    if (!nul) return NULL;
    *len = (uint32_t)(nul - s);
    return s;
}
