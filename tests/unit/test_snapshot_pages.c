/*
 * Deltas written from the live state (ri_sandbox_written_pages, ri_sandbox_snapshot_pages,
 * ri_snap_write_delta): after an in-memory checkpoint the written pages are found by page
 * tracking; a delta of exactly those pages on a parent image, applied to the parent, is
 * byte for byte the full snapshot, and restores the same state; a page set that misses a
 * changed page gives another image (the page set is what is stored); bad arguments are
 * refused. Fixture: tests/wat/fork_mem.wat.
 */
#include "fork_util.h"

#define BIT(m, p) (((m)[(p) / 8] >> ((p) % 8)) & 1u)

static void delta_of_written_pages_with(bool uncompressed) {
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(1024ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *sb = new_loaded(f, &c);
    call_ok(sb, "grow", "[63]");
    call_ok(sb, "touch", "[0,64,1,3]");
    ri_snapshot_options o = {RI_SNAPSHOT_V2, true, uncompressed};
    ri_sandbox_error err;
    blob parent;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &parent.data, &parent.len, &err));
    uint8_t sha[32];
    assert_true(ri_snap_sha256(parent.data, parent.len, sha));

    /* The baseline: an in-memory checkpoint; the memory is now backed by its image. */
    ri_checkpoint *cp = ri_sandbox_checkpoint(sb, NULL, &err);
    assert_non_null(cp);
    assert_true(ri_sandbox_backed_by(sb, cp));

    /* Changes of every kind: pages written, a page zeroed, growth, global, table, PRNG. */
    call_ok(sb, "touch", "[5,3,10,9]"); /* pages 5, 15, 25 */
    call_ok(sb, "store", "[655360,0]"); /* page 10 back to all zero */
    call_ok(sb, "grow", "[4]");
    call_ok(sb, "store", "[4259840,8]"); /* page 65 */
    call_ok(sb, "mix", "[2]");

    uint8_t written[16];
    uint32_t pages = 0;
    assert_int_equal(ri_sandbox_written_pages(sb, written, 4, &pages, &err), -1); /* 68 pages need 9 bytes */
    int64_t n = ri_sandbox_written_pages(sb, written, sizeof written, &pages, &err);
    if (n < 0) print_error("written pages: %s\n", err.message);
    assert_true(n >= 5);
    assert_int_equal(pages, 68);
    const uint32_t changed[] = {5, 10, 15, 25, 65};
    for (size_t i = 0; i < sizeof changed / sizeof *changed; i++) assert_true(BIT(written, changed[i]));
    assert_int_equal(ri_sandbox_written_pages(sb, NULL, 0, NULL, &err), n);
    assert_true(ri_sandbox_backed_by(sb, cp)); /* writes do not move the backing */

    blob full, delta;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &full.data, &full.len, &err));
    assert_false(ri_sandbox_snapshot_pages(sb, &o, written, 8, sha, parent.len, &delta.data, &delta.len, &err));
    assert_non_null(strstr(err.message, "cannot cover"));
    bool ok = ri_sandbox_snapshot_pages(sb, &o, written, sizeof written, sha, parent.len, &delta.data, &delta.len, &err);
    if (!ok) print_error("snapshot_pages: %s\n", err.message);
    assert_true(ok);
    /* with page tracking: a few pages, not 68 (zstd squeezes these sparse pages anyway) */
    if (n < 20) assert_true(uncompressed ? delta.len * 4 < full.len : delta.len < full.len);
    ri_snap_delta_info info;
    assert_true(ri_snap_is_delta(delta.data, delta.len, &info));
    assert_int_equal(info.parent_len, parent.len);
    assert_memory_equal(info.parent_sha256, sha, 32);

    /* Parent + delta = the full image, byte for byte; restoring gives the same state. */
    blob rebuilt;
    ri_snap_error se;
    ok = ri_snap_delta_apply(parent.data, parent.len, delta.data, delta.len, &rebuilt.data, &rebuilt.len, &se);
    if (!ok) print_error("apply: %s\n", se.message);
    assert_true(ok);
    assert_same_blob(rebuilt, full);
    free(rebuilt.data);
    ri_sandbox *other = ri_sandbox_create(f, &c, &err);
    assert_non_null(other);
    ok = ri_sandbox_restore_delta(other, parent.data, parent.len, delta.data, delta.len, &err);
    if (!ok) print_error("restore delta: %s\n", err.message);
    assert_true(ok);
    assert_same_state(other, sb);
    /* The same with the parent's hash given (not recomputed); a wrong one is refused. */
    ri_sandbox *known = ri_sandbox_create(f, &c, &err);
    assert_non_null(known);
    assert_true(ri_sandbox_restore_delta_known(known, parent.data, parent.len, sha, delta.data, delta.len, &err));
    assert_same_state(known, sb);
    uint8_t other_sha[32];
    memcpy(other_sha, sha, 32);
    other_sha[31] ^= 0x80;
    ri_sandbox *refused = ri_sandbox_create(f, &c, &err);
    assert_false(ri_sandbox_restore_delta_known(refused, parent.data, parent.len, other_sha, delta.data, delta.len, &err));
    assert_non_null(strstr(err.message, "parent mismatch"));
    ri_sandbox_free(refused);
    ri_sandbox_free(known);

    /* The page set is what is stored: leaving out page 15 loses its change. */
    uint8_t fewer[16];
    memcpy(fewer, written, sizeof fewer);
    fewer[15 / 8] &= (uint8_t)~(1u << (15 % 8));
    blob partial;
    assert_true(ri_sandbox_snapshot_pages(sb, &o, fewer, sizeof fewer, sha, parent.len, &partial.data, &partial.len, &err));
    assert_true(ri_snap_delta_apply(parent.data, parent.len, partial.data, partial.len, &rebuilt.data, &rebuilt.len, &se));
    assert_true(rebuilt.len != full.len || memcmp(rebuilt.data, full.data, full.len) != 0);
    free(rebuilt.data);
    free(partial.data);

    /* A wrong parent hash: the delta is refused against the real parent. */
    uint8_t bad[32];
    memcpy(bad, sha, 32);
    bad[0] ^= 1;
    assert_true(ri_sandbox_snapshot_pages(sb, &o, written, sizeof written, bad, parent.len, &partial.data, &partial.len, &err));
    assert_false(ri_sandbox_restore_delta(other, parent.data, parent.len, partial.data, partial.len, &err));
    assert_non_null(strstr(err.message, "parent mismatch"));
    free(partial.data);

    assert_false(ri_sandbox_snapshot_pages(sb, &o, NULL, 16, sha, parent.len, &partial.data, &partial.len, &err));
    ri_snapshot_options v1 = {RI_SNAPSHOT_V1, false, false};
    assert_false(ri_sandbox_snapshot_pages(sb, &v1, written, sizeof written, sha, parent.len, &partial.data,
                                           &partial.len, &err));

    /* Another capture after writes moves the backing: written pages count from it now. */
    call_ok(sb, "touch", "[40,1,1,5]");
    ri_checkpoint *later = ri_sandbox_checkpoint(sb, NULL, &err);
    assert_non_null(later);
    assert_false(ri_sandbox_backed_by(sb, cp));
    assert_true(ri_sandbox_backed_by(sb, later));
    assert_false(ri_sandbox_backed_by(other, later));
    assert_false(ri_sandbox_backed_by(sb, NULL));
    ri_checkpoint_free(later);
    ri_checkpoint_free(cp);

    free(delta.data);
    free(full.data);
    free(parent.data);
    ri_sandbox_free(other);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void delta_of_written_pages_raw(void **state) {
    (void)state;
    delta_of_written_pages_with(true);
}

static void delta_of_written_pages_zstd(void **state) {
    (void)state;
    delta_of_written_pages_with(false);
}

/* Not loaded: no memory to track. */
static void refused_before_load(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(0, RI_GAS_HOST_CALLS, 0);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    uint8_t bits[8], sha[32] = {0};
    assert_int_equal(ri_sandbox_written_pages(sb, bits, sizeof bits, NULL, &err), -1);
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    uint8_t *out;
    size_t len;
    assert_false(ri_sandbox_snapshot_pages(sb, NULL, bits, sizeof bits, sha, 1, &out, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delta_of_written_pages_raw),
        cmocka_unit_test(delta_of_written_pages_zstd),
        cmocka_unit_test(refused_before_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
