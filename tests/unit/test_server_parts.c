/*
 * The server's pure parts (src/server): UTF-8 output that never splits a character,
 * base64, ids and tokens (format, validation, constant-time compare), message limits
 * (size, depth, type), the checkpoint volume layout (seed 002: checkpoint_{ms}.img,
 * latest, metadata.json; pruning; a failed restore leaves files as they are), leases
 * between two owners, and the host_modules import namespace of the sandbox library.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server_internal.h"

static char *feed(srv_utf8 *st, const char *bytes, size_t n, bool flush) {
    size_t len;
    char *o = srv_utf8_feed(st, (const uint8_t *)bytes, n, flush, &len);
    assert_non_null(o);
    assert_int_equal(strlen(o), len);
    return o;
}

static void utf8_split_character_waits(void **state) {
    (void)state;
    srv_utf8 st = {0};
    char *a = feed(&st, "h\xc3", 2, false);
    assert_string_equal(a, "h");
    char *b = feed(&st, "\xa9llo", 4, false);
    assert_string_equal(b, "\xc3\xa9llo");
    /* a 4-byte character one byte at a time */
    char *c1 = feed(&st, "\xf0", 1, false), *c2 = feed(&st, "\x9f", 1, false), *c3 = feed(&st, "\x98", 1, false),
         *c4 = feed(&st, "\x80", 1, false);
    assert_string_equal(c1, "");
    assert_string_equal(c3, "");
    assert_string_equal(c4, "\xf0\x9f\x98\x80");
    free(a), free(b), free(c1), free(c2), free(c3), free(c4);
}

static void utf8_invalid_bytes_become_fffd(void **state) {
    (void)state;
    srv_utf8 st = {0};
    char *a = feed(&st, "a\xff" "b\xc0\x80" "c\xed\xa0\x80", 9, false);
    /* 0xff, 0xc0, 0x80 each one U+FFFD; a surrogate's lead ED then A0: ED alone then A0, 80 */
    assert_string_equal(a, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    char *b = feed(&st, "x\xe2\x82", 3, false);
    assert_string_equal(b, "x");
    char *c = feed(&st, NULL, 0, true); /* flush: the incomplete tail is one U+FFFD */
    assert_string_equal(c, "\xef\xbf\xbd");
    free(a), free(b), free(c);
}

static void base64_strict(void **state) {
    (void)state;
    uint8_t *out;
    size_t n;
    assert_true(ri_base64_decode_lenient("AGFzbQEAAAA=", 12, &out, &n));
    assert_int_equal(n, 8);
    assert_memory_equal(out, "\0asm\1\0\0\0", 8);
    free(out);
    assert_true(ri_base64_decode_lenient("aGk", 3, &out, &n)); /* padding optional */
    assert_int_equal(n, 2);
    assert_memory_equal(out, "hi", 2);
    free(out);
    assert_false(ri_base64_decode_lenient("a b=", 4, &out, &n));
    assert_false(ri_base64_decode_lenient("a", 1, &out, &n));
}

static void ids_and_tokens(void **state) {
    (void)state;
    char a[SRV_ID_LEN + 1], b[SRV_ID_LEN + 1];
    assert_true(srv_new_sandbox_id(a));
    assert_true(srv_new_sandbox_id(b));
    assert_true(srv_id_valid(a));
    assert_string_not_equal(a, b);
    assert_int_equal(strlen(a), 8 + 24);
    assert_false(srv_id_valid("sandbox-../../etc/passwd"));
    assert_false(srv_id_valid("sandbox-0123456789abcdef0123456"));   /* 23 hex */
    assert_false(srv_id_valid("sandbox-0123456789ABCDEF01234567"));  /* upper case */
    assert_false(srv_id_valid("sandbox-0123456789abcdef012345678")); /* 25 hex */
    assert_false(srv_id_valid(NULL));
    char t[SRV_TOKEN_HEX + 1];
    assert_true(ri_random_hex(t, SRV_TOKEN_HEX));
    assert_true(srv_token_equal(t, t));
    char u[SRV_TOKEN_HEX + 2];
    memcpy(u, t, sizeof t);
    u[5] = u[5] == 'a' ? 'b' : 'a';
    assert_false(srv_token_equal(t, u));
    memcpy(u, t, sizeof t);
    u[SRV_TOKEN_HEX] = 'x'; /* longer */
    u[SRV_TOKEN_HEX + 1] = 0;
    assert_false(srv_token_equal(t, u));
    assert_false(srv_token_equal(t, "")); /* shorter */
    assert_false(srv_token_equal(t, NULL));
    char h1[65], h2[65];
    srv_token_hash_hex(t, h1);
    srv_token_hash_hex(u, h2);
    assert_int_equal(strlen(h1), 64);
    assert_string_not_equal(h1, h2);
}

static void message_limits(void **state) {
    (void)state;
    char why[256];
    json_t *j = srv_parse_message("{\"a\":[1,{\"b\":2}]}", 17, 1000, 3, why, sizeof why);
    assert_non_null(j);
    json_decref(j);
    assert_null(srv_parse_message("{\"a\":[1,{\"b\":[]}]}", 18, 1000, 3, why, sizeof why));
    assert_non_null(strstr(why, "deeper than 3"));
    j = srv_parse_message("{\"a\":\"[[[[[[\"}", 14, 1000, 1, why, sizeof why); /* brackets in strings */
    assert_non_null(j);
    json_decref(j);
    assert_null(srv_parse_message("[1]", 3, 1000, 3, why, sizeof why));
    assert_non_null(strstr(why, "object"));
    assert_null(srv_parse_message("{\"a\":1}", 7, 6, 3, why, sizeof why));
    assert_non_null(strstr(why, "too large"));
    assert_null(srv_parse_message("{\"a\":1,\"a\":2}", 13, 100, 3, why, sizeof why));
    assert_null(srv_parse_message("{", 1, 100, 3, why, sizeof why));
}

static char *tmpdir(void) {
    char t[] = "/tmp/ri-srv-unit-XXXXXX";
    char *d = mkdtemp(t);
    assert_non_null(d);
    return strdup(d);
}

static int count_images(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "checkpoint_", 11) == 0) n++;
    closedir(d);
    return n;
}

static bool image_exists(const char *root, const char *id, const char *name) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/checkpoints/%s", root, id, name);
    return access(p, F_OK) == 0;
}

/* With etcd, images carry the owner's fencing token (checkpoint_{token}_{ms}.img), no latest
 * file is written, and images sort by (token, time): a later owner's image is newer even when
 * its machine's clock is behind. */
static void volume_fenced_names(void **state) {
    (void)state;
    char *root = tmpdir();
    char id[SRV_ID_LEN + 1], why[512], file[128], path[1200];
    assert_true(srv_new_sandbox_id(id));
    uint8_t data[3] = {'i', 'm', 'x'};
    assert_true(srv_volume_write_checkpoint(root, id, 42, data, 3, file, sizeof file, why, sizeof why));
    assert_memory_equal(file, "checkpoint_42_", 14);
    const uint8_t *img;
    size_t n;
    assert_int_equal(srv_volume_map_latest(root, id, &img, &n, NULL, 0, why, sizeof why), 1); /* no latest file */
    assert_int_equal(srv_volume_map_image(root, id, file, &img, &n, why, sizeof why), 0);
    srv_unmap(img, n);
    /* an old owner's image from a clock far ahead, a new owner's from a clock behind */
    const char *names[] = {"checkpoint_9999999999999.img", "checkpoint_5_9999999999999.img",
                           "checkpoint_7_1000000000000.img"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s/checkpoints", root, id);
        assert_true(srv_write_atomic(path, names[i], data, 3, why, sizeof why));
    }
    /* images newer than latest = the token-7 image: the token-42 one only */
    srv_volume_drop_newer(root, id, names[2]);
    assert_false(image_exists(root, id, file));
    assert_true(image_exists(root, id, names[2]));
    /* keep 1: the token-7 image stays, the older owners' go */
    srv_volume_prune(root, id, names[2], 1);
    assert_false(image_exists(root, id, names[0]));
    assert_false(image_exists(root, id, names[1]));
    assert_true(image_exists(root, id, names[2]));
    /* names that are not images */
    const char *bad[] = {"checkpoint__1.img", "checkpoint_1_.img", "checkpoint_1_2_3.img", "checkpoint_x.img"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(srv_volume_map_image(root, id, bad[i], &img, &n, why, sizeof why), 2);
    srv_remove_tree(root);
    free(root);
}

static void volume_layout(void **state) {
    (void)state;
    char *root = tmpdir();
    char id[SRV_ID_LEN + 1], why[512], file[128], path[1024];
    assert_true(srv_new_sandbox_id(id));
    const uint8_t *img;
    size_t n;
    assert_int_equal(srv_volume_map_latest(root, id, &img, &n, NULL, 0, why, sizeof why), 1); /* not found */
    for (int i = 0; i < 5; i++) {
        uint8_t data[3] = {'i', 'm', (uint8_t)('0' + i)};
        assert_true(srv_volume_write_checkpoint(root, id, 0, data, 3, file, sizeof file, why, sizeof why));
        assert_memory_equal(file, "checkpoint_", 11);
    }
    snprintf(path, sizeof path, "%s/%s/checkpoints", root, id);
    assert_int_equal(count_images(path), 5); /* writing prunes nothing */
    srv_volume_prune(root, id, file, 2);
    assert_int_equal(count_images(path), 2); /* keep 2 */
    assert_int_equal(srv_volume_map_latest(root, id, &img, &n, NULL, 0, why, sizeof why), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(img, "im4", 3); /* latest names the newest */
    srv_unmap(img, n);
    snprintf(path, sizeof path, "%s/%s/checkpoints/latest", root, id);
    FILE *f = fopen(path, "w");
    fputs("../../etc/passwd", f);
    fclose(f);
    assert_int_equal(srv_volume_map_latest(root, id, &img, &n, NULL, 0, why, sizeof why), 2);
    assert_non_null(strstr(why, "latest"));
    /* metadata */
    json_t *meta = json_pack("{s:s, s:i}", "token_sha256", "00", "idle_timeout", 5);
    assert_true(srv_volume_write_metadata(root, id, meta, why, sizeof why));
    json_decref(meta);
    json_t *back = NULL;
    assert_int_equal(srv_volume_read_metadata(root, id, &back, why, sizeof why), 0);
    assert_int_equal(json_integer_value(json_object_get(back, "idle_timeout")), 5);
    json_decref(back);
    assert_int_equal(srv_volume_read_metadata(root, "sandbox-nothex", &back, why, sizeof why), 1);
    /* no temporary files are left */
    snprintf(path, sizeof path, "%s/%s", root, id);
    DIR *d = opendir(path);
    struct dirent *e;
    while ((e = readdir(d))) assert_null(strstr(e->d_name, ".tmp-"));
    closedir(d);
    assert_true(srv_volume_remove(root, id));
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    assert_true(srv_remove_tree(root));
    free(root);
}

static void leases_between_owners(void **state) {
    (void)state;
    char *root = tmpdir();
    char id[SRV_ID_LEN + 1], holder[128], why[256];
    assert_true(srv_new_sandbox_id(id));
    assert_int_equal(srv_lease_acquire(root, id, "A", 60000, holder, sizeof holder, why, sizeof why), SRV_LEASE_ACQUIRED);
    assert_int_equal(srv_lease_acquire(root, id, "B", 60000, holder, sizeof holder, why, sizeof why),
                     SRV_LEASE_HELD_BY_OTHER);
    assert_string_equal(holder, "A");
    assert_true(srv_lease_renew(root, id, "A", 60000));
    assert_false(srv_lease_renew(root, id, "B", 60000));
    srv_lease_release(root, id, "B"); /* not B's: nothing happens */
    assert_int_equal(srv_lease_acquire(root, id, "B", 60000, holder, sizeof holder, why, sizeof why),
                     SRV_LEASE_HELD_BY_OTHER);
    srv_lease_release(root, id, "A");
    assert_int_equal(srv_lease_acquire(root, id, "B", 1, holder, sizeof holder, why, sizeof why), SRV_LEASE_ACQUIRED);
    usleep(20000); /* B's 1 ms lease has expired: A may take it */
    assert_int_equal(srv_lease_acquire(root, id, "A", 60000, holder, sizeof holder, why, sizeof why), SRV_LEASE_ACQUIRED);
    assert_false(srv_lease_renew(root, id, "B", 60000));
    assert_false(srv_handoff_requested(root, id));
    assert_true(srv_handoff_request(root, id, "B"));
    assert_true(srv_handoff_requested(root, id));
    srv_handoff_clear(root, id);
    assert_false(srv_handoff_requested(root, id));
    assert_int_equal(srv_lease_acquire(root, "../x", "A", 1, holder, sizeof holder, why, sizeof why), SRV_LEASE_ERROR);
    srv_remove_tree(root);
    free(root);
}

/* ---- the sandbox library's host_modules (ri.write-style imports) ---------------------------- */

static int got_value;
static int take(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)results;
    got_value = args[0].of.i32;
    return 0;
}

/* (module (import "ri" "put" (func (param i32))) (func (export "go") (call 0 (i32.const 7)))) */
static const uint8_t ri_put_module[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x00, 0x00,
    0x02, 0x0a, 0x01, 0x02, 0x72, 0x69, 0x03, 0x70, 0x75, 0x74, 0x00, 0x00, 0x03, 0x02, 0x01, 0x01, 0x07, 0x06,
    0x01, 0x02, 0x67, 0x6f, 0x00, 0x01, 0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x07, 0x10, 0x00, 0x0b};

static void host_modules_namespace(void **state) {
    (void)state;
    static const ri_valtype i32[] = {RI_I32};
    ri_host_function fn;
    memset(&fn, 0, sizeof fn);
    fn.name = "put";
    fn.nparams = 1;
    fn.params = i32;
    fn.fn = take;
    const char *const mods[] = {"ri"};
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1;
    c.host_functions = &fn;
    c.nhost_functions = 1;
    ri_sandbox_error err;
    /* declared in env: the ri import is refused */
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    assert_false(ri_sandbox_load(sb, ri_put_module, sizeof ri_put_module, &err));
    assert_non_null(strstr(err.message, "undeclared namespace 'ri'"));
    ri_sandbox_free(sb);
    /* declared in ri: admitted and linked */
    c.host_modules = mods;
    sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    assert_true(ri_sandbox_load(sb, ri_put_module, sizeof ri_put_module, &err));
    ri_sandbox_result r = ri_sandbox_execute(sb, "go", NULL);
    assert_true(r.ok);
    assert_int_equal(got_value, 7);
    ri_sandbox_result_free(&r);
    assert_string_equal(ri_sandbox_get_config(sb)->host_modules[0], "ri");
    ri_sandbox_free(sb);
    /* a WASI namespace cannot be declared */
    const char *const wasi[] = {"wasi"};
    c.host_modules = wasi;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    ri_sandboxes_free(f);
}

static void loopback_addresses(void **state) {
    (void)state;
    const char *yes[] = {"127.0.0.1", "127.1.2.3", "::1", "localhost", "LOCALHOST", "::ffff:127.0.0.1"};
    const char *no[] = {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "example.com", "", "::ffff:10.0.0.1", "128.0.0.1"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) assert_true(srv_host_is_loopback(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) assert_false(srv_host_is_loopback(no[i]));
    assert_false(srv_host_is_loopback(NULL));
}

/* A bound belongs to its own bucket (le is "less or equal"); buckets are cumulative; sums exact. */
static void histogram_buckets(void **state) {
    (void)state;
    char err[256];
    srv *s = srv_new_core(NULL, err, sizeof err);
    assert_non_null(s);
    srv_metrics_observe(s, SRV_HIST_CKPT_BYTES, 4096);
    srv_metrics_observe(s, SRV_HIST_CKPT_BYTES, 4097);
    srv_metrics_observe(s, SRV_HIST_CKPT_BYTES, 1ull << 40); /* above every bound: +Inf only */
    srv_metrics_observe(s, SRV_HIST_EXEC_ACTION, 1000);      /* 1 ms */
    char *t = srv_metrics_text(s);
    assert_non_null(t);
    const char *want[] = {
        "# TYPE ri_server_checkpoint_bytes histogram\n",
        "ri_server_checkpoint_bytes_bucket{le=\"4096\"} 1\n",
        "ri_server_checkpoint_bytes_bucket{le=\"16384\"} 2\n",
        "ri_server_checkpoint_bytes_bucket{le=\"4294967296\"} 2\n",
        "ri_server_checkpoint_bytes_bucket{le=\"+Inf\"} 3\n",
        "ri_server_checkpoint_bytes_sum 1099511635969\n",
        "ri_server_checkpoint_bytes_count 3\n",
        "ri_server_execution_duration_seconds_bucket{kind=\"execute\",le=\"0.0005\"} 0\n",
        "ri_server_execution_duration_seconds_bucket{kind=\"execute\",le=\"0.001\"} 1\n",
        "ri_server_execution_duration_seconds_sum{kind=\"execute\"} 0.001000\n",
        "ri_server_execution_duration_seconds_count{kind=\"run\"} 0\n",
        "ri_build_info{version=\"",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_non_null(strstr(t, want[i]));
    free(t);
    ri_server_free(s);
}

/* Which modules run as WASI processes: an import from wasi_snapshot_preview1 anywhere in
 * the import section, after imports of every kind; truncated modules read as not WASI. */
static void wasi_modules_recognized(void **state) {
    (void)state;
    static const uint8_t head[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
                                   0x01, 0x04, 0x01, 0x60, 0x00, 0x00}; /* one type () -> () */
    uint8_t m[256];
    memcpy(m, head, sizeof head);
    size_t n = sizeof head;
    uint8_t imports[200];
    size_t k = 0;
    imports[k++] = 5; /* five imports: memory (with max), table, global, ri.write, then WASI */
    const char *mods[] = {"env", "env", "env", "ri", "wasi_snapshot_preview1"};
    const char *names[] = {"memory", "table", "g", "write", "proc_exit"};
    for (int i = 0; i < 5; i++) {
        imports[k++] = (uint8_t)strlen(mods[i]);
        memcpy(imports + k, mods[i], strlen(mods[i]));
        k += strlen(mods[i]);
        imports[k++] = (uint8_t)strlen(names[i]);
        memcpy(imports + k, names[i], strlen(names[i]));
        k += strlen(names[i]);
        static const uint8_t desc[][5] = {{2, 1, 1, 0x80, 0x01}, {1, 0x70, 0, 1, 0}, {3, 0x7f, 0, 0, 0},
                                          {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
        static const size_t dlen[] = {5, 4, 3, 2, 2};
        memcpy(imports + k, desc[i], dlen[i]);
        k += dlen[i];
    }
    m[n++] = 2;
    m[n++] = (uint8_t)k;
    memcpy(m + n, imports, k);
    n += k;
    assert_true(srv_module_imports_wasi(m, n));
    for (size_t cut = 0; cut < n; cut++) assert_false(srv_module_imports_wasi(m, cut));
    /* the same imports without the last one: not WASI */
    const size_t wasi_import = 1 + 22 + 1 + 9 + 2;
    m[sizeof head + 1] = (uint8_t)(k - wasi_import);
    m[sizeof head + 2] = 4;
    assert_false(srv_module_imports_wasi(m, n - wasi_import));
    assert_false(srv_module_imports_wasi(head, sizeof head));
    assert_false(srv_module_imports_wasi(NULL, 0));
    /* a 64-bit memory import (env.m, limits 2^33 and 2^34 pages: u64 LEB128s), then WASI */
    static const uint8_t mem64[] = {
        0x02, 0x36, 0x02, 0x03, 0x65, 0x6e, 0x76, 0x01, 0x6d, 0x02, 0x05, 0x80, 0x80, 0x80,
        0x80, 0x20, 0x80, 0x80, 0x80, 0x80, 0x40, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73,
        0x6e, 0x61, 0x70, 0x73, 0x68, 0x6f, 0x74, 0x5f, 0x70, 0x72, 0x65, 0x76, 0x69, 0x65,
        0x77, 0x31, 0x09, 0x70, 0x72, 0x6f, 0x63, 0x5f, 0x65, 0x78, 0x69, 0x74, 0x00, 0x00};
    memcpy(m, head, sizeof head);
    memcpy(m + sizeof head, mem64, sizeof mem64);
    assert_true(srv_module_imports_wasi(m, sizeof head + sizeof mem64));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wasi_modules_recognized),
        cmocka_unit_test(loopback_addresses),         cmocka_unit_test(histogram_buckets),
        cmocka_unit_test(utf8_split_character_waits), cmocka_unit_test(utf8_invalid_bytes_become_fffd),
        cmocka_unit_test(base64_strict),              cmocka_unit_test(ids_and_tokens),
        cmocka_unit_test(message_limits),             cmocka_unit_test(volume_layout),
        cmocka_unit_test(volume_fenced_names),
        cmocka_unit_test(leases_between_owners),      cmocka_unit_test(host_modules_namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
