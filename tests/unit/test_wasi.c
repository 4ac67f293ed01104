/*
 * The WASI layer through a sandbox: every function of wasi_snapshot_preview1 is exported by
 * tests/wat/wasi_calls.wat as w_<name>, so each test calls it with exact arguments and
 * reads memory back (peek/poke). Pointer and length checks, descriptors, paths, limits,
 * determinism, proc_exit, stdin waits across resume and across a snapshot file restored
 * into another sandbox (tests/wat/wasi_echo.wat).
 */
#include "sandbox_test_util.h"
#include "workspace/wsfs.h"

#define E_BADF 8
#define E_EXIST 20
#define E_FAULT 21
#define E_INVAL 28
#define E_ISDIR 31
#define E_LOOP 32
#define E_MFILE 33
#define E_NAMETOOLONG 37
#define E_NOENT 44
#define E_NOSPC 51
#define E_NOTSOCK 57
#define E_PERM 63
#define E_SPIPE 70
#define E_NOTCAPABLE 76
#define MEM 65536u /* the fixture's memory: one page */

#define I(x) ri_val_i32((int32_t)(x))
#define L(x) ri_val_i64((int64_t)(x))
#define NV(...) (sizeof((ri_val[]){__VA_ARGS__}) / sizeof(ri_val))
/* w_<name>(args...): the errno it returned. */
#define W(sb, name, ...) wcall(sb, "w_" name, (ri_val[]){__VA_ARGS__}, (uint32_t)NV(__VA_ARGS__))

static int64_t wcall(ri_sandbox *sb, const char *fn, const ri_val *args, uint32_t n) {
    ri_sandbox_result r = ri_sandbox_call(sb, fn, args, n);
    if (!r.ok) print_error("%s: %s\n", fn, r.error.message);
    assert_true(r.ok);
    int64_t v = r.nresults ? (r.results[0].type == RI_I64 ? r.results[0].of.i64 : (int64_t)(uint32_t)r.results[0].of.i32)
                           : 0;
    ri_sandbox_result_free(&r);
    return v;
}
static uint32_t peek32(ri_sandbox *sb, uint32_t at) { return (uint32_t)wcall(sb, "peek32", (ri_val[]){I(at)}, 1); }
static uint64_t peek64(ri_sandbox *sb, uint32_t at) { return (uint64_t)wcall(sb, "peek64", (ri_val[]){I(at)}, 1); }
static uint8_t peek8(ri_sandbox *sb, uint32_t at) { return (uint8_t)wcall(sb, "peek8", (ri_val[]){I(at)}, 1); }
static void poke32(ri_sandbox *sb, uint32_t at, uint32_t v) { wcall(sb, "poke32", (ri_val[]){I(at), I(v)}, 2); }
static uint32_t poke_str(ri_sandbox *sb, uint32_t at, const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) wcall(sb, "poke8", (ri_val[]){I(at + i), I((uint8_t)s[i])}, 2);
    return (uint32_t)n;
}
static void iov(ri_sandbox *sb, uint32_t at, uint32_t buf, uint32_t len) {
    poke32(sb, at, buf);
    poke32(sb, at + 4, len);
}

typedef struct tenv {
    ri_sandboxes *f;
    ri_sandbox *sb;
} tenv;

static ri_sandbox *make_with(ri_sandboxes *f, const char *fixture, const ri_wasi_config *wc) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.enable_wasi = true;
    c.wasi = wc;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    size_t len;
    uint8_t *wasm = read_fixture(fixture, &len);
    if (!ri_sandbox_load(sb, wasm, len, &err)) print_error("load: %s\n", err.message);
    free(wasm);
    return sb;
}

static int setup(void **state) {
    tenv *e = calloc(1, sizeof *e);
    e->f = ri_sandboxes_new();
    e->sb = make_with(e->f, "wasi_calls", NULL);
    *state = e;
    return 0;
}
static int teardown(void **state) {
    tenv *e = *state;
    ri_sandbox_free(e->sb);
    ri_sandboxes_free(e->f);
    free(e);
    return 0;
}

/* Opens path under the preopen with creat, read/write rights: the new descriptor. */
static uint32_t open_file(ri_sandbox *sb, const char *path, uint32_t oflags) {
    uint32_t n = poke_str(sb, 2000, path);
    int64_t e = W(sb, "path_open", I(3), I(1), I(2000), I(n), I(oflags), L(0x1FFFFFFF), L(0), I(0), I(4000));
    assert_int_equal(e, 0);
    return peek32(sb, 4000);
}

/* ---- pointers and lengths --------------------------------------------------------------- */

static void test_efault(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    iov(sb, 100, 1000, 4);
    assert_int_equal(W(sb, "fd_write", I(1), I(MEM - 4), I(1), I(4000)), E_FAULT);          /* iovec array out */
    assert_int_equal(W(sb, "fd_write", I(1), I(100), I(1), I(MEM - 2)), E_FAULT);           /* nwritten out */
    iov(sb, 100, MEM - 2, 4);
    assert_int_equal(W(sb, "fd_write", I(1), I(100), I(1), I(4000)), E_FAULT);              /* a buffer out */
    iov(sb, 100, 0xFFFFFFF0u, 0x20);
    assert_int_equal(W(sb, "fd_write", I(1), I(100), I(1), I(4000)), E_FAULT);              /* wraps in 32 bits */
    assert_int_equal(W(sb, "fd_read", I(0), I(100), I(0x20000000), I(4000)), E_FAULT);      /* huge count */
    assert_int_equal(W(sb, "fd_write", I(1), I(0), I(0xFFFFFFFFu), I(4000)), E_FAULT);
    assert_int_equal(W(sb, "args_sizes_get", I(MEM), I(4000)), E_FAULT);
    assert_int_equal(W(sb, "clock_time_get", I(1), L(0), I(MEM - 7)), E_FAULT);
    assert_int_equal(W(sb, "random_get", I(MEM - 10), I(11)), E_FAULT);
    assert_int_equal(W(sb, "fd_prestat_get", I(3), I(MEM - 1)), E_FAULT);
    assert_int_equal(W(sb, "fd_fdstat_get", I(1), I(MEM - 23)), E_FAULT);
    assert_int_equal(W(sb, "poll_oneoff", I(MEM - 40), I(1000), I(1), I(4000)), E_FAULT);
    assert_int_equal(W(sb, "path_open", I(3), I(0), I(MEM - 1), I(2), I(1), L(0), L(0), I(0), I(4000)), E_FAULT);
    assert_int_equal(W(sb, "path_create_directory", I(3), I(0xFFFFFFFFu), I(1)), E_FAULT);
    /* nothing happened: no output at all */
    size_t len;
    ri_sandbox_wasi_output(sb, RI_WASI_STDOUT, &len);
    assert_int_equal(len, 0);
}

static void test_iovec_sum_overflow(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    /* Two iovecs of 3 GiB each cannot both be in a 64 KiB memory: EFAULT before any sum... */
    iov(sb, 100, 0, MEM);
    iov(sb, 108, 0, MEM);
    /* ...but 65,537 entries of 64 KiB each would sum above 2^32 - 1: their array alone is
     * beyond memory (EFAULT); the sum is checked with 64-bit arithmetic either way. */
    assert_int_equal(W(sb, "fd_write", I(1), I(100), I(65537), I(4000)), E_FAULT);
    uint32_t f = open_file(sb, "big", 1);
    assert_int_equal(W(sb, "fd_write", I(f), I(100), I(2), I(4000)), 0);
    assert_int_equal(peek32(sb, 4000), 2 * MEM);
}

static void test_bad_fds_and_values(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    iov(sb, 100, 1000, 1);
    assert_int_equal(W(sb, "fd_write", I(99), I(100), I(1), I(4000)), E_BADF);
    assert_int_equal(W(sb, "fd_read", I(0xFFFFFFFFu), I(100), I(1), I(4000)), E_BADF);
    assert_int_equal(W(sb, "fd_close", I(42)), E_BADF);
    assert_int_equal(W(sb, "fd_seek", I(7), L(0), I(0), I(4000)), E_BADF);
    assert_int_equal(W(sb, "fd_fdstat_get", I(1000), I(4000)), E_BADF);
    assert_int_equal(W(sb, "fd_renumber", I(1), I(77)), E_BADF);
    assert_int_equal(W(sb, "fd_prestat_get", I(1), I(4000)), E_BADF);
    assert_int_equal(W(sb, "sock_shutdown", I(5), I(1)), E_BADF);
    assert_int_equal(W(sb, "sock_shutdown", I(1), I(1)), E_NOTSOCK);
    assert_int_equal(W(sb, "clock_time_get", I(4), L(0), I(4000)), E_INVAL);
    assert_int_equal(W(sb, "clock_res_get", I(0x80000000u), I(4000)), E_INVAL);
    assert_int_equal(W(sb, "fd_seek", I(1), L(0), I(0), I(4000)), E_SPIPE);
    uint32_t f = open_file(sb, "f", 1);
    assert_int_equal(W(sb, "fd_seek", I(f), L(0), I(3), I(4000)), E_INVAL);    /* whence */
    assert_int_equal(W(sb, "fd_seek", I(f), L(-1), I(0), I(4000)), E_INVAL);   /* before the start */
    assert_int_equal(W(sb, "fd_seek", I(f), L(5), I(0), I(4000)), 0);
    assert_int_equal(peek64(sb, 4000), 5);
    assert_int_equal(W(sb, "fd_advise", I(f), L(0), L(0), I(6)), E_INVAL);
    assert_int_equal(W(sb, "fd_fdstat_set_flags", I(f), I(32)), E_INVAL);
    assert_int_equal(W(sb, "poll_oneoff", I(1000), I(2000), I(0), I(4000)), E_INVAL);
    assert_int_equal(W(sb, "path_open", I(3), I(0), I(2000), I(1), I(16), L(0), L(0), I(0), I(4000)), E_INVAL);
}

/* ---- paths -------------------------------------------------------------------------------- */

static void test_path_escapes(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    uint32_t n = poke_str(sb, 2000, "../etc/passwd");
    assert_int_equal(W(sb, "path_open", I(3), I(1), I(2000), I(n), I(0), L(2), L(0), I(0), I(4000)), E_NOTCAPABLE);
    n = poke_str(sb, 2000, "a/../../x");
    assert_int_equal(W(sb, "path_create_directory", I(3), I(2000), I(n)), E_NOTCAPABLE);
    n = poke_str(sb, 2000, "/etc");
    assert_int_equal(W(sb, "path_filestat_get", I(3), I(1), I(2000), I(n), I(4000)), E_NOTCAPABLE);
    /* an absolute symlink target */
    uint32_t t = poke_str(sb, 3000, "/etc/passwd");
    n = poke_str(sb, 2000, "abs");
    assert_int_equal(W(sb, "path_symlink", I(3000), I(t), I(3), I(2000), I(n)), E_PERM);
    /* a loop: a -> b, b -> a */
    t = poke_str(sb, 3000, "b");
    n = poke_str(sb, 2000, "a");
    assert_int_equal(W(sb, "path_symlink", I(3000), I(t), I(3), I(2000), I(n)), 0);
    t = poke_str(sb, 3000, "a");
    n = poke_str(sb, 2000, "b");
    assert_int_equal(W(sb, "path_symlink", I(3000), I(t), I(3), I(2000), I(n)), 0);
    assert_int_equal(W(sb, "path_open", I(3), I(1), I(2000), I(n), I(0), L(2), L(0), I(0), I(4000)), E_LOOP);
    assert_int_equal(W(sb, "path_filestat_get", I(3), I(1), I(2000), I(n), I(4000)), E_LOOP);
    /* nofollow on a symlink: ELOOP too (O_NOFOLLOW) */
    assert_int_equal(W(sb, "path_open", I(3), I(0), I(2000), I(n), I(2), L(0), L(0), I(0), I(4000)), E_LOOP);
}

static void test_limits(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    char name[300];
    memset(name, 'n', 256);
    name[256] = 0;
    uint32_t n = poke_str(sb, 2000, name);
    assert_int_equal(W(sb, "path_create_directory", I(3), I(2000), I(n)), E_NAMETOOLONG);
    name[255] = 0;
    n = poke_str(sb, 2000, name);
    assert_int_equal(W(sb, "path_create_directory", I(3), I(2000), I(n)), 0);
    /* the quota (256 MiB): a write that would grow a file beyond it */
    uint32_t f = open_file(sb, "q", 1);
    iov(sb, 100, 1000, 1);
    assert_int_equal(W(sb, "fd_pwrite", I(f), I(100), I(1), L(300ull << 20), I(4000)), E_NOSPC);
    /* prestat_dir_name into a buffer too small */
    assert_int_equal(W(sb, "fd_prestat_dir_name", I(3), I(2000), I(0)), E_NAMETOOLONG);
}

/* Regression: a full descriptor table gave ENOMEM (a host condition) instead of EMFILE. */
static void test_emfile(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    uint32_t n = poke_str(sb, 2000, "x");
    int64_t e = 0;
    int opened = 0;
    for (; opened < 2000; opened++) {
        e = W(sb, "path_open", I(3), I(1), I(2000), I(n), I(1), L(2), L(0), I(0), I(4000));
        if (e) break;
    }
    assert_int_equal(e, E_MFILE);
    assert_int_equal(opened, 1024 - 4);
    /* a full table creates nothing */
    n = poke_str(sb, 2000, "y");
    assert_int_equal(W(sb, "path_open", I(3), I(1), I(2000), I(n), I(1), L(2), L(0), I(0), I(4000)), E_MFILE);
    assert_int_equal(W(sb, "path_filestat_get", I(3), I(1), I(2000), I(n), I(4000)), E_NOENT);
}

/* Regression: descriptor 3 was always the workspace, so a program run without a preopen
 * (wasi-testsuite sock_shutdown-invalid_fd) saw ENOTSOCK for fd 3 instead of EBADF. */
static void test_no_preopen(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_wasi_config wc;
    memset(&wc, 0, sizeof wc);
    wc.no_preopen = true;
    ri_sandbox *sb = make_with(f, "wasi_calls", &wc);
    assert_int_equal(W(sb, "sock_shutdown", I(3), I(1)), E_BADF);
    assert_int_equal(W(sb, "fd_prestat_get", I(3), I(4000)), E_BADF);
    assert_non_null(ri_sandbox_wasi_workspace(sb)); /* the embedder still has it */
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void test_files_roundtrip(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    uint32_t f = open_file(sb, "hello.txt", 1);
    uint32_t n = poke_str(sb, 1000, "hi there");
    iov(sb, 100, 1000, n);
    assert_int_equal(W(sb, "fd_write", I(f), I(100), I(1), I(4000)), 0);
    assert_int_equal(peek32(sb, 4000), n);
    assert_int_equal(W(sb, "fd_pwrite", I(f), I(100), I(1), L(20), I(4000)), 0);
    iov(sb, 100, 5000, 64);
    assert_int_equal(W(sb, "fd_pread", I(f), I(100), I(1), L(0), I(4000)), 0);
    assert_int_equal(peek32(sb, 4000), 28);
    assert_int_equal(peek8(sb, 5000), 'h');
    assert_int_equal(peek8(sb, 5010), 0); /* the hole */
    assert_int_equal(W(sb, "fd_close", I(f)), 0);
    assert_int_equal(W(sb, "fd_close", I(f)), E_BADF);
    /* a directory opened for writing */
    n = poke_str(sb, 2000, "d");
    assert_int_equal(W(sb, "path_create_directory", I(3), I(2000), I(n)), 0);
    assert_int_equal(W(sb, "path_create_directory", I(3), I(2000), I(n)), E_EXIST);
    assert_int_equal(W(sb, "path_open", I(3), I(1), I(2000), I(n), I(0), L(1 << 6), L(0), I(0), I(4000)), E_ISDIR);
    /* filestat of the file: size 28, regular file (type at byte 16) */
    n = poke_str(sb, 2000, "hello.txt");
    assert_int_equal(W(sb, "path_filestat_get", I(3), I(1), I(2000), I(n), I(4000)), 0);
    assert_int_equal(peek8(sb, 4016), 4);
    assert_int_equal(peek64(sb, 4032), 28);
}

/* ---- determinism --------------------------------------------------------------------------- */

static void readings(ri_sandbox *sb, uint64_t out[8]) {
    for (int i = 0; i < 3; i++) {
        assert_int_equal(W(sb, "clock_time_get", I(i), L(0), I(4000)), 0);
        out[i] = peek64(sb, 4000);
    }
    assert_int_equal(W(sb, "random_get", I(4000), I(16)), 0);
    out[3] = peek64(sb, 4000);
    out[4] = peek64(sb, 4008);
    /* a clock subscription: the virtual clock jumps to its deadline */
    poke32(sb, 1000, 1);
    poke32(sb, 1004, 0);
    wcall(sb, "poke8", (ri_val[]){I(1008), I(0)}, 2);
    poke32(sb, 1016, 1);
    poke32(sb, 1024, 5000000); /* timeout 5 ms (low half) */
    poke32(sb, 1028, 0);
    /* Regression: relative deadlines were recomputed after the advance: never due, 0 events. */
    assert_int_equal(W(sb, "poll_oneoff", I(1000), I(2000), I(1), I(4000)), 0);
    assert_int_equal(peek32(sb, 4000), 1);
    assert_int_equal(peek64(sb, 2000), 1); /* the event's userdata */
    assert_int_equal(W(sb, "clock_time_get", I(1), L(0), I(4000)), 0);
    out[5] = peek64(sb, 4000);
    iov(sb, 100, 2000, poke_str(sb, 2000, "out"));
    assert_int_equal(W(sb, "fd_write", I(1), I(100), I(1), I(4000)), 0);
    out[6] = out[7] = 0;
}

static void test_determinism(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *a = make_with(f, "wasi_calls", NULL), *b = make_with(f, "wasi_calls", NULL);
    uint64_t ra[8], rb[8];
    readings(a, ra);
    readings(b, rb);
    assert_memory_equal(ra, rb, sizeof ra);
    assert_int_equal(ra[0], (uint64_t)TS * 1000000u + 1000); /* realtime = event time + monotonic */
    assert_int_equal(ra[1], 2000);                           /* the step: 1 us per read */
    assert_int_equal(ra[2], 3000);
    assert_true(ra[5] >= 5000000u);
    size_t la, lb;
    const uint8_t *oa = ri_sandbox_wasi_output(a, RI_WASI_STDOUT, &la), *ob = ri_sandbox_wasi_output(b, RI_WASI_STDOUT, &lb);
    assert_int_equal(la, 3);
    assert_int_equal(lb, 3);
    assert_memory_equal(oa, ob, 3);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
    ri_sandboxes_free(f);
}

static void test_proc_exit(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_result r = ri_sandbox_call(sb, "w_proc_exit", (ri_val[]){I(42)}, 1);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_EXIT);
    ri_sandbox_result_free(&r);
}

/* ---- stdin: pause, input, resume; and across a snapshot file ------------------------------------ */

static void test_stdin_pause_resume(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = make_with(f, "wasi_echo", NULL);
    assert_false(ri_sandbox_wasi_waiting(NULL));
    assert_false(ri_sandbox_wasi_waiting(sb));
    ri_sandbox_result r = ri_sandbox_wasi_run(sb);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    assert_true(ri_sandbox_wasi_waiting(sb)); /* paused in the read, not by an interrupt */
    wasi_stream_is(sb, RI_WASI_STDOUT, "ready\n");
    r = ri_sandbox_resume(sb, 0); /* still no input: pauses again */
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    assert_true(ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)"abc", 3));
    r = ri_sandbox_resume(sb, 0);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    wasi_stream_is(sb, RI_WASI_STDOUT, "ready\ngot:abc");
    ri_sandbox_wasi_stdin_close(sb);
    r = ri_sandbox_resume(sb, 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 7);
    ri_sandbox_result_free(&r);
    assert_false(ri_sandbox_wasi_waiting(sb));
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void test_snapshot_file_restore(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    /* uninterrupted */
    ri_sandbox *ref = make_with(f, "wasi_echo", NULL);
    ri_sandbox_wasi_stdin_push(ref, (const uint8_t *)"xyz", 3);
    ri_sandbox_wasi_stdin_close(ref);
    ri_sandbox_result r = ri_sandbox_wasi_run(ref);
    assert_int_equal(r.exit_code, 7);
    ri_sandbox_result_free(&r);
    wasi_stream_is(ref, RI_WASI_STDOUT, "ready\ngot:xyz");

    /* paused on stdin, snapshotted to bytes (module included) */
    ri_sandbox *sb = make_with(f, "wasi_echo", NULL);
    r = ri_sandbox_wasi_run(sb);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    ri_snapshot_options o = {RI_SNAPSHOT_V2, true, false};
    uint8_t *img;
    size_t len;
    ri_sandbox_error err;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &img, &len, &err));
    ri_snap_image view;
    assert_true(ri_snapshot_open(img, len, &view, &err));
    assert_true(view.has_wasi);
    assert_true(view.has_frames);
    ri_snap_image_free(&view);

    /* into a fresh, created sandbox (not loaded) */
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.enable_wasi = true;
    ri_sandbox *fresh = ri_sandbox_create(f, &c, &err);
    if (!ri_sandbox_restore(fresh, img, len, &err)) print_error("restore: %s\n", err.message);
    assert_int_equal(ri_sandbox_status_of(fresh), RI_SANDBOX_SUSPENDED);
    wsfs *fs = ri_sandbox_wasi_workspace(fresh);
    uint64_t ino;
    assert_int_equal(wsfs_lookup(fs, WSFS_ROOT_INO, "pre.txt", 7, true, &ino), 0);
    char buf[16];
    size_t n;
    assert_int_equal(wsfs_pread(fs, ino, buf, sizeof buf, 0, &n), 0);
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "saved", 5);
    ri_sandbox_wasi_stdin_push(fresh, (const uint8_t *)"xyz", 3);
    ri_sandbox_wasi_stdin_close(fresh);
    r = ri_sandbox_resume(fresh, 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 7);
    ri_sandbox_result_free(&r);
    wasi_stream_is(fresh, RI_WASI_STDOUT, "got:xyz"); /* "ready\n" went out before the snapshot, from sb */
    wasi_stream_is(sb, RI_WASI_STDOUT, "ready\n");

    /* a WASI image into a sandbox without WASI: refused, nothing changes */
    c.enable_wasi = false;
    ri_sandbox *plain = ri_sandbox_create(f, &c, &err);
    assert_false(ri_sandbox_restore(plain, img, len, &err));
    assert_non_null(strstr(err.message, "enable_wasi"));
    assert_int_equal(ri_sandbox_status_of(plain), RI_SANDBOX_CREATED);

    /* a damaged WASI section (checksum recomputed): refused before anything changes */
    ri_sandbox_free(plain);
    free(img);
    ri_sandbox_free(fresh);
    ri_sandbox_free(sb);
    ri_sandbox_free(ref);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_efault, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iovec_sum_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_fds_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emfile, setup, teardown),
        cmocka_unit_test(test_no_preopen),
        cmocka_unit_test_setup_teardown(test_files_roundtrip, setup, teardown),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test_setup_teardown(test_proc_exit, setup, teardown),
        cmocka_unit_test(test_stdin_pause_resume),
        cmocka_unit_test(test_snapshot_file_restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
