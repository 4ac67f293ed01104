/*
 * The snapshot store (issue 6, part 1): layout and opening, put and get byte-exact
 * (raw, zstd, with the module), content addressing (a page stored once across
 * snapshots), metadata, list order, names, delete and rename, damaged and truncated
 * files refused with clear errors, temporary files ignored and collected, garbage
 * collection, size accounting, the size cap, the page cache (unchanged pages are not
 * rehashed), WSNP v1 refused, verify. Fixture: tests/wat/store_state.wat.
 */
#include "test_store_util.h"

#include <sys/file.h>

typedef struct fx {
    char *dir;
    char path[4096];
    ri_snapstore *st;
    ri_sandboxes *factory;
    ri_sandbox *sb;
} fx;

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    f->dir = temp_dir();
    f->st = new_store(f->dir, f->path, sizeof f->path);
    f->factory = ri_sandboxes_new();
    f->sb = new_sandbox(f->factory, "store_state");
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    ri_sandbox_free(f->sb);
    ri_sandboxes_free(f->factory);
    ri_snapstore_close(f->st);
    remove_tree(f->dir);
    free(f);
    return 0;
}

static void put(fx *f, const char *name, bytes image, ri_snapstore_put_stats *stats) {
    store_put(f->st, name, image, stats);
}

static bytes get(fx *f, const char *name, bool module, bool compress) { return store_get(f->st, name, module, compress); }

static void fill(ri_sandbox *sb, int32_t first, int32_t count, int32_t seed) {
    for (int32_t p = first; p < first + count; p++) CALL2(sb, "fillPage", p, seed + p);
}

static uint64_t blob_count(fx *f) {
    ri_snapstore_usage u;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    return u.blobs;
}

/* ---- opening ---------------------------------------------------------------------------------- */

static void test_layout(void **state) {
    fx *f = *state;
    char p[4200];
    struct stat sb;
    const char *entries[] = {"store.json", "lock", "blobs", "snapshots", "blobs/00", "blobs/ff"};
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", f->path, entries[i]);
        assert_int_equal(stat(p, &sb), 0);
    }
    assert_int_equal(count_entries(p, NULL), 0);
    /* Reopening without create works; a second handle sees the same store. */
    ri_snapstore_error err;
    ri_snapstore *again = ri_snapstore_open(f->path, NULL, &err);
    expect_ok(again != NULL, &err);
    assert_string_equal(ri_snapstore_dir(again), f->path);
    ri_snapstore_close(again);
}

static void test_open_refusals(void **state) {
    fx *f = *state;
    ri_snapstore_error err;
    char p[4200];
    snprintf(p, sizeof p, "%s/missing", f->dir);
    assert_null(ri_snapstore_open(p, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_STORE);
    assert_non_null(strstr(err.message, "does not exist"));
    /* A directory with other things in it is not made a store. */
    snprintf(p, sizeof p, "%s/busy", f->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    char q[4300];
    snprintf(q, sizeof q, "%s/notes.txt", p);
    write_path(q, (const uint8_t *)"x", 1);
    ri_snapstore_options create = {true};
    assert_null(ri_snapstore_open(p, &create, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_STORE);
    assert_non_null(strstr(err.message, "not empty"));
    /* A damaged store.json. */
    snprintf(q, sizeof q, "%s/store.json", f->path);
    const char *v9 = "{\"format\": \"ri-snapshot-store\", \"version\": 9, \"maxBytes\": 0}";
    write_path(q, (const uint8_t *)v9, strlen(v9));
    assert_null(ri_snapstore_open(f->path, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_STORE);
    assert_non_null(strstr(err.message, "version 9"));
    write_path(q, (const uint8_t *)"{\"format\": 1}", 13);
    assert_null(ri_snapstore_open(f->path, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
}

/* ---- put and get ------------------------------------------------------------------------------- */

static void test_round_trip_byte_exact(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 7);
    fill(f->sb, 0, 3, 100);
    CALL2(f->sb, "textPage", 5, 7);
    CALL1(f->sb, "setG", 99);
    CALL0(f->sb, "setTable");
    CALL0(f->sb, "dropData");
    CALL0(f->sb, "random");
    bytes raw = snap(f->sb, false, false), raw_module = snap(f->sb, true, false);
    put(f, "state", raw_module, NULL);
    /* Every way of getting it back is exactly what the sandbox writes. */
    bytes raw_back = get(f, "state", false, false);
    assert_bytes_equal(raw, raw_back);
    bytes z = snap(f->sb, false, true), z_back = get(f, "state", false, true);
    assert_bytes_equal(z, z_back);
    bytes zm = snap(f->sb, true, true), zm_back = get(f, "state", true, true);
    assert_bytes_equal(zm, zm_back);
    /* Restores into a fresh sandbox: the state continues. */
    ri_sandbox_config c = store_config();
    ri_sandbox *other = ri_sandbox_create(f->factory, &c, NULL);
    ri_sandbox_error se;
    assert_true(ri_sandbox_restore(other, zm_back.data, zm_back.len, &se));
    assert_int_equal(CALL0(other, "getG"), 99);
    assert_int_equal(CALL0(other, "pages"), 8);
    assert_int_equal(CALL0(other, "callTable"), 1);
    assert_int_equal(CALL0(other, "random"), CALL0(f->sb, "random"));
    ri_sandbox_free(other);
    free(raw.data), free(raw_module.data), free(raw_back.data), free(z.data), free(z_back.data), free(zm.data);
    free(zm_back.data);
}

static void test_put_compressed_image_with_module(void **state) {
    fx *f = *state;
    fill(f->sb, 0, 1, 5);
    bytes zm = snap(f->sb, true, true);
    put(f, "zm", zm, NULL);
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_info(f->st, "zm", &info, &err), &err);
    assert_true(info.module_stored);
    assert_int_equal(info.stored_pages, 1);
    assert_int_equal(info.nmemories, 1);
    assert_int_equal(info.memory_bytes, PAGE);
    assert_int_equal(info.status, RI_SNAP_STATUS_LOADED);
    assert_int_equal(info.event_timestamp, TS);
    ri_snapstore_info_free(&info);
    bytes back = get(f, "zm", true, true);
    assert_bytes_equal(zm, back);
    free(zm.data), free(back.data);
}

static void test_image_without_module(void **state) {
    fx *f = *state;
    bytes raw = snap(f->sb, false, false);
    put(f, "bare", raw, NULL);
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_info(f->st, "bare", &info, &err), &err);
    assert_false(info.module_stored);
    ri_snapstore_info_free(&info);
    ri_snapstore_image_options o = {true, false, false, NULL, NULL};
    uint8_t *out;
    size_t len;
    assert_false(ri_snapstore_get_image(f->st, "bare", &o, &out, &len, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INPUT);
    assert_non_null(strstr(err.message, "does not hold module sha256:"));
    /* The module given beside the image is stored, after checking it is the one named. */
    bytes wasm = read_fixture("store_state"), other = read_fixture("store_host");
    ri_snapstore_put_options po;
    memset(&po, 0, sizeof po);
    po.module = other.data;
    po.module_len = other.len;
    assert_false(ri_snapstore_put(f->st, "with", raw.data, raw.len, &po, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INPUT);
    assert_non_null(strstr(err.message, "not the one the image names"));
    po.module = wasm.data;
    po.module_len = wasm.len;
    expect_ok(ri_snapstore_put(f->st, "with", raw.data, raw.len, &po, &info, NULL, &err), &err);
    assert_true(info.module_stored);
    ri_snapstore_info_free(&info);
    /* Now the module is in the store: later saves of images without it hold it too. */
    expect_ok(ri_snapstore_put(f->st, "bare2", raw.data, raw.len, NULL, &info, NULL, &err), &err);
    assert_true(info.module_stored);
    ri_snapstore_info_free(&info);
    free(raw.data), free(wasm.data), free(other.data);
}

/* ---- header fields checked against what the store holds ----------------------------------------- */

static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* META's module size (the header, then META's section header, then the 32-byte hash). */
#define META_MODULE_SIZE (8 + 16 + 32)

/* image (without MODL) naming its module with size + delta; the checksum recomputed. */
static bytes with_module_size(bytes image, int64_t delta) {
    bytes b = {malloc(image.len), image.len};
    assert_non_null(b.data);
    memcpy(b.data, image.data, image.len);
    put_u64(b.data + META_MODULE_SIZE, get_u64(b.data + META_MODULE_SIZE) + (uint64_t)delta);
    uint32_t crc = ri_snap_crc32c(b.data, b.len - 20);
    for (int i = 0; i < 4; i++) b.data[b.len - 4 + i] = (uint8_t)(crc >> (8 * i));
    return b;
}

static void test_module_size_checked_against_the_store(void **state) {
    fx *f = *state;
    bytes with = snap(f->sb, true, true), bare = snap(f->sb, false, true);
    put(f, "with", with, NULL); /* the store holds the module now */
    bytes wasm = read_fixture("store_state");
    ri_snapstore_error err;
    ri_snapstore_info info;
    for (int delta = -1; delta <= 1; delta += 2) {
        bytes lie = with_module_size(bare, delta);
        /* Saved alone: the module the store holds has another size. */
        expect_refused(ri_snapstore_put(f->st, "lie", lie.data, lie.len, NULL, NULL, NULL, &err), &err,
                       RI_SNAPSTORE_ERR_INPUT, "but the store holds that module with");
        /* Imported (a plain image under a name). */
        expect_refused(ri_snapstore_import(f->st, lie.data, lie.len, "lie", NULL, NULL, &err), &err,
                       RI_SNAPSTORE_ERR_INPUT, "but the store holds that module with");
        /* With the true module beside it: the image still lies about it. */
        ri_snapstore_put_options po;
        memset(&po, 0, sizeof po);
        po.module = wasm.data;
        po.module_len = wasm.len;
        expect_refused(ri_snapstore_put(f->st, "lie", lie.data, lie.len, &po, NULL, NULL, &err), &err,
                       RI_SNAPSTORE_ERR_INPUT, "not the one the image names");
        bool exists;
        expect_ok(ri_snapstore_exists(f->st, "lie", &exists, &err), &err);
        assert_false(exists);
        free(lie.data);
    }
    /* The true header is accepted, with or without the module beside it. */
    expect_ok(ri_snapstore_put(f->st, "bare", bare.data, bare.len, NULL, &info, NULL, &err), &err);
    assert_true(info.module_stored);
    ri_snapstore_info_free(&info);
    bytes back = get(f, "bare", true, true);
    assert_bytes_equal(with, back);
    uint64_t checked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_int_equal(bad, 0);
    free(with.data), free(bare.data), free(wasm.data), free(back.data);
}

/* Rewrites snapshot `name`'s manifest with META's module size (and the metadata's
 * "moduleSize") one more or one less, both digests recomputed: what a store written by
 * an earlier build that accepted such an image holds. */
static void forge_module_size(fx *f, const char *name) {
    char path[4400];
    snprintf(path, sizeof path, "%s/snapshots/%s.snap", f->path, name);
    bytes m = read_path(path);
    uint32_t meta_len = (uint32_t)(m.data[8] | m.data[9] << 8 | m.data[10] << 16 | (uint32_t)m.data[11] << 24);
    uint8_t *json = m.data + 56, *body = m.data + 56 + meta_len;
    uint64_t size = get_u64(body + 32);
    char old[32], new_[32];
    snprintf(old, sizeof old, "\"moduleSize\":%llu,", (unsigned long long)size);
    uint64_t forged = size + 1;
    snprintf(new_, sizeof new_, "\"moduleSize\":%llu,", (unsigned long long)forged);
    if (strlen(new_) != strlen(old)) {
        forged = size - 1;
        snprintf(new_, sizeof new_, "\"moduleSize\":%llu,", (unsigned long long)forged);
    }
    assert_int_equal(strlen(new_), strlen(old));
    char *at = NULL;
    for (uint32_t i = 0; i + strlen(old) <= meta_len && !at; i++)
        if (memcmp(json + i, old, strlen(old)) == 0) at = (char *)json + i;
    assert_non_null(at);
    memcpy(at, new_, strlen(new_));
    put_u64(body + 32, forged);
    uint8_t *head = malloc(24 + meta_len);
    assert_non_null(head);
    memcpy(head, m.data, 24);
    memcpy(head + 24, json, meta_len);
    assert_true(ri_snap_sha256(head, 24 + meta_len, m.data + 24));
    free(head);
    assert_true(ri_snap_sha256(m.data, m.len - 32, m.data + m.len - 32));
    write_path(path, m.data, m.len);
    free(m.data);
}

static void test_verify_finds_a_module_of_another_size(void **state) {
    fx *f = *state;
    bytes with = snap(f->sb, true, true), bare = snap(f->sb, false, true);
    put(f, "with", with, NULL);
    put(f, "bare", bare, NULL);
    forge_module_size(f, "bare");
    ri_snapstore_error err;
    ri_snapstore_info info;
    expect_ok(ri_snapstore_get_info(f->st, "bare", &info, &err), &err); /* the manifest itself is whole */
    assert_true(info.module_stored);
    ri_snapstore_info_free(&info);
    uint8_t *out;
    size_t len;
    ri_snapstore_image_options o;
    memset(&o, 0, sizeof o);
    o.include_module = true;
    expect_refused(ri_snapstore_get_image(f->st, "bare", &o, &out, &len, NULL, &err), &err, RI_SNAPSTORE_ERR_CORRUPT,
                   "Corrupt store");
    uint64_t checked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_int_equal(bad, 1);
    assert_int_equal(first.code, RI_SNAPSTORE_ERR_CORRUPT);
    assert_non_null(strstr(first.message, "snapshot 'bare'"));
    assert_non_null(strstr(first.message, "the module"));
    free(with.data), free(bare.data);
}

static void test_v1_and_garbage_refused(void **state) {
    fx *f = *state;
    uint8_t *v1;
    size_t len;
    ri_sandbox_error se;
    assert_true(ri_sandbox_snapshot(f->sb, &v1, &len, &se));
    ri_snapstore_error err;
    assert_false(ri_snapstore_put(f->st, "v1", v1, len, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INPUT);
    assert_non_null(strstr(err.message, "WSNP v1 snapshots cannot be stored"));
    free(v1);
    bytes raw = snap(f->sb, false, false);
    raw.data[raw.len / 2] ^= 1;
    assert_false(ri_snapstore_put(f->st, "bad", raw.data, raw.len, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INPUT);
    assert_non_null(strstr(err.message, "checksum mismatch"));
    assert_false(ri_snapstore_put(f->st, "short", raw.data, 3, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INPUT);
    free(raw.data);
    /* Nothing was stored. */
    ri_snapstore_info *list;
    size_t n;
    expect_ok(ri_snapstore_list(f->st, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 0);
    ri_snapstore_list_free(list, n);
}

/* ---- content addressing ------------------------------------------------------------------------------ */

static void test_pages_stored_once(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 9);
    fill(f->sb, 0, 10, 1);
    bytes a = snap(f->sb, true, false);
    put(f, "a", a, NULL);
    uint64_t after_a = blob_count(f);
    assert_int_equal(after_a, 11); /* 10 pages and the module */
    /* The same state again: nothing new. */
    ri_snapstore_put_stats stats;
    put(f, "a-again", a, &stats);
    assert_int_equal(blob_count(f), after_a);
    assert_int_equal(stats.blobs_written, 0);
    assert_int_equal(stats.pages, 10);
    /* One page changed: one new blob. */
    CALL2(f->sb, "fillPage", 4, 999);
    bytes b = snap(f->sb, false, false);
    put(f, "b", b, &stats);
    assert_int_equal(stats.blobs_written, 1);
    assert_int_equal(blob_count(f), after_a + 1);
    /* Equal pages within one image are one blob too. */
    CALL2(f->sb, "fillPage", 7, 1 + 2);
    CALL2(f->sb, "fillPage", 8, 1 + 2);
    bytes c = snap(f->sb, false, false);
    put(f, "c", c, &stats);
    assert_int_equal(stats.blobs_written, 0); /* pages 7 and 8 now equal page 2 */
    bytes c_back = get(f, "c", false, false);
    assert_bytes_equal(c, c_back);
    free(a.data), free(b.data), free(c.data), free(c_back.data);
}

static void test_zero_pages_not_stored(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 255);
    CALL2(f->sb, "fillPage", 200, 3);
    bytes raw = snap(f->sb, false, false);
    ri_snapstore_put_stats stats;
    put(f, "sparse", raw, &stats);
    assert_int_equal(stats.pages, 1);
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_info(f->st, "sparse", &info, &err), &err);
    assert_int_equal(info.memory_bytes, 256 * (uint64_t)PAGE);
    assert_int_equal(info.stored_pages, 1);
    assert_true(info.manifest_bytes < 2048);
    assert_int_equal(info.image_bytes, raw.len);
    ri_snapstore_info_free(&info);
    free(raw.data);
}

/* ---- metadata, list, names ------------------------------------------------------------------------------- */

static void test_metadata(void **state) {
    fx *f = *state;
    bytes raw = snap(f->sb, true, false);
    const char *tags[] = {"experiment", "ünïcode"};
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.description = "before the experiment\nsecond line";
    o.tags = tags;
    o.ntags = 2;
    o.origin_sandbox = "sandbox-3";
    o.origin_session = "session-A";
    o.created_ns = 1234567890123456789LL;
    ri_snapstore_info info, got;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_put(f->st, "meta", raw.data, raw.len, &o, &info, NULL, &err), &err);
    assert_int_equal(strlen(info.id), RI_SNAPSTORE_ID_HEX);
    expect_ok(ri_snapstore_get_info(f->st, "meta", &got, &err), &err);
    assert_string_equal(got.name, "meta");
    assert_string_equal(got.id, info.id);
    assert_string_equal(got.description, o.description);
    assert_int_equal(got.ntags, 2);
    assert_string_equal(got.tags[1], "ünïcode");
    assert_string_equal(got.origin_sandbox, "sandbox-3");
    assert_string_equal(got.origin_session, "session-A");
    assert_int_equal(got.created_ns, o.created_ns);
    assert_int_equal(got.manifest_bytes, info.manifest_bytes);
    ri_snapstore_info_free(&info);
    ri_snapstore_info_free(&got);
    /* Refusals say what is wrong. */
    const char *dup[] = {"x", "x"};
    o.tags = dup;
    assert_false(ri_snapstore_put(f->st, "m2", raw.data, raw.len, &o, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_NAME);
    assert_non_null(strstr(err.message, "'x' is given twice"));
    o.ntags = 0;
    o.description = "bell \a";
    assert_false(ri_snapstore_put(f->st, "m2", raw.data, raw.len, &o, NULL, NULL, &err));
    assert_non_null(strstr(err.message, "control characters"));
    o.description = NULL;
    o.origin_session = "bad session";
    assert_false(ri_snapstore_put(f->st, "m2", raw.data, raw.len, &o, NULL, NULL, &err));
    assert_non_null(strstr(err.message, "Invalid session"));
    free(raw.data);
}

static void test_names(void **state) {
    fx *f = *state;
    ri_snapstore_error err;
    const char *good[] = {"a", "before-experiment", "v1.2_final", "A9", "x.snap"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) assert_true(ri_snapstore_name_valid(good[i], &err));
    char long_name[200];
    memset(long_name, 'n', 129);
    long_name[129] = '\0';
    const char *bad[] = {"", ".hidden", "-opt", "a/b", "a b", "..", "é", long_name, "tab\t"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(ri_snapstore_name_valid(bad[i], &err));
        assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_NAME);
        assert_non_null(strstr(err.message, "A-Z a-z 0-9 . _ -"));
    }
    assert_false(ri_snapstore_name_valid("a/b", &err));
    assert_non_null(strstr(err.message, "character '/' at position 2"));
    long_name[128] = '\0';
    assert_true(ri_snapstore_name_valid(long_name, &err));
    bytes raw = snap(f->sb, false, false);
    assert_false(ri_snapstore_put(f->st, "../escape", raw.data, raw.len, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_NAME);
    free(raw.data);
    /* Unknown names: exactly seed 003's text. */
    ri_snapstore_info info;
    assert_false(ri_snapstore_get_info(f->st, "nope", &info, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_FOUND);
    assert_string_equal(err.message, "Snapshot not found: nope");
    uint8_t *out;
    size_t len;
    assert_false(ri_snapstore_get_image(f->st, "nope", NULL, &out, &len, NULL, &err));
    assert_string_equal(err.message, "Snapshot not found: nope");
}

static void test_list_order_and_filter(void **state) {
    fx *f = *state;
    bytes raw = snap(f->sb, false, false);
    const char *names[] = {"old", "middle", "new", "tie-b", "tie-a"};
    const int64_t times[] = {100, 200, 300, 400, 400};
    const char *sessions[] = {"s1", "s2", "s1", NULL, "s1"};
    for (int i = 0; i < 5; i++) {
        ri_snapstore_put_options o;
        memset(&o, 0, sizeof o);
        o.created_ns = times[i];
        o.origin_session = sessions[i];
        ri_snapstore_error err;
        expect_ok(ri_snapstore_put(f->st, names[i], raw.data, raw.len, &o, NULL, NULL, &err), &err);
    }
    free(raw.data);
    ri_snapstore_info *list;
    size_t n;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_list(f->st, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 5);
    const char *want[] = {"tie-a", "tie-b", "new", "middle", "old"};
    for (int i = 0; i < 5; i++) assert_string_equal(list[i].name, want[i]);
    ri_snapstore_list_free(list, n);
    ri_snapstore_list_options lo = {"s1", true, 2};
    expect_ok(ri_snapstore_list(f->st, &lo, &list, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_string_equal(list[0].name, "old");
    assert_string_equal(list[1].name, "new");
    ri_snapstore_list_free(list, n);
}

static void test_delete_and_rename(void **state) {
    fx *f = *state;
    bytes raw = snap(f->sb, false, false);
    put(f, "one", raw, NULL);
    put(f, "two", raw, NULL);
    ri_snapstore_error err;
    assert_true(ri_snapstore_rename(f->st, "one", "uno", &err));
    bool exists;
    expect_ok(ri_snapstore_exists(f->st, "one", &exists, &err), &err);
    assert_false(exists);
    expect_ok(ri_snapstore_exists(f->st, "uno", &exists, &err), &err);
    assert_true(exists);
    assert_false(ri_snapstore_rename(f->st, "uno", "two", &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_EXISTS);
    assert_string_equal(err.message, "Snapshot already exists: two");
    assert_false(ri_snapstore_rename(f->st, "ghost", "three", &err));
    assert_string_equal(err.message, "Snapshot not found: ghost");
    assert_true(ri_snapstore_rename(f->st, "uno", "uno", &err));
    bytes back = get(f, "uno", false, false);
    assert_bytes_equal(raw, back);
    bool existed;
    expect_ok(ri_snapstore_delete(f->st, "uno", &existed, &err), &err);
    assert_true(existed);
    expect_ok(ri_snapstore_delete(f->st, "uno", &existed, &err), &err);
    assert_false(existed);
    /* Saving over an existing name needs replace. */
    assert_false(ri_snapstore_put(f->st, "two", raw.data, raw.len, NULL, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_EXISTS);
    free(raw.data), free(back.data);
}

/* ---- damage ---------------------------------------------------------------------------------------------- */

static void blob_file(fx *f, const uint8_t *hash, char *out, size_t cap) {
    char hex[65];
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) hex[2 * i] = digits[hash[i] >> 4], hex[2 * i + 1] = digits[hash[i] & 15];
    hex[64] = '\0';
    snprintf(out, cap, "%s/blobs/%.2s/%s", f->path, hex, hex);
}

static void test_damaged_blob_refused(void **state) {
    fx *f = *state;
    CALL2(f->sb, "fillPage", 0, 77);
    bytes raw = snap(f->sb, false, false);
    put(f, "victim", raw, NULL);
    uint8_t hash[32];
    ri_snap_sha256(raw.data + (raw.len - 20 - 3 * 16 - 8 - 8 - 16 - 4 - 65536), 65536, hash); /* located below */
    /* Find page 0's bytes in the raw image: the only stored page. */
    ri_snap_image img;
    ri_snap_error se;
    assert_true(ri_snap_read(raw.data, raw.len, &img, &se));
    assert_true(ri_snap_sha256(img.memories[0].payload, PAGE, hash));
    ri_snap_image_free(&img);
    char path[4400];
    blob_file(f, hash, path, sizeof path);
    bytes blob = read_path(path);
    ri_snapstore_error err;
    uint8_t *out;
    size_t len;
    /* A flipped byte in the frame. */
    blob.data[blob.len / 2] ^= 0x40;
    write_path(path, blob.data, blob.len);
    assert_false(ri_snapstore_get_image(f->st, "victim", NULL, &out, &len, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "Corrupt store: blob"));
    assert_non_null(strstr(err.message, "page 0 of memory 0 of snapshot 'victim'"));
    /* Truncated. */
    blob.data[blob.len / 2] ^= 0x40;
    write_path(path, blob.data, blob.len - 10);
    assert_false(ri_snapstore_get_image(f->st, "victim", NULL, &out, &len, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "not one complete zstd frame"));
    /* Another page's (valid) blob in its place: decompresses, but not to its hash. */
    uint8_t other[PAGE];
    memset(other, 0x5A, sizeof other);
    uint8_t other_hash[32];
    assert_true(ri_snap_sha256(other, PAGE, other_hash));
    CALL2(f->sb, "fillPage", 0, 78);
    bytes raw2 = snap(f->sb, false, false);
    put(f, "other", raw2, NULL);
    assert_true(ri_snap_read(raw2.data, raw2.len, &img, &se));
    assert_true(ri_snap_sha256(img.memories[0].payload, PAGE, other_hash));
    ri_snap_image_free(&img);
    char path2[4400];
    blob_file(f, other_hash, path2, sizeof path2);
    bytes blob2 = read_path(path2);
    write_path(path, blob2.data, blob2.len);
    assert_false(ri_snapstore_get_image(f->st, "victim", NULL, &out, &len, NULL, &err));
    assert_non_null(strstr(err.message, "does not match its hash"));
    /* Missing. */
    assert_int_equal(unlink(path), 0);
    assert_false(ri_snapstore_get_image(f->st, "victim", NULL, &out, &len, NULL, &err));
    assert_non_null(strstr(err.message, "is missing"));
    /* verify finds it; gc refuses nothing (the manifest is fine). */
    uint64_t checked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_int_equal(bad, 1);
    assert_non_null(strstr(first.message, "is missing"));
    free(raw.data), free(raw2.data), free(blob.data), free(blob2.data);
}

static void test_damaged_manifest_refused(void **state) {
    fx *f = *state;
    const char *tags[] = {"t"};
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.tags = tags;
    o.ntags = 1;
    bytes raw = snap(f->sb, false, false);
    ri_snapstore_error err;
    expect_ok(ri_snapstore_put(f->st, "m", raw.data, raw.len, &o, NULL, NULL, &err), &err);
    char path[4400];
    snprintf(path, sizeof path, "%s/snapshots/m.snap", f->path);
    bytes file = read_path(path);
    ri_snapstore_info info;
    /* Each single flipped byte is caught, wherever it is. */
    for (size_t at = 0; at < file.len; at += 7) {
        file.data[at] ^= 0x01;
        write_path(path, file.data, file.len);
        assert_false(ri_snapstore_get_info(f->st, "m", &info, &err));
        assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
        assert_non_null(strstr(err.message, "manifest of snapshot 'm'"));
        file.data[at] ^= 0x01;
    }
    /* Every truncation is caught. */
    for (size_t keep = 0; keep < file.len; keep += 11) {
        write_path(path, file.data, keep);
        assert_false(ri_snapstore_get_info(f->st, "m", &info, &err));
        assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
    }
    /* list reports a damaged head by name; gc will not guess. */
    write_path(path, file.data, 40);
    ri_snapstore_info *list;
    size_t n;
    assert_false(ri_snapstore_list(f->st, NULL, &list, &n, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "'m'"));
    assert_false(ri_snapstore_gc(f->st, NULL, &err));
    assert_non_null(strstr(err.message, "Cannot collect garbage: snapshot 'm'"));
    /* Deleting the damaged one puts things right. */
    expect_ok(ri_snapstore_delete(f->st, "m", NULL, &err), &err);
    expect_ok(ri_snapstore_gc(f->st, NULL, &err), &err);
    write_path(path, file.data, file.len);
    expect_ok(ri_snapstore_get_info(f->st, "m", &info, &err), &err);
    ri_snapstore_info_free(&info);
    free(raw.data), free(file.data);
}

/* ---- gc, usage, cap --------------------------------------------------------------------------------------- */

static void test_temp_files_ignored_and_collected(void **state) {
    fx *f = *state;
    bytes raw = snap(f->sb, false, false);
    put(f, "real", raw, NULL);
    char p[4400];
    snprintf(p, sizeof p, "%s/snapshots/.tmp-deadbeef00000000", f->path);
    write_path(p, (const uint8_t *)"half a manifest", 15);
    snprintf(p, sizeof p, "%s/blobs/ab/.tmp-0123456789abcdef", f->path);
    write_path(p, (const uint8_t *)"half a blob", 11);
    ri_snapstore_info *list;
    size_t n;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_list(f->st, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].name, "real");
    ri_snapstore_list_free(list, n);
    ri_snapstore_usage u;
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    assert_int_equal(u.temp_files, 2);
    assert_int_equal(u.snapshots, 1);
    ri_snapstore_gc_stats gs;
    expect_ok(ri_snapstore_gc(f->st, &gs, &err), &err);
    assert_int_equal(gs.temp_removed, 2);
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    assert_int_equal(u.temp_files, 0);
    snprintf(p, sizeof p, "%s/snapshots", f->path);
    assert_int_equal(count_entries(p, ".tmp-"), 0);
    free(raw.data);
}

static void test_gc_removes_only_garbage(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 3);
    fill(f->sb, 0, 4, 10);
    bytes a = snap(f->sb, true, false);
    put(f, "a", a, NULL);
    CALL2(f->sb, "fillPage", 3, 555);
    bytes b = snap(f->sb, false, false);
    put(f, "b", b, NULL);
    assert_int_equal(blob_count(f), 6); /* 4 + 1 pages, the module */
    ri_snapstore_error err;
    ri_snapstore_gc_stats gs;
    expect_ok(ri_snapstore_gc(f->st, &gs, &err), &err);
    assert_int_equal(gs.blobs_removed, 0);
    assert_int_equal(gs.blobs_kept, 6);
    expect_ok(ri_snapstore_delete(f->st, "a", NULL, &err), &err);
    expect_ok(ri_snapstore_gc(f->st, &gs, &err), &err);
    assert_int_equal(gs.blobs_removed, 1); /* a's page 3; the module stays (b names it) */
    assert_int_equal(gs.snapshots, 1);
    bytes back = get(f, "b", false, false);
    assert_bytes_equal(b, back);
    expect_ok(ri_snapstore_delete(f->st, "b", NULL, &err), &err);
    expect_ok(ri_snapstore_gc(f->st, &gs, &err), &err);
    assert_int_equal(blob_count(f), 0);
    ri_snapstore_usage u;
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    assert_int_equal(u.total_bytes, 0);
    free(a.data), free(b.data), free(back.data);
}

static void test_usage_accounting(void **state) {
    fx *f = *state;
    fill(f->sb, 0, 1, 42);
    bytes raw = snap(f->sb, true, false);
    ri_snapstore_put_stats stats;
    put(f, "u", raw, &stats);
    ri_snapstore_usage u;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    assert_int_equal(u.snapshots, 1);
    assert_int_equal(u.blobs, 2);
    assert_int_equal(u.total_bytes, u.blob_bytes + u.manifest_bytes);
    assert_int_equal(u.total_bytes, stats.bytes_written); /* everything the save wrote, nothing else */
    assert_true(u.disk_bytes >= u.total_bytes / 2);
    assert_int_equal(u.max_bytes, 0);
    free(raw.data);
}

static void test_cap_evicts_oldest(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 9);
    char name[16];
    /* Ten snapshots, each of one page of its own (64 KiB, incompressible). */
    for (int i = 0; i < 10; i++) {
        CALL2(f->sb, "fillPage", 0, 1000 + i);
        bytes raw = snap(f->sb, false, false);
        snprintf(name, sizeof name, "s%d", i);
        ri_snapstore_put_options o;
        memset(&o, 0, sizeof o);
        o.created_ns = 1000 + i;
        ri_snapstore_error err;
        expect_ok(ri_snapstore_put(f->st, name, raw.data, raw.len, &o, NULL, NULL, &err), &err);
        free(raw.data);
    }
    ri_snapstore_usage u;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    uint64_t cap = u.total_bytes / 2;
    ri_snapstore_gc_stats gs;
    expect_ok(ri_snapstore_set_max_bytes(f->st, cap, &gs, &err), &err);
    assert_true(gs.evicted > 0);
    assert_true(gs.total_bytes <= cap);
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    assert_true(u.total_bytes <= cap);
    assert_int_equal(u.max_bytes, cap);
    /* The oldest went, the newest stayed, and the survivors restore. */
    bool exists;
    expect_ok(ri_snapstore_exists(f->st, "s0", &exists, &err), &err);
    assert_false(exists);
    expect_ok(ri_snapstore_exists(f->st, "s9", &exists, &err), &err);
    assert_true(exists);
    bytes back = get(f, "s9", false, false);
    bytes now = snap(f->sb, false, false);
    assert_bytes_equal(now, back);
    free(back.data);
    /* A save over the cap evicts (the new snapshot itself is never evicted). */
    CALL2(f->sb, "fillPage", 1, 77777);
    bytes raw = snap(f->sb, false, false);
    ri_snapstore_put_stats ps;
    put(f, "newest", raw, &ps);
    assert_true(ps.evicted > 0);
    assert_string_equal(ps.warning, "");
    expect_ok(ri_snapstore_exists(f->st, "newest", &exists, &err), &err);
    assert_true(exists);
    expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
    assert_true(u.total_bytes <= cap);
    /* The cap persists: another handle sees it. */
    ri_snapstore *again = ri_snapstore_open(f->path, NULL, &err);
    expect_ok(again != NULL, &err);
    expect_ok(ri_snapstore_usage_of(again, &u, &err), &err);
    assert_int_equal(u.max_bytes, cap);
    ri_snapstore_close(again);
    expect_ok(ri_snapstore_set_max_bytes(f->st, 0, NULL, &err), &err);
    free(raw.data), free(now.data);
}

/* ---- the page cache ---------------------------------------------------------------------------------------- */

static void test_cache_skips_unchanged_pages(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 99);
    fill(f->sb, 0, 100, 7);
    ri_snapstore_cache *cache = ri_snapstore_cache_new();
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.cache = cache;
    o.replace = true;
    ri_snapstore_put_stats stats;
    ri_snapstore_error err;
    bytes first = snap(f->sb, false, false);
    expect_ok(ri_snapstore_put(f->st, "c1", first.data, first.len, &o, NULL, &stats, &err), &err);
    assert_int_equal(stats.pages, 100);
    assert_int_equal(stats.pages_hashed, 100);
    CALL2(f->sb, "fillPage", 50, 1);
    CALL2(f->sb, "zeroPage", 60, 0);
    bytes second = snap(f->sb, false, false);
    expect_ok(ri_snapstore_put(f->st, "c2", second.data, second.len, &o, NULL, &stats, &err), &err);
    assert_int_equal(stats.pages, 99);
    assert_int_equal(stats.pages_hashed, 1);
    assert_int_equal(stats.blobs_written, 1);
    /* A cache never makes a wrong hash: both restore exactly. */
    bytes b1 = get(f, "c1", false, false), b2 = get(f, "c2", false, false);
    assert_bytes_equal(first, b1);
    assert_bytes_equal(second, b2);
    /* A blob deleted behind the cache's back is written again, not assumed. */
    expect_ok(ri_snapstore_delete(f->st, "c1", NULL, &err), &err);
    expect_ok(ri_snapstore_delete(f->st, "c2", NULL, &err), &err);
    expect_ok(ri_snapstore_gc(f->st, NULL, &err), &err);
    expect_ok(ri_snapstore_put(f->st, "c3", second.data, second.len, &o, NULL, &stats, &err), &err);
    assert_int_equal(stats.pages_hashed, 0);
    assert_int_equal(stats.blobs_written, 99);
    bytes b3 = get(f, "c3", false, false);
    assert_bytes_equal(second, b3);
    ri_snapstore_cache_free(cache);
    free(first.data), free(second.data), free(b1.data), free(b2.data), free(b3.data);
}

static void test_abort_before_start(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 63);
    fill(f->sb, 0, 64, 3);
    bytes raw = snap(f->sb, false, false);
    atomic_bool flag;
    atomic_init(&flag, true);
    ri_snapstore_abort ab = {&flag, NULL, NULL};
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.abort = &ab;
    ri_snapstore_error err;
    assert_false(ri_snapstore_put(f->st, "x", raw.data, raw.len, &o, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    assert_string_equal(err.message, "Aborted before it started: nothing was done");
    assert_int_equal(blob_count(f), 0);
    free(raw.data);
}

static bool after_three(void *user) { return ++*(int *)user > 3; }

/* A wait for the lock is cancellable: another holder keeps the exclusive lock (as a
 * collection would), and the save gives up when its abort signal says so. */
static void test_abort_while_waiting_for_the_lock(void **state) {
    fx *f = *state;
    char p[4200];
    snprintf(p, sizeof p, "%s/lock", f->path);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    bytes raw = snap(f->sb, false, false);
    int calls = 0;
    ri_snapstore_abort ab = {NULL, after_three, &calls};
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.abort = &ab;
    ri_snapstore_error err;
    assert_false(ri_snapstore_put(f->st, "waiting", raw.data, raw.len, &o, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    assert_non_null(strstr(err.message, "waiting for the store's lock"));
    assert_int_equal(close(fd), 0); /* releases the lock */
    calls = -1000;
    expect_ok(ri_snapstore_put(f->st, "waiting", raw.data, raw.len, &o, NULL, NULL, &err), &err);
    free(raw.data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_byte_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_compressed_image_with_module, setup, teardown),
        cmocka_unit_test_setup_teardown(test_image_without_module, setup, teardown),
        cmocka_unit_test_setup_teardown(test_module_size_checked_against_the_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_finds_a_module_of_another_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v1_and_garbage_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pages_stored_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_pages_not_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_order_and_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_and_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_blob_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_manifest_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_temp_files_ignored_and_collected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_removes_only_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cap_evicts_oldest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_skips_unchanged_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_before_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_while_waiting_for_the_lock, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
