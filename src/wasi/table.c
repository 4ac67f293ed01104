/*
 * The wasi_snapshot_preview1 functions (legacy/preview1/witx/wasi_snapshot_preview1.witx),
 * in the witx's order, with their core WebAssembly signatures: every pointer, size, fd and
 * flag set is an i32, every 64-bit quantity (timestamps, offsets, rights, cookies) an i64;
 * every function returns its errno as an i32 except proc_exit, which returns nothing.
 * Import validation admits exactly these names and types; the dispatcher maps a handler's
 * errno or outcome to the call's result.
 */
#include <string.h>

#include "wasi_internal.h"

typedef struct wasi_entry {
    const char *name;
    const char *params; /* 'i': i32, 'I': i64 */
    wasi_handler fn;
} wasi_entry;

#define E(name, params) {#name, params, wasi_##name}
static const wasi_entry entries[] = {
    E(args_get, "ii"),
    E(args_sizes_get, "ii"),
    E(environ_get, "ii"),
    E(environ_sizes_get, "ii"),
    E(clock_res_get, "ii"),
    E(clock_time_get, "iIi"),
    E(fd_advise, "iIIi"),
    E(fd_allocate, "iII"),
    E(fd_close, "i"),
    E(fd_datasync, "i"),
    E(fd_fdstat_get, "ii"),
    E(fd_fdstat_set_flags, "ii"),
    E(fd_fdstat_set_rights, "iII"),
    E(fd_filestat_get, "ii"),
    E(fd_filestat_set_size, "iI"),
    E(fd_filestat_set_times, "iIIi"),
    E(fd_pread, "iiiIi"),
    E(fd_prestat_get, "ii"),
    E(fd_prestat_dir_name, "iii"),
    E(fd_pwrite, "iiiIi"),
    E(fd_read, "iiii"),
    E(fd_readdir, "iiiIi"),
    E(fd_renumber, "ii"),
    E(fd_seek, "iIii"),
    E(fd_sync, "i"),
    E(fd_tell, "ii"),
    E(fd_write, "iiii"),
    E(path_create_directory, "iii"),
    E(path_filestat_get, "iiiii"),
    E(path_filestat_set_times, "iiiiIIi"),
    E(path_link, "iiiiiii"),
    E(path_open, "iiiiiIIii"),
    E(path_readlink, "iiiiii"),
    E(path_remove_directory, "iii"),
    E(path_rename, "iiiiii"),
    E(path_symlink, "iiiii"),
    E(path_unlink_file, "iii"),
    E(poll_oneoff, "iiii"),
    E(proc_exit, "i"),
    E(proc_raise, "i"),
    E(sched_yield, ""),
    E(random_get, "ii"),
    E(sock_accept, "iii"),
    E(sock_recv, "iiiiii"),
    E(sock_send, "iiiii"),
    E(sock_shutdown, "ii"),
};
#undef E
#define NENTRIES (sizeof entries / sizeof entries[0])
#define PROC_EXIT_INDEX 38u
_Static_assert(NENTRIES == 46, "wasi_snapshot_preview1 has 46 functions");

/* The parameter type lists, built from the strings once per call of the accessor (the
 * longest list has 9 entries): static tables of every shape, so no state is mutable. */
static const ri_valtype t_i32[9] = {RI_I32, RI_I32, RI_I32, RI_I32, RI_I32, RI_I32, RI_I32, RI_I32, RI_I32};
static const ri_valtype result_i32[1] = {RI_I32};

/* Each signature as a constant array (generated from the strings above by hand). */
static const ri_valtype p_iIi[] = {RI_I32, RI_I64, RI_I32};
static const ri_valtype p_iIIi[] = {RI_I32, RI_I64, RI_I64, RI_I32};
static const ri_valtype p_iII[] = {RI_I32, RI_I64, RI_I64};
static const ri_valtype p_iI[] = {RI_I32, RI_I64};
static const ri_valtype p_iiiIi[] = {RI_I32, RI_I32, RI_I32, RI_I64, RI_I32};
static const ri_valtype p_iIii[] = {RI_I32, RI_I64, RI_I32, RI_I32};
static const ri_valtype p_iiiiIIi[] = {RI_I32, RI_I32, RI_I32, RI_I32, RI_I64, RI_I64, RI_I32};
static const ri_valtype p_iiiiiIIii[] = {RI_I32, RI_I32, RI_I32, RI_I32, RI_I32, RI_I64, RI_I64, RI_I32, RI_I32};

static const ri_valtype *params_of(const char *s) {
    static const struct {
        const char *shape;
        const ri_valtype *types;
    } shapes[] = {{"iIi", p_iIi}, {"iIIi", p_iIIi}, {"iII", p_iII}, {"iI", p_iI}, {"iiiIi", p_iiiIi},
                  {"iIii", p_iIii}, {"iiiiIIi", p_iiiiIIi}, {"iiiiiIIii", p_iiiiiIIii}};
    if (!strchr(s, 'I')) return t_i32;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (strcmp(shapes[i].shape, s) == 0) return shapes[i].types;
    return NULL; /* unreachable: every shape with an i64 is listed (test_wasi checks all 46) */
}

uint32_t ri_wasi_function_count(void) { return (uint32_t)NENTRIES; }

bool ri_wasi_lookup(const char *name, size_t len, uint32_t *index) {
    for (uint32_t i = 0; i < NENTRIES; i++) {
        if (strlen(entries[i].name) == len && memcmp(entries[i].name, name, len) == 0) {
            *index = i;
            return true;
        }
    }
    return false;
}

const char *ri_wasi_function_name(uint32_t index) { return index < NENTRIES ? entries[index].name : NULL; }

ri_functype ri_wasi_function_type(uint32_t index) {
    ri_functype t;
    memset(&t, 0, sizeof t);
    if (index >= NENTRIES) return t;
    t.nparams = (uint32_t)strlen(entries[index].params);
    t.params = params_of(entries[index].params);
    t.nresults = index == PROC_EXIT_INDEX ? 0 : 1;
    t.results = index == PROC_EXIT_INDEX ? NULL : result_i32;
    return t;
}

ri_wasi_outcome ri_wasi_call(ri_wasi *w, uint32_t index, ri_host_call *call, const ri_val *args, ri_val *results) {
    wasi_call c = {w, call, wasi_mem_of(call)};
    uint32_t r = index < NENTRIES ? entries[index].fn(&c, args) : WASI_ENOSYS;
    if (r == WASI_R_EXIT) return RI_WASI_EXIT;
    bool pause = r == WASI_R_WAIT || r == WASI_R_YIELD;
    if (index != PROC_EXIT_INDEX) results[0] = ri_val_i32((int32_t)(pause ? 0 : r));
    return pause ? RI_WASI_YIELD : RI_WASI_DONE;
}
