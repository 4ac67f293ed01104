/*
 * The host's file API (ri/files.h): put/get/stat/list/mkdir/remove/rename on a WASI
 * sandbox's workspace, its errors (kinds and paths), hostile paths (relative, "." and "..",
 * too long, symlinks that try to leave the workspace), the quota, a refused call while a
 * call runs, a paused call, snapshots carrying what was put, and a C program reading and
 * writing beside the host (skipped without clang/wasi-libc).
 */
#include "sandbox_test_util.h"

#include "ri/files.h"
#include "workspace/wsfs.h"
#include "workspace/wsfs_internal.h"

static ri_sandbox *make(ri_sandboxes *f, bool wasi) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.enable_wasi = wasi;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    return sb;
}

typedef struct tenv {
    ri_sandboxes *f;
    ri_sandbox *sb;
} tenv;

static int setup(void **state) {
    tenv *e = calloc(1, sizeof *e);
    e->f = ri_sandboxes_new();
    e->sb = make(e->f, true);
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

static void put(ri_sandbox *sb, const char *path, const char *text, uint32_t flags) {
    ri_sandbox_error err;
    if (!ri_sandbox_file_put(sb, path, (const uint8_t *)text, strlen(text), flags, &err))
        print_error("put %s: %s\n", path, err.message), fail();
}

static void content_is(ri_sandbox *sb, const char *path, const char *want) {
    ri_sandbox_error err;
    uint8_t *data = NULL;
    size_t len = 0;
    if (!ri_sandbox_file_get(sb, path, &data, &len, &err)) print_error("get %s: %s\n", path, err.message);
    assert_int_equal(len, strlen(want));
    if (len) assert_memory_equal(data, want, len);
    ri_free(data);
}

/* The call fails with kind, and its message names the path. */
#define FAILS(kind, call)                                                                                              \
    do {                                                                                                               \
        ri_sandbox_error err_;                                                                                         \
        memset(&err_, 0, sizeof err_);                                                                                 \
        ri_sandbox_error *err = &err_;                                                                                 \
        bool ok_ = (call);                                                                                             \
        if (ok_ || ri_file_error_kind(err) != (kind))                                                                  \
            print_error("%s: ok %d, kind %s (%s), want %s\n", #call, ok_, err_.trap_kind, err_.message,                \
                        ri_file_errkind_name(kind));                                                                   \
        assert_false(ok_);                                                                                             \
        assert_int_equal(ri_file_error_kind(err), (kind));                                                             \
        assert_int_equal(err_.code, RI_SANDBOX_FILE_ERROR);                                                            \
        assert_true(err_.message[0] != '\0');                                                                          \
    } while (0)

static void test_put_get_stat(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_error err;
    put(sb, "/hello.txt", "hello", 0);
    content_is(sb, "/hello.txt", "hello");
    ri_file_stat st;
    assert_true(ri_sandbox_file_stat(sb, "/hello.txt", &st, &err));
    assert_int_equal(st.type, RI_FILE_TYPE_REGULAR);
    assert_int_equal(st.size, 5);
    assert_int_equal(st.nlink, 1);
    /* Replaced: the new bytes, no temporary left behind, a new inode. */
    uint64_t old_ino = st.ino;
    put(sb, "/hello.txt", "bye", 0);
    content_is(sb, "/hello.txt", "bye");
    assert_true(ri_sandbox_file_stat(sb, "/hello.txt", &st, &err));
    assert_true(st.ino != old_ino);
    ri_file_entry *list;
    size_t n;
    assert_true(ri_sandbox_file_list(sb, "/", &list, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(list[0].name, "hello.txt");
    ri_file_list_free(list, n);
    /* Empty files, exclusive puts, parents. */
    put(sb, "/empty", "", 0);
    content_is(sb, "/empty", "");
    FAILS(RI_FILE_EXISTS, ri_sandbox_file_put(sb, "/empty", (const uint8_t *)"x", 1, RI_FILE_EXCLUSIVE, err));
    content_is(sb, "/empty", "");
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_put(sb, "/a/b/c.txt", (const uint8_t *)"x", 1, 0, err));
    put(sb, "/a/b/c.txt", "deep", RI_FILE_PARENTS);
    content_is(sb, "/a/b/c.txt", "deep");
    assert_true(ri_sandbox_file_stat(sb, "/a/b", &st, &err));
    assert_int_equal(st.type, RI_FILE_TYPE_DIRECTORY);
    assert_int_equal(st.size, 0);
    /* A file where a directory is needed, a directory where a file is. */
    FAILS(RI_FILE_NOT_A_DIRECTORY, ri_sandbox_file_put(sb, "/hello.txt/x", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_NOT_A_DIRECTORY, ri_sandbox_file_put(sb, "/hello.txt/x", (const uint8_t *)"x", 1, RI_FILE_PARENTS, err));
    FAILS(RI_FILE_IS_A_DIRECTORY, ri_sandbox_file_put(sb, "/a", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_IS_A_DIRECTORY, ri_sandbox_file_put(sb, "/", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_IS_A_DIRECTORY, ri_sandbox_file_put(sb, "/new/", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_IS_A_DIRECTORY, ri_sandbox_file_get(sb, "/a", &(uint8_t *){NULL}, &(size_t){0}, err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_get(sb, "/nope", &(uint8_t *){NULL}, &(size_t){0}, err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_stat(sb, "/a/nope", &st, err));
}

static void test_big_file(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_error err;
    size_t n = 3 * WSFS_BLOCK_SIZE + 17;
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 7 + 3);
    assert_true(ri_sandbox_file_put(sb, "/big.bin", data, n, 0, &err));
    uint8_t *back;
    size_t len;
    assert_true(ri_sandbox_file_get(sb, "/big.bin", &back, &len, &err));
    assert_int_equal(len, n);
    assert_memory_equal(back, data, n);
    ri_free(back);
    free(data);
}

static void test_list_sorted(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_error err;
    const char *names[] = {"/d/zeta", "/d/Alpha", "/d/beta", "/d/_x", "/d/10", "/d/9"};
    for (size_t i = 0; i < 6; i++) put(sb, names[i], "12345", RI_FILE_PARENTS);
    assert_true(ri_sandbox_file_mkdir(sb, "/d/sub", 0, &err));
    /* More than one readdir batch. */
    char path[64];
    for (int i = 0; i < 150; i++) {
        snprintf(path, sizeof path, "/d/many/f%03d", i);
        put(sb, path, "x", RI_FILE_PARENTS);
    }
    ri_file_entry *list;
    size_t n;
    assert_true(ri_sandbox_file_list(sb, "/d", &list, &n, &err));
    const char *want[] = {"10", "9", "Alpha", "_x", "beta", "many", "sub", "zeta"};
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) assert_string_equal(list[i].name, want[i]);
    assert_int_equal(list[0].type, RI_FILE_TYPE_REGULAR);
    assert_int_equal(list[0].size, 5);
    assert_int_equal(list[6].type, RI_FILE_TYPE_DIRECTORY);
    assert_string_equal(ri_file_type_name(list[6].type), "directory");
    ri_file_list_free(list, n);
    assert_true(ri_sandbox_file_list(sb, "/d/many/", &list, &n, &err));
    assert_int_equal(n, 150);
    assert_string_equal(list[149].name, "f149");
    ri_file_list_free(list, n);
    assert_true(ri_sandbox_file_list(sb, "/d/sub", &list, &n, &err));
    assert_int_equal(n, 0);
    assert_null(list);
    FAILS(RI_FILE_NOT_A_DIRECTORY, ri_sandbox_file_list(sb, "/d/zeta", &list, &n, err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_list(sb, "/nothing", &list, &n, err));
}

static void test_mkdir_remove_rename(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_error err;
    assert_true(ri_sandbox_file_mkdir(sb, "/x", 0, &err));
    FAILS(RI_FILE_EXISTS, ri_sandbox_file_mkdir(sb, "/x", 0, err));
    assert_true(ri_sandbox_file_mkdir(sb, "/x", RI_FILE_PARENTS, &err));
    FAILS(RI_FILE_EXISTS, ri_sandbox_file_mkdir(sb, "/x", RI_FILE_PARENTS | RI_FILE_EXCLUSIVE, err));
    assert_true(ri_sandbox_file_mkdir(sb, "/x/y/z/", RI_FILE_PARENTS, &err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_mkdir(sb, "/q/r", 0, err));
    put(sb, "/x/y/z/f", "f", 0);
    put(sb, "/x/g", "g", 0);
    FAILS(RI_FILE_NOT_EMPTY, ri_sandbox_file_remove(sb, "/x", false, err));
    FAILS(RI_FILE_NOT_A_DIRECTORY, ri_sandbox_file_mkdir(sb, "/x/g/h", RI_FILE_PARENTS, err));
    /* rename: a file, a directory, over a file; errors. */
    assert_true(ri_sandbox_file_rename(sb, "/x/g", "/g2", &err));
    content_is(sb, "/g2", "g");
    assert_true(ri_sandbox_file_rename(sb, "/x/y", "/y2", &err));
    content_is(sb, "/y2/z/f", "f");
    put(sb, "/h", "h", 0);
    assert_true(ri_sandbox_file_rename(sb, "/h", "/g2", &err));
    content_is(sb, "/g2", "h");
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_rename(sb, "/h", "/h3", err));
    FAILS(RI_FILE_INVALID, ri_sandbox_file_rename(sb, "/y2", "/y2/z/inside", err));
    FAILS(RI_FILE_IS_A_DIRECTORY, ri_sandbox_file_rename(sb, "/g2", "/y2", err));
    /* remove: a file, a tree, the root. */
    assert_true(ri_sandbox_file_remove(sb, "/g2", false, &err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_remove(sb, "/g2", false, err));
    for (int i = 0; i < 5; i++) {
        char p[64];
        snprintf(p, sizeof p, "/y2/z/deeper/%d/file", i);
        put(sb, p, "data", RI_FILE_PARENTS);
    }
    assert_true(ri_sandbox_file_remove(sb, "/y2", true, &err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_stat(sb, "/y2", &(ri_file_stat){0}, err));
    FAILS(RI_FILE_BUSY, ri_sandbox_file_remove(sb, "/", false, err));
    assert_true(ri_sandbox_file_remove(sb, "/", true, &err));
    ri_file_entry *list;
    size_t n;
    assert_true(ri_sandbox_file_list(sb, "/", &list, &n, &err));
    assert_int_equal(n, 0);
    wsfs_usage u;
    wsfs_get_usage(ri_sandbox_wasi_workspace(sb), &u);
    assert_int_equal(u.inodes, 1); /* only the root: nothing leaked */
    assert_int_equal(u.bytes, 0);
}

static void test_hostile_paths(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_error err;
    uint8_t *out;
    size_t len;
    put(sb, "/inside/secret", "s", RI_FILE_PARENTS);
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_put(sb, "relative.txt", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_put(sb, "", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_put(sb, NULL, (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_put(sb, "/../etc/passwd", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_get(sb, "/inside/../inside/secret", &out, &len, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_get(sb, "/inside/./secret", &out, &len, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_mkdir(sb, "/..", 0, err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_rename(sb, "/inside/secret", "/..", err));
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_remove(sb, "/.", true, err));
    /* Names like ".." that are not components are ordinary. */
    put(sb, "/...", "dots", 0);
    content_is(sb, "/...", "dots");
    put(sb, "/.hidden", "h", 0);
    /* Double slashes are empty components. */
    content_is(sb, "//inside///secret", "s");
    /* Too long: a path over max_path, a name over max_name. */
    size_t big = WSFS_DEFAULT_MAX_PATH + 10;
    char *p = malloc(big + 1);
    p[0] = '/';
    for (size_t i = 1; i < big; i++) p[i] = (i % 100 == 0) ? '/' : 'a';
    p[big] = '\0';
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_put(sb, p, (const uint8_t *)"x", 1, RI_FILE_PARENTS, err));
    memset(p + 1, 'n', 300);
    p[301] = '\0';
    FAILS(RI_FILE_BAD_PATH, ri_sandbox_file_put(sb, p, (const uint8_t *)"x", 1, 0, err));
    free(p);
    /* Symlinks the program made cannot lead out: ".." of the root is the root, and an
     * absolute target starts at the workspace's root. */
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    assert_int_equal(wsfs_symlink(fs, "../../../..", 11, WSFS_ROOT_INO, "up", 2), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, "/etc/passwd", 11, WSFS_ROOT_INO, "abs", 3), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, "inside", 6, WSFS_ROOT_INO, "in", 2), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, "loop", 4, WSFS_ROOT_INO, "loop", 4), WSFS_ESUCCESS);
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_get(sb, "/abs", &out, &len, err));
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_get(sb, "/up/etc/passwd", &out, &len, err));
    ri_file_entry *list;
    size_t n;
    assert_true(ri_sandbox_file_list(sb, "/up", &list, &n, &err)); /* the root itself */
    assert_string_equal(list[0].name, "...");
    ri_file_list_free(list, n);
    content_is(sb, "/up/up/up/inside/secret", "s");
    content_is(sb, "/in/secret", "s");
    /* A put through the symlink writes inside the workspace; a put at a symlink replaces it. */
    put(sb, "/up/through.txt", "t", 0);
    content_is(sb, "/through.txt", "t");
    ri_file_stat st;
    assert_true(ri_sandbox_file_stat(sb, "/abs", &st, &err));
    assert_int_equal(st.type, RI_FILE_TYPE_SYMLINK);
    assert_int_equal(st.size, 11);
    put(sb, "/abs", "now a file", 0);
    assert_true(ri_sandbox_file_stat(sb, "/abs", &st, &err));
    assert_int_equal(st.type, RI_FILE_TYPE_REGULAR);
    FAILS(RI_FILE_SYMLINK_LOOP, ri_sandbox_file_get(sb, "/loop", &out, &len, err));
    /* Removing a symlink to a directory removes the link, not the directory. */
    assert_true(ri_sandbox_file_remove(sb, "/in", true, &err));
    content_is(sb, "/inside/secret", "s");
}

static void test_quota(void **state) {
    ri_sandbox *sb = ((tenv *)*state)->sb;
    ri_sandbox_error err;
    /* The workspace's limits are its configuration's; a small quota for the test. */
    struct wsfs *fs = ri_sandbox_wasi_workspace(sb);
    fs->lim.max_bytes = 1000;
    fs->lim.max_inodes = 6;
    uint8_t buf[1001];
    memset(buf, 'q', sizeof buf);
    FAILS(RI_FILE_QUOTA_EXCEEDED, ri_sandbox_file_put(sb, "/big", buf, 1001, 0, err));
    assert_true(ri_sandbox_file_put(sb, "/big", buf, 600, 0, &err));
    /* Replacing needs room for both while the new bytes are written: the old file stays. */
    FAILS(RI_FILE_QUOTA_EXCEEDED, ri_sandbox_file_put(sb, "/big", buf, 500, 0, err));
    uint8_t *out;
    size_t len;
    assert_true(ri_sandbox_file_get(sb, "/big", &out, &len, &err));
    assert_int_equal(len, 600);
    ri_free(out);
    assert_true(ri_sandbox_file_put(sb, "/big", buf, 400, 0, &err));
    ri_file_entry *list;
    size_t n;
    assert_true(ri_sandbox_file_list(sb, "/", &list, &n, &err));
    assert_int_equal(n, 1); /* no temporary left behind by the failed put */
    ri_file_list_free(list, n);
    /* Inodes: root + big + 4 more. */
    for (int i = 0; i < 4; i++) {
        char p[16];
        snprintf(p, sizeof p, "/f%d", i);
        assert_true(ri_sandbox_file_put(sb, p, buf, 1, 0, &err));
    }
    FAILS(RI_FILE_QUOTA_EXCEEDED, ri_sandbox_file_put(sb, "/one-more", buf, 1, 0, err));
    FAILS(RI_FILE_QUOTA_EXCEEDED, ri_sandbox_file_mkdir(sb, "/dir", 0, err));
}

static void test_no_workspace_and_destroyed(void **state) {
    tenv *e = *state;
    ri_sandbox *plain = make(e->f, false);
    ri_sandbox_error err;
    uint8_t *out;
    size_t len;
    FAILS(RI_FILE_NO_WORKSPACE, ri_sandbox_file_put(plain, "/a", (const uint8_t *)"x", 1, 0, err));
    FAILS(RI_FILE_NO_WORKSPACE, ri_sandbox_file_get(plain, "/a", &out, &len, err));
    FAILS(RI_FILE_NO_WORKSPACE, ri_sandbox_file_list(plain, "/", &(ri_file_entry *){NULL}, &len, err));
    ri_sandbox_free(plain);
    ri_sandbox_destroy(e->sb);
    assert_false(ri_sandbox_file_put(e->sb, "/a", (const uint8_t *)"x", 1, 0, &err));
    assert_int_equal(err.code, RI_SANDBOX_INSTANCE_DESTROYED);
    assert_int_equal(ri_file_error_kind(&err), RI_FILE_OK);
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_FILE_ERROR), "FILE_ERROR");
}

/* A host function that tries the file API while its call runs. */
static int host_put(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)args;
    (void)call;
    ri_sandbox_error err;
    bool ok = ri_sandbox_file_put(*(ri_sandbox **)user, "/during", (const uint8_t *)"x", 1, 0, &err);
    results[0] = ri_val_i32(!ok && ri_file_error_kind(&err) == RI_FILE_BUSY ? 1 : 0);
    return 0;
}

static void test_busy_during_call(void **state) {
    tenv *e = *state;
    static const uint8_t wasm[] = {
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
        0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f,                               /* type () -> i32 */
        0x02, 0x0b, 0x01, 0x03, 'e', 'n', 'v', 0x03, 'p', 'u', 't', 0x00, 0x00, /* import env.put */
        0x03, 0x02, 0x01, 0x00,                                                 /* func 1: type 0 */
        0x07, 0x07, 0x01, 0x03, 'r', 'u', 'n', 0x00, 0x01,                      /* export run */
        0x0a, 0x06, 0x01, 0x04, 0x00, 0x10, 0x00, 0x0b,                         /* call 0 */
    };
    ri_valtype res = RI_I32;
    ri_sandbox *self = NULL;
    ri_host_function h = {"put", 0, NULL, 1, &res, host_put, &self};
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.enable_wasi = true;
    c.host_functions = &h;
    c.nhost_functions = 1;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(e->f, &c, &err);
    assert_non_null(sb);
    self = sb;
    if (!ri_sandbox_load(sb, wasm, sizeof wasm, &err)) print_error("load: %s\n", err.message);
    ri_sandbox_result r = ri_sandbox_execute(sb, "run", NULL);
    if (!r.ok) print_error("run: %s\n", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 1);
    ri_sandbox_result_free(&r);
    FAILS(RI_FILE_NOT_FOUND, ri_sandbox_file_stat(sb, "/during", &(ri_file_stat){0}, err));
    ri_sandbox_free(sb);
}

/* What the host put travels in snapshots and forks. */
static void test_snapshot_carries_files(void **state) {
    tenv *e = *state;
    ri_sandbox_error err;
    static const uint8_t empty_module[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
    assert_true(ri_sandbox_load(e->sb, empty_module, sizeof empty_module, &err));
    put(e->sb, "/data/in.txt", "carried", RI_FILE_PARENTS);
    test_blob snap = snapshot_v2(e->sb, true, false);
    ri_sandbox *other = make(e->f, true);
    if (!ri_sandbox_restore(other, snap.data, snap.len, &err)) print_error("restore: %s\n", err.message);
    content_is(other, "/data/in.txt", "carried");
    ri_sandbox_free(other);
    free(snap.data);
    ri_sandbox *fork = ri_sandbox_fork(e->f, e->sb, NULL, &err);
    assert_non_null(fork);
    content_is(fork, "/data/in.txt", "carried");
    put(fork, "/data/in.txt", "changed in the fork", 0);
    content_is(e->sb, "/data/in.txt", "carried");
    ri_sandbox_free(fork);
}

static void change_is(const ri_file_change *c, ri_file_change_kind kind, const char *path, const char *old_path,
                      uint64_t bytes) {
    if (c->kind != kind || strcmp(c->path, path) != 0 || c->changed_bytes != bytes)
        print_error("change %s %s (%llu bytes), want %s %s (%llu)\n", ri_file_change_kind_name(c->kind), c->path,
                    (unsigned long long)c->changed_bytes, ri_file_change_kind_name(kind), path, (unsigned long long)bytes);
    assert_int_equal(c->kind, kind);
    assert_string_equal(c->path, path);
    if (old_path) assert_string_equal(c->old_path, old_path);
    else assert_null(c->old_path);
    assert_int_equal(c->changed_bytes, bytes);
}

/* The files' diff between two snapshots and between a snapshot and the live sandbox. */
static void test_diff_files(void **state) {
    tenv *e = *state;
    ri_sandbox_error err;
    static const uint8_t empty_module[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
    assert_true(ri_sandbox_load(e->sb, empty_module, sizeof empty_module, &err));
    put(e->sb, "/a", "hello", 0);
    put(e->sb, "/c", "gone soon", 0);
    put(e->sb, "/d/moved.txt", "moving", RI_FILE_PARENTS);
    put(e->sb, "/same", "same bytes", 0);
    test_blob a = snapshot_v2(e->sb, false, false);
    put(e->sb, "/a", "hellX!", 0);          /* replaced: 1 byte differs, 1 more */
    put(e->sb, "/b/new.txt", "new", RI_FILE_PARENTS);
    assert_true(ri_sandbox_file_remove(e->sb, "/c", false, &err));
    assert_true(ri_sandbox_file_rename(e->sb, "/d/moved.txt", "/e.txt", &err));
    put(e->sb, "/same", "same bytes", 0);   /* rewritten with the same bytes: no change */
    test_blob b = snapshot_v2(e->sb, false, true);
    ri_file_diff d;
    assert_true(ri_snapshot_diff_files(a.data, a.len, b.data, b.len, &d, &err));
    assert_true(d.old_has_workspace && d.new_has_workspace);
    assert_int_equal(d.nchanges, 5);
    change_is(&d.changes[0], RI_FILE_CHANGED, "/a", NULL, 2);
    assert_int_equal(d.changes[0].old_size, 5);
    assert_int_equal(d.changes[0].new_size, 6);
    change_is(&d.changes[1], RI_FILE_ADDED, "/b", NULL, 0);
    assert_int_equal(d.changes[1].type, RI_FILE_TYPE_DIRECTORY);
    change_is(&d.changes[2], RI_FILE_ADDED, "/b/new.txt", NULL, 3);
    change_is(&d.changes[3], RI_FILE_REMOVED, "/c", NULL, 9);
    change_is(&d.changes[4], RI_FILE_MOVED, "/e.txt", "/d/moved.txt", 0);
    assert_int_equal(d.added, 2);
    assert_int_equal(d.removed, 1);
    assert_int_equal(d.changed, 1);
    assert_int_equal(d.moved, 1);
    char *json = ri_file_diff_json(&d);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"changedBytes\": 2"));
    assert_non_null(strstr(json, "\"oldPath\": \"/d/moved.txt\""));
    ri_free(json);
    ri_file_diff_free(&d);
    /* The live sandbox against the first snapshot: the same. */
    assert_true(ri_sandbox_diff_files(e->sb, a.data, a.len, &d, &err));
    assert_int_equal(d.nchanges, 5);
    ri_file_diff_free(&d);
    /* Against itself: nothing. */
    assert_true(ri_snapshot_diff_files(b.data, b.len, b.data, b.len, &d, &err));
    assert_int_equal(d.nchanges, 0);
    ri_file_diff_free(&d);
    /* An image without a workspace: an empty tree. */
    ri_sandbox *plain = make(e->f, false);
    assert_true(ri_sandbox_load(plain, empty_module, sizeof empty_module, &err));
    test_blob p = snapshot_v2(plain, false, false);
    assert_true(ri_snapshot_diff_files(p.data, p.len, b.data, b.len, &d, &err));
    assert_false(d.old_has_workspace);
    assert_true(d.new_has_workspace);
    assert_int_equal(d.removed, 0);
    assert_int_equal(d.added, 6); /* /a, /b, /b/new.txt, /d, /e.txt, /same */
    ri_file_diff_free(&d);
    assert_false(ri_snapshot_diff_files(p.data, 10, b.data, b.len, &d, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    ri_sandbox_free(plain);
    free(p.data);
    free(a.data);
    free(b.data);
}

static uint8_t *read_program(const char *name, size_t *len) {
    const char *dir = getenv("RI_C_WASI_DIR");
    if (!dir || !*dir) return NULL;
    return read_wasm_in(dir, name, "is RI_C_WASI_DIR set?", len);
}

/* A C program sees what the host put, the host reads what it wrote; a program paused on
 * stdin gets a file put in between. */
static void test_with_program(void **state) {
    tenv *e = *state;
    size_t len = 0;
    uint8_t *wasm = read_program("files", &len);
    if (!wasm) skip();
    ri_sandbox_error err;
    assert_true(ri_sandbox_load(e->sb, wasm, len, &err));
    free(wasm);
    put(e->sb, "/host.txt", "from the host", 0);
    ri_sandbox_result r = ri_sandbox_wasi_run(e->sb);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    content_is(e->sb, "/dir/z.txt", "file 2\n");
    content_is(e->sb, "/host.txt", "from the host");
    ri_file_entry *list;
    size_t n;
    assert_true(ri_sandbox_file_list(e->sb, "/dir", &list, &n, &err));
    assert_int_equal(n, 3);
    assert_string_equal(list[2].name, "z.txt");
    ri_file_list_free(list, n);

    wasm = read_program("upper", &len);
    assert_non_null(wasm);
    assert_true(ri_sandbox_load(e->sb, wasm, len, &err));
    free(wasm);
    ri_sandbox_wasi_output_clear(e->sb, RI_WASI_STDOUT);
    r = ri_sandbox_wasi_run(e->sb);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    put(e->sb, "/while-paused", "p", 0); /* a paused call: allowed */
    content_is(e->sb, "/while-paused", "p");
    ri_sandbox_wasi_stdin_push(e->sb, (const uint8_t *)"ab", 2);
    ri_sandbox_wasi_stdin_close(e->sb);
    r = ri_sandbox_resume(e->sb, 0);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    wasi_stream_is(e->sb, RI_WASI_STDOUT, "AB");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_get_stat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_sorted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mkdir_remove_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_workspace_and_destroyed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_during_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_carries_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_diff_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_with_program, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
