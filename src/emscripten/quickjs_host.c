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
 *   op 5 files: sub, n, the path's n UTF-16 units two to an int, then the sub-operation's
 *        ints; the workspace (from its root: the process's working directory is /):
 *          1 write, 2 append: nbytes, the bytes four to an int -> 0
 *          3 read: offset -> the next bytes (up to 3, count << 24), count 0 at the end
 *          4 exists -> 1 or 0        5 mkdir: recursive -> 0      6 unlink, 7 rmdir -> 0
 *          8 list: offset -> the next bytes (up to 3) of the names, each ended by '\n'
 *          9 type -> 3 directory, 4 file, 7 symbolic link       10 size -> bytes
 *        a failure gives -errno (WASI's numbers).
 * The glue must hand back a malloc'd JSValue the trampoline frees; the host cannot call
 * malloc, so it returns the slot argument's own block (holding the result int) and clears
 * its entry in argv, so that the trampoline's cleanup of argv frees it only once (its
 * cleanup of the NULL entry reads the zero JSValue at address 0, an int, and frees NULL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emscripten/emsc_internal.h"
#include "util/buf.h"
#include "util/le.h"
#include "workspace/wsfs.h"

enum { OP_WRITE = 1, OP_READ = 2, OP_EXIT = 3, OP_RANDOM = 4, OP_FILES = 5 };
enum { FS_WRITE = 1, FS_APPEND, FS_READ, FS_EXISTS, FS_MKDIR, FS_UNLINK, FS_RMDIR, FS_LIST, FS_TYPE, FS_SIZE };
#define PATH_MAX_BYTES 4096u
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

/* n UTF-16 units, two to an int from argv[first] on (lone surrogates as U+FFFD), as UTF-8
 * into buf; false if an argument is not an int or the text does not fit. */
static bool units_utf8(emsc_ctx *c, uint32_t argv, uint32_t first, int32_t n, uint8_t *buf, size_t cap, size_t *len) {
    *len = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t w, w2 = 0;
        if (!arg_int(c, argv, first + (uint32_t)i / 2, &w, NULL)) return false;
        uint32_t u = i & 1 ? (uint32_t)w >> 16 : (uint32_t)w & 0xffff, cp = u;
        if (u >= 0xd800 && u < 0xdc00 && i + 1 < n) { /* a pair: peek at the next unit */
            if (!arg_int(c, argv, first + (uint32_t)(i + 1) / 2, &w2, NULL)) return false;
            uint32_t lo = (i + 1) & 1 ? (uint32_t)w2 >> 16 : (uint32_t)w2 & 0xffff;
            if (lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                i++;
            }
        }
        if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;
        if (cap - *len < 4) return false;
        uint8_t *o = buf + *len;
        if (cp < 0x80) o[0] = (uint8_t)cp, *len += 1;
        else if (cp < 0x800) o[0] = (uint8_t)(0xc0 | cp >> 6), o[1] = (uint8_t)(0x80 | (cp & 0x3f)), *len += 2;
        else if (cp < 0x10000)
            o[0] = (uint8_t)(0xe0 | cp >> 12), o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), o[2] = (uint8_t)(0x80 | (cp & 0x3f)),
            *len += 3;
        else
            o[0] = (uint8_t)(0xf0 | cp >> 18), o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f)),
            o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), o[3] = (uint8_t)(0x80 | (cp & 0x3f)), *len += 4;
    }
    return true;
}

/* UTF-16 units (lone surrogates as U+FFFD) to UTF-8, written to fd 1 or 2. */
static int do_write(emsc_ctx *c, uint32_t argv, uint32_t argc) {
    int32_t fd, n;
    if (argc < 4 || !arg_int(c, argv, 1, &fd, NULL) || !arg_int(c, argv, 2, &n, NULL) || (fd != 1 && fd != 2) || n < 0 ||
        (uint32_t)n > 2 * (argc - 4))
        return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed write");
    /* the runtime sends at most 8000 units a call: 4 bytes each at most */
    uint8_t buf[4 * 8192];
    size_t len;
    if (!units_utf8(c, argv, 3, n, buf, sizeof buf, &len)) return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed write");
    wasi_stdio_write(c->w, fd == 1 ? RI_WASI_STDOUT : RI_WASI_STDERR, buf, len);
    return 0;
}

/* Up to 3 bytes of data from offset, packed as a read of stdin is (count << 24). */
static int32_t three_bytes(const uint8_t *data, size_t size, uint64_t offset) {
    if (offset >= size) return 0;
    size_t n = size - offset < 3 ? (size_t)(size - offset) : 3;
    uint32_t v = (uint32_t)n << 24;
    for (size_t k = 0; k < n; k++) v |= (uint32_t)data[offset + k] << (8 * k);
    return (int32_t)v;
}

/* mkdir -p: every missing directory on the way. */
static wsfs_errno mkdir_parents(wsfs *fs, const char *path, size_t len) {
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/') continue;
        wsfs_errno e = wsfs_mkdir(fs, WSFS_ROOT_INO, path, i);
        if (e && e != WASI_EEXIST) return e;
    }
    return 0;
}

/* The names in a directory, each ended by '\n' (readdir's order: by bytes). */
static wsfs_errno list_names(const wsfs *fs, uint64_t dir, uint8_t **out, size_t *len) {
    ri_buf b = {0};
    uint64_t cookie = 0;
    for (;;) {
        wsfs_dirent ents[64];
        size_t n = 0;
        wsfs_errno e = wsfs_readdir(fs, dir, cookie, ents, 64, &n);
        if (e) {
            ri_buf_free(&b);
            return e;
        }
        for (size_t k = 0; k < n; k++) {
            cookie = ents[k].next;
            bool dot = (ents[k].namelen == 1 && ents[k].name[0] == '.') ||
                       (ents[k].namelen == 2 && ents[k].name[0] == '.' && ents[k].name[1] == '.');
            if (dot) continue;
            ri_buf_put(&b, ents[k].name, ents[k].namelen);
            ri_buf_u8(&b, '\n');
        }
        if (n < 64) break;
    }
    if (b.failed) {
        ri_buf_free(&b);
        return WASI_ENOMEM;
    }
    *out = b.data;
    *len = b.len;
    return 0;
}

/* op 5: the workspace's files from the program's runtime. *value: the result or -errno. */
static int do_files(emsc_ctx *c, uint32_t argv, uint32_t argc, int32_t *value) {
    int32_t sub, n, x = 0;
    wsfs *fs = c->w->fs;
    if (argc < 4 || !arg_int(c, argv, 1, &sub, NULL) || !arg_int(c, argv, 2, &n, NULL) || n < 0 ||
        (uint32_t)n > 2 * (argc - 4))
        return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed file operation");
    uint32_t after = 3 + ((uint32_t)n + 1) / 2; /* the first int after the path */
    char path[PATH_MAX_BYTES + 4];
    size_t plen;
    if (!units_utf8(c, argv, 3, n, (uint8_t *)path, PATH_MAX_BYTES, &plen)) {
        *value = -(int32_t)WASI_ENAMETOOLONG;
        return 0;
    }
    if (!fs) {
        *value = -(int32_t)WASI_ENOTCAPABLE;
        return 0;
    }
    if (after < argc - 1 && !arg_int(c, argv, after, &x, NULL))
        return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed file operation");
    wsfs_errno e = 0;
    uint64_t ino;
    wsfs_filestat st;
    *value = 0;
    switch (sub) {
    case FS_WRITE:
    case FS_APPEND: {
        if (x < 0 || (uint64_t)after + 1 + ((uint64_t)x + 3) / 4 > argc - 1)
            return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed file write");
        e = wsfs_open(fs, WSFS_ROOT_INO, path, plen, WSFS_O_CREAT | (sub == FS_WRITE ? WSFS_O_TRUNC : 0), &ino);
        if (!e) e = wsfs_stat(fs, ino, &st);
        uint8_t *bytes = e ? NULL : malloc((size_t)x + 4);
        if (!e && !bytes) e = WASI_ENOMEM;
        for (int32_t k = 0; !e && k < x; k += 4) {
            int32_t w;
            if (!arg_int(c, argv, after + 1 + (uint32_t)k / 4, &w, NULL)) {
                free(bytes);
                return ri_host_fail(c->call, "ri's JavaScript runtime: a malformed file write");
            }
            ri_le_put32(bytes + k, (uint32_t)w);
        }
        size_t done = 0;
        if (!e && x) e = wsfs_pwrite(fs, ino, bytes, (size_t)x, sub == FS_APPEND ? st.size : 0, &done);
        free(bytes);
        break;
    }
    case FS_READ: {
        uint8_t bytes[3];
        size_t got = 0;
        e = wsfs_open(fs, WSFS_ROOT_INO, path, plen, 0, &ino);
        if (!e && x < 0) e = WASI_EINVAL;
        if (!e) e = wsfs_pread(fs, ino, bytes, sizeof bytes, (uint64_t)x, &got);
        if (!e) *value = three_bytes(bytes, got, 0);
        break;
    }
    case FS_EXISTS: *value = wsfs_lookup(fs, WSFS_ROOT_INO, path, plen, true, &ino) == 0; break;
    case FS_MKDIR: e = x ? mkdir_parents(fs, path, plen) : wsfs_mkdir(fs, WSFS_ROOT_INO, path, plen); break;
    case FS_UNLINK: e = wsfs_unlink(fs, WSFS_ROOT_INO, path, plen); break;
    case FS_RMDIR: e = wsfs_rmdir(fs, WSFS_ROOT_INO, path, plen); break;
    case FS_LIST: {
        uint8_t *names = NULL;
        size_t len = 0;
        e = wsfs_lookup(fs, WSFS_ROOT_INO, path, plen, true, &ino);
        if (!e) e = list_names(fs, ino, &names, &len);
        if (!e) *value = x < 0 ? 0 : three_bytes(names, len, (uint64_t)x);
        free(names);
        break;
    }
    case FS_TYPE:
    case FS_SIZE:
        e = wsfs_stat_path(fs, WSFS_ROOT_INO, path, plen, true, &st);
        if (!e && sub == FS_SIZE && st.size > INT32_MAX) e = WASI_EFBIG;
        if (!e) *value = sub == FS_TYPE ? (int32_t)st.filetype : (int32_t)st.size;
        break;
    default: return ri_host_fail(c->call, "ri's JavaScript runtime: unknown file operation %d", sub);
    }
    if (e) *value = -(int32_t)e;
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
    case OP_FILES: failed = do_files(c, argv, argc, &value); break;
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
