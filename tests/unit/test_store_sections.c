/*
 * The store gives back exactly the image it was given: a paused call (section FRMS) and
 * sections it does not know (optional ones a newer writer may add) come back byte for
 * byte, with their flags and in their places, through put/get, export/import, the
 * snapshot manager and the snapshotter; the restored call resumes to the result of the
 * uninterrupted one. Fixtures: tests/wat/suspend.wat (a call paused by gas),
 * tests/wat/store_state.wat.
 */
#include "test_store_util.h"

#include "ri/engine.h"

typedef struct fx {
    char *dir;
    char path[4096];
    ri_snapstore *st;
    ri_sandboxes *factory;
} fx;

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    f->dir = temp_dir();
    f->st = new_store(f->dir, f->path, sizeof f->path);
    f->factory = ri_sandboxes_new();
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    ri_sandboxes_free(f->factory);
    ri_snapstore_close(f->st);
    remove_tree(f->dir);
    free(f);
    return 0;
}

/* ---- a paused call ------------------------------------------------------------------------------ */

/* tests/wat/suspend.wat's imports: env.yield (2i + 1, never yields here), env.reenter. */
static int host_double(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = ri_val_i32(args[0].of.i32 * 2 + 1);
    return 0;
}

static int host_same(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = args[0];
    return 0;
}

static ri_sandbox_config paused_config(uint64_t max_gas) {
    static const ri_valtype i32[1] = {RI_I32};
    static ri_host_function hosts[2];
    hosts[0] = (ri_host_function){"yield", 1, i32, 1, i32, host_double, NULL};
    hosts[1] = (ri_host_function){"reenter", 1, i32, 1, i32, host_same, NULL};
    ri_sandbox_config c = store_config();
    c.max_gas = max_gas;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.host_functions = hosts;
    c.nhost_functions = 2;
    return c;
}

#define SLICE 700u
#define FULL_GAS 10000000u

/* A sandbox (loaded with suspend.wat unless bare) whose executions pause on gas. */
static ri_sandbox *pausing_sandbox(fx *f, uint64_t gas, bool load) {
    ri_sandbox_config c = paused_config(gas);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f->factory, &c, &err);
    assert_non_null(sb);
    if (load) load_fixture(sb, "suspend");
    assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &err));
    return sb;
}

/* mix(12) run whole: its value. */
static char *whole_value(fx *f) {
    ri_sandbox *sb = pausing_sandbox(f, FULL_GAS, true);
    ri_sandbox_result r = ri_sandbox_execute(sb, "mix", "[12]");
    assert_true(r.ok);
    char *value = strdup(r.value_json);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    return value;
}

/* A sandbox paused in mix(12) after one slice. */
static ri_sandbox *paused_sandbox(fx *f) {
    ri_sandbox *sb = pausing_sandbox(f, SLICE, true);
    ri_sandbox_result r = ri_sandbox_execute(sb, "mix", "[12]");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    assert_true(ri_sandbox_has_pending_call(sb));
    return sb;
}

/* Resumes sb's pending call to its end: its value. */
static char *resume_to_end(ri_sandbox *sb) {
    assert_true(ri_sandbox_has_pending_call(sb));
    ri_sandbox_result r = ri_sandbox_resume(sb, SLICE);
    for (int n = 0; !r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL; n++) {
        assert_true(n < 100000);
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(sb, SLICE);
    }
    if (!r.ok) print_error("resume: %s\n", r.error.message);
    assert_true(r.ok);
    char *value = strdup(r.value_json);
    ri_sandbox_result_free(&r);
    return value;
}

/* image restored into a fresh sandbox (created, not loaded: the image embeds its module),
 * resumed to the end: its value. */
static char *resume_image(fx *f, bytes image) {
    ri_sandbox *sb = pausing_sandbox(f, SLICE, false);
    ri_sandbox_error err;
    bool ok = ri_sandbox_restore(sb, image.data, image.len, &err);
    if (!ok) print_error("restore: %s\n", err.message);
    assert_true(ok);
    char *value = resume_to_end(sb);
    ri_sandbox_free(sb);
    return value;
}

static bool has_section(bytes image, const char tag[4]) {
    ri_snap_image img;
    ri_snap_error e;
    if (!ri_snap_read(image.data, image.len, &img, &e)) {
        print_error("read: %s\n", e.message);
        fail();
    }
    bool found = false;
    for (uint32_t i = 0; i < img.nsections; i++)
        if (memcmp(img.sections[i].tag, tag, 4) == 0) found = true;
    ri_snap_image_free(&img);
    return found;
}

static void test_paused_call_comes_back(void **state) {
    fx *f = *state;
    char *want = whole_value(f);
    ri_sandbox *sb = paused_sandbox(f);
    /* Every writer option, each put and got back the same way. */
    for (int module = 0; module < 2; module++) {
        for (int compress = 0; compress < 2; compress++) {
            bytes image = snap(sb, module, compress);
            assert_true(has_section(image, "FRMS"));
            store_put(f->st, "paused", image, NULL);
            bytes back = store_get(f->st, "paused", module, compress);
            assert_bytes_equal(image, back);
            free(image.data), free(back.data);
        }
    }
    /* Saved with the module, got back in every form: what the sandbox writes. */
    bytes full = snap(sb, true, false);
    store_put(f->st, "paused", full, NULL);
    for (int module = 0; module < 2; module++) {
        for (int compress = 0; compress < 2; compress++) {
            bytes image = snap(sb, module, compress), back = store_get(f->st, "paused", module, compress);
            assert_bytes_equal(image, back);
            free(image.data), free(back.data);
        }
    }
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_info(f->st, "paused", &info, &err), &err);
    assert_int_equal(info.status, RI_SNAP_STATUS_SUSPENDED);
    ri_snapstore_info_free(&info);
    /* The restored call resumes to the uninterrupted result. */
    bytes back = store_get(f->st, "paused", true, true);
    char *got = resume_image(f, back);
    assert_string_equal(got, want);
    free(got), free(back.data), free(full.data), free(want);
    ri_sandbox_free(sb);
}

/* imageBytes counts FRMS: the uncompressed image without MODL is exactly that long. */
static void test_paused_image_size(void **state) {
    fx *f = *state;
    ri_sandbox *sb = paused_sandbox(f);
    bytes raw = snap(sb, false, false);
    store_put(f->st, "p", raw, NULL);
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_info(f->st, "p", &info, &err), &err);
    assert_int_equal(info.image_bytes, raw.len);
    ri_snapstore_info_free(&info);
    free(raw.data);
    ri_sandbox_free(sb);
}

/* ---- sections the store does not know -------------------------------------------------------------- */

/* image with a section (tag, flags, content) inserted right after the first section
 * tagged `after`; the checksum recomputed. */
static bytes insert_after(bytes image, const char after[4], const char tag[4], uint32_t flags, const char *content) {
    ri_snap_image img;
    ri_snap_error e;
    assert_true(ri_snap_read(image.data, image.len, &img, &e));
    size_t at = 0;
    for (uint32_t i = 0; i < img.nsections && !at; i++)
        if (memcmp(img.sections[i].tag, after, 4) == 0)
            at = (size_t)(img.sections[i].offset + RI_SNAP_SECTION_HEADER_BYTES + img.sections[i].length);
    ri_snap_image_free(&img);
    assert_true(at > 0);
    size_t n = strlen(content);
    bytes out = {malloc(image.len + 16 + n), image.len + 16 + n};
    assert_non_null(out.data);
    memcpy(out.data, image.data, at);
    uint8_t *h = out.data + at;
    memcpy(h, tag, 4);
    for (int i = 0; i < 4; i++) h[4 + i] = (uint8_t)(flags >> (8 * i));
    for (int i = 0; i < 8; i++) h[8 + i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(h + 16, content, n);
    memcpy(h + 16 + n, image.data + at, image.len - at);
    uint32_t crc = ri_snap_crc32c(out.data, out.len - 20);
    for (int i = 0; i < 4; i++) out.data[out.len - 4 + i] = (uint8_t)(crc >> (8 * i));
    return out;
}

/* The same unknown sections in the same places: after META, after MEMS, after SEGS. */
static bytes with_unknown_sections(bytes image, const char *last_known) {
    bytes a = insert_after(image, "META", "XTRA", 0, "a future section");
    bytes b = insert_after(a, "MEMS", "XTRB", 2, ""); /* flags other than 'required' kept too */
    bytes c = insert_after(b, last_known, "XTRC", 0, "{\"more\": [1, 2, 3]}");
    free(a.data), free(b.data);
    return c;
}

static void test_unknown_sections_come_back(void **state) {
    fx *f = *state;
    ri_sandbox *sb = new_sandbox(f->factory, "store_state");
    CALL2(sb, "fillPage", 0, 3);
    CALL1(sb, "setG", 5);
    bytes holder = snap(sb, true, true);
    store_put(f->st, "holder", holder, NULL); /* the store holds the module: images without it get it back */
    free(holder.data);
    for (int module = 0; module < 2; module++) {
        for (int compress = 0; compress < 2; compress++) {
            bytes plain = snap(sb, module, compress), image = with_unknown_sections(plain, "SEGS");
            store_put(f->st, "x", image, NULL);
            bytes back = store_get(f->st, "x", module, compress);
            assert_bytes_equal(image, back);
            /* Got the other way round: the module in or out, the sections where they were. */
            bytes other_plain = snap(sb, !module, compress), other = with_unknown_sections(other_plain, "SEGS");
            bytes other_back = store_get(f->st, "x", !module, compress);
            assert_bytes_equal(other, other_back);
            free(plain.data), free(image.data), free(back.data), free(other_plain.data), free(other.data);
            free(other_back.data);
        }
    }
    ri_sandbox_free(sb);
    /* After FRMS too, in a paused image; and the call still resumes. */
    char *want = whole_value(f);
    ri_sandbox *p = paused_sandbox(f);
    bytes plain = snap(p, true, true), image = with_unknown_sections(plain, "FRMS");
    store_put(f->st, "px", image, NULL);
    bytes back = store_get(f->st, "px", true, true);
    assert_bytes_equal(image, back);
    char *got = resume_image(f, back);
    assert_string_equal(got, want);
    free(got), free(want), free(plain.data), free(image.data), free(back.data);
    ri_sandbox_free(p);
}

/* Images with only the sections the store rebuilds keep the manifest format earlier
 * builds read (version 1); the others are version 2. */
static uint16_t manifest_version(fx *f, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/snapshots/%s.snap", f->path, name);
    bytes b = read_path(path);
    uint16_t v = (uint16_t)(b.data[4] | b.data[5] << 8);
    free(b.data);
    return v;
}

static void test_manifest_versions(void **state) {
    fx *f = *state;
    ri_sandbox *sb = new_sandbox(f->factory, "store_state");
    bytes plain = snap(sb, true, true);
    store_put(f->st, "plain", plain, NULL);
    assert_int_equal(manifest_version(f, "plain"), 1);
    ri_sandbox *p = paused_sandbox(f);
    bytes paused = snap(p, false, false);
    store_put(f->st, "paused", paused, NULL);
    assert_int_equal(manifest_version(f, "paused"), 2);
    /* Both verify, both collect without loss. */
    uint64_t checked, bad;
    ri_snapstore_error first, err;
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_int_equal(bad, 0);
    ri_snapstore_gc_stats gc;
    expect_ok(ri_snapstore_gc(f->st, &gc, &err), &err);
    bytes back = store_get(f->st, "paused", false, false);
    assert_bytes_equal(paused, back);
    free(plain.data), free(paused.data), free(back.data);
    ri_sandbox_free(sb);
    ri_sandbox_free(p);
}

/* A damaged layout is refused as such, not misread: snapshot `name`'s manifest with the
 * section tagged `tag` given new_tag and flags, its digest recomputed (the head's digest
 * does not cover the body). */
static void forge_layout(fx *f, const char *name, const char tag[4], const char new_tag[4], uint32_t flags) {
    char path[4200];
    snprintf(path, sizeof path, "%s/snapshots/%s.snap", f->path, name);
    bytes m = read_path(path);
    uint8_t *at = NULL;
    for (size_t i = m.len - 32 - 16; i > 56 && !at; i--)
        if (memcmp(m.data + i, tag, 4) == 0) at = m.data + i;
    assert_non_null(at);
    memcpy(at, new_tag, 4);
    for (int i = 0; i < 4; i++) at[4 + i] = (uint8_t)(flags >> (8 * i));
    assert_true(ri_snap_sha256(m.data, m.len - 32, m.data + m.len - 32));
    write_path(path, m.data, m.len);
    free(m.data);
}

static void test_damaged_layout_refused(void **state) {
    fx *f = *state;
    ri_sandbox *sb = new_sandbox(f->factory, "store_state");
    bytes plain = snap(sb, false, false), image = with_unknown_sections(plain, "SEGS");
    static const struct {
        char tag[4], new_tag[4];
        uint32_t flags;
        const char *why;
    } cases[] = {
        {"XTRC", "XTRC", 1, "unknown and required"},
        {"XTRC", "RIMD", 0, "which the store never keeps"},
        {"XTRB", "MEMS", 1, "repeated or out of order"},
        {"XTRA", "SEGS", 1, "with content although the store rebuilds it"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        store_put(f->st, "x", image, NULL);
        forge_layout(f, "x", cases[i].tag, cases[i].new_tag, cases[i].flags);
        ri_snapstore_info info;
        ri_snapstore_error err;
        expect_refused(ri_snapstore_get_info(f->st, "x", &info, &err), &err, RI_SNAPSTORE_ERR_CORRUPT, cases[i].why);
        uint64_t checked, bad;
        ri_snapstore_error first;
        expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
        assert_int_equal(bad, 1);
    }
    free(plain.data), free(image.data);
    ri_sandbox_free(sb);
}

/* ---- export and import ------------------------------------------------------------------------------ */

static void test_export_import_keeps_the_call(void **state) {
    fx *f = *state;
    char *want = whole_value(f);
    ri_sandbox *p = paused_sandbox(f);
    bytes plain = snap(p, true, true), image = with_unknown_sections(plain, "FRMS");
    store_put(f->st, "p", image, NULL);
    char other_dir[4200];
    snprintf(other_dir, sizeof other_dir, "%s/other", f->dir);
    ri_snapstore_options so = {true};
    ri_snapstore_error err;
    ri_snapstore *other = ri_snapstore_open(other_dir, &so, &err);
    expect_ok(other != NULL, &err);
    for (int format = 0; format < 2; format++) {
        bytes exported = {NULL, 0};
        expect_ok(ri_snapstore_export(f->st, "p", (ri_snapstore_export_format)format, &exported.data, &exported.len,
                                      &err),
                  &err);
        if (format == RI_SNAPSTORE_EXPORT_BINARY) {
            assert_true(has_section(exported, "FRMS"));
            /* The export restores and resumes alone (RIMD is skipped). */
            char *got = resume_image(f, exported);
            assert_string_equal(got, want);
            free(got);
        }
        ri_snapstore_put_options po;
        memset(&po, 0, sizeof po);
        po.replace = true;
        expect_ok(ri_snapstore_import(other, exported.data, exported.len, "q", &po, NULL, &err), &err);
        bytes back = store_get(other, "q", true, true);
        assert_bytes_equal(image, back);
        /* Exported again: one RIMD (the store's metadata is not kept as a section of its own). */
        bytes again = {NULL, 0};
        expect_ok(ri_snapstore_export(other, "q", RI_SNAPSTORE_EXPORT_BINARY, &again.data, &again.len, &err), &err);
        ri_snap_image img;
        ri_snap_error e;
        assert_true(ri_snap_read(again.data, again.len, &img, &e));
        int rimd = 0;
        for (uint32_t i = 0; i < img.nsections; i++) rimd += memcmp(img.sections[i].tag, "RIMD", 4) == 0;
        ri_snap_image_free(&img);
        assert_int_equal(rimd, 1);
        free(exported.data), free(back.data), free(again.data);
    }
    ri_snapstore_close(other);
    free(plain.data), free(image.data), free(want);
    ri_sandbox_free(p);
}

/* ---- the manager and the snapshotter ---------------------------------------------------------------- */

static void test_manager_keeps_the_call(void **state) {
    fx *f = *state;
    char *want = whole_value(f);
    ri_sandbox *p = paused_sandbox(f);
    ri_snapstore_error err;
    ri_snapshots *m = ri_snapshots_new(f->st, p, NULL, &err);
    expect_ok(m != NULL, &err);
    expect_ok(ri_snapshots_save(m, "paused", "a paused call", NULL, 0, NULL, &err), &err);
    bytes saved = snap(p, false, false);
    /* The call goes on to its end; restoring the snapshot brings it back paused. */
    char *first = resume_to_end(p);
    assert_string_equal(first, want);
    assert_false(ri_sandbox_has_pending_call(p));
    ri_snapstore_info info;
    expect_ok(ri_snapshots_restore(m, "paused", &info, &err), &err);
    assert_int_equal(info.status, RI_SNAP_STATUS_SUSPENDED);
    ri_snapstore_info_free(&info);
    assert_true(ri_sandbox_has_pending_call(p));
    bytes restored = snap(p, false, false);
    assert_bytes_equal(saved, restored);
    char *second = resume_to_end(p);
    assert_string_equal(second, want);
    /* Its export resumes elsewhere. */
    bytes exported = {NULL, 0};
    expect_ok(ri_snapshots_export(m, "paused", RI_SNAPSTORE_EXPORT_BINARY, &exported.data, &exported.len, &err), &err);
    char *third = resume_image(f, exported);
    assert_string_equal(third, want);
    ri_snapshots_free(m);
    free(first), free(second), free(third), free(want), free(saved.data), free(restored.data), free(exported.data);
    ri_sandbox_free(p);
}

static void test_snapshotter_keeps_the_call(void **state) {
    fx *f = *state;
    char *want = whole_value(f);
    ri_sandbox *p = paused_sandbox(f);
    ri_snapshotter_config c;
    memset(&c, 0, sizeof c);
    c.session_id = "session-A";
    c.factory = f->factory;
    ri_snapstore_error err;
    ri_snapshotter *s = ri_snapshotter_new(f->st, &c, &err);
    expect_ok(s != NULL, &err);
    ri_snapshot_ref ref;
    expect_ok(ri_snapshotter_snapshot(s, p, NULL, &ref, &err), &err);
    bytes saved = snap(p, true, false);
    ri_sandbox_config config = paused_config(SLICE);
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.config = &config;
    for (int branch = 0; branch < 2; branch++) {
        ri_sandbox *r = branch ? ri_snapshotter_branch(s, &ref, &call, &err) : ri_snapshotter_restore(s, &ref, &call, &err);
        expect_ok(r != NULL, &err);
        assert_true(ri_sandbox_has_pending_call(r));
        bytes restored = snap(r, true, false);
        assert_bytes_equal(saved, restored);
        char *got = resume_to_end(r);
        assert_string_equal(got, want);
        free(got), free(restored.data);
        ri_sandbox_free(r);
    }
    ri_snapshotter_free(s);
    free(want), free(saved.data);
    ri_sandbox_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_paused_call_comes_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paused_image_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_sections_come_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_layout_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_import_keeps_the_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manager_keeps_the_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshotter_keeps_the_call, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
