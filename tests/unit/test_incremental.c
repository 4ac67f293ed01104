/*
 * Incremental checkpoints and rollback (issue 5): a transactional execution that
 * fails (trap, out of gas, memory limit) leaves the sandbox byte-identical (v2
 * snapshot) to before; a chain of incremental checkpoints rolls back to each link's
 * exact state, in any order; each delta stores only the pages written since; the
 * pagemap-less and memfd-less paths give the same states; the engine reports written
 * pages. Fixture: tests/wat/fork_mem.wat.
 */
#include "fork_util.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

static void expect_failure(ri_sandbox *sb, const char *action, const char *args, ri_sandbox_errcode code,
                           bool transactional) {
    ri_execute_options o = {transactional};
    ri_sandbox_result r = ri_sandbox_execute_with(sb, action, args, &o);
    if (r.ok || r.error.code != code)
        print_error("%s: ok=%d code=%s %s\n", action, r.ok, ri_sandbox_errcode_name(r.error.code), r.error.message);
    assert_false(r.ok);
    assert_int_equal(r.error.code, code);
    ri_sandbox_result_free(&r);
}

static void transactional_failures_change_nothing(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    /* 100000 bytes: the store allows 2 pages, the sandbox's limit is 1.5 pages. */
    ri_sandbox_config c = fork_config(100000, RI_GAS_INSTRUCTIONS, 200000);
    ri_sandbox *sb = new_loaded(f, &c);
    call_ok(sb, "mix", "[0]");
    call_ok(sb, "mix", "[0]");
    blob before = snap(sb);

    expect_failure(sb, "failAfterWrite", "[0]", RI_SANDBOX_WASM_TRAP, true);
    blob after = snap(sb);
    assert_same_blob(before, after);
    free(after.data);
    expect_failure(sb, "spinAfterWrite", "[0]", RI_SANDBOX_GAS_EXHAUSTED, true);
    after = snap(sb);
    assert_same_blob(before, after);
    free(after.data);
    expect_failure(sb, "growAfterWrite", "[0,1]", RI_SANDBOX_MEMORY_EXCEEDED, true);
    after = snap(sb);
    assert_same_blob(before, after);
    free(after.data);

    /* The sandbox goes on as if the failures never happened. */
    ri_sandbox *twin = new_loaded(f, &c);
    call_ok(twin, "mix", "[0]");
    call_ok(twin, "mix", "[0]");
    call_ok(twin, "mix", "[0]");
    call_ok(sb, "mix", "[0]");
    assert_same_state(sb, twin);

    /* Without the option, the failed call's changes stay: the test can tell. */
    expect_failure(sb, "failAfterWrite", "[0]", RI_SANDBOX_WASM_TRAP, false);
    after = snap(sb);
    assert_true(after.len != before.len || memcmp(after.data, before.data, before.len) != 0);
    free(after.data);

    free(before.data);
    ri_sandbox_free(twin);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

#define LINKS 8

/* A history of LINKS checkpoints with writes (and growth, and a rollback) between;
 * every link's snapshot recorded. Rolls back to each link in a scrambled order and
 * compares the bytes. */
static void chain_with(const ri_checkpoint_options *opts, bool expect_deltas) {
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(1024ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *sb = new_loaded(f, &c);
    call_ok(sb, "grow", "[199]");
    call_ok(sb, "touch", "[0,200,1,1]");
    ri_checkpoint *cps[LINKS];
    blob snaps[LINKS];
    ri_sandbox_error err;
    for (int i = 0; i < LINKS; i++) {
        cps[i] = ri_sandbox_checkpoint(sb, opts, &err);
        if (!cps[i]) print_error("checkpoint %d: %s\n", i, err.message);
        assert_non_null(cps[i]);
        snaps[i] = snap(sb);
        ri_checkpoint_info info = ri_checkpoint_get_info(cps[i]);
        assert_int_equal(info.memory_pages, 200 + (i >= 3 ? 5 : 0) + (i >= 6 ? -3 : 0) * 0);
        if (expect_deltas && i > 0) {
            /* Only what the previous step wrote: 4 pages, plus (from link 4 on) the 5
             * pages grown before link 3 when the snapshot since read them: a read of a
             * fresh anonymous page maps the zero page, which pagemap cannot tell from
             * a written one, so they count as written (conservative, never fewer). */
            if (info.stored_pages > 9) print_error("link %d stored %u depth %u\n", i, info.stored_pages, info.depth);
            assert_true(info.depth > 0);
            assert_true(info.stored_pages <= (i < 4 ? 4u : 9u));
        } else if (!expect_deltas) {
            assert_int_equal(info.depth, 0);
        }
        char args[48];
        snprintf(args, sizeof args, "[%d,3,17,%d]", i * 5, 100 + i);
        call_ok(sb, "touch", args);
        call_ok(sb, "mix", "[1]");
        if (i == 2) call_ok(sb, "grow", "[5]");
        if (i == 4) {
            /* Back to an older link, then on from there: the chain forks. */
            assert_true(ri_sandbox_rollback(sb, cps[3], &err));
            call_ok(sb, "touch", "[150,2,1,77]");
        }
    }
    const int order[LINKS] = {5, 0, 7, 2, 2, 6, 1, 4};
    for (int k = 0; k < LINKS; k++) {
        int i = order[k];
        bool ok = ri_sandbox_rollback(sb, cps[i], &err);
        if (!ok) print_error("rollback %d: %s\n", i, err.message);
        assert_true(ok);
        blob now = snap(sb);
        assert_same_blob(snaps[i], now);
        free(now.data);
        call_ok(sb, "touch", "[3,40,2,-1]"); /* dirty again before the next rollback */
    }
    /* A full checkpoint of the same state gives the same bytes as the chain. */
    assert_true(ri_sandbox_rollback(sb, cps[LINKS - 1], &err));
    ri_checkpoint_options full = {true, false, false};
    if (opts) full.no_memfd = opts->no_memfd;
    ri_checkpoint *whole = ri_sandbox_checkpoint(sb, &full, &err);
    assert_non_null(whole);
    assert_int_equal(ri_checkpoint_get_info(whole).depth, 0);
    call_ok(sb, "touch", "[0,100,2,5]");
    assert_true(ri_sandbox_rollback(sb, whole, &err));
    blob now = snap(sb);
    assert_same_blob(snaps[LINKS - 1], now);
    free(now.data);
    ri_checkpoint_free(whole);

    for (int i = 0; i < LINKS; i++) {
        ri_checkpoint_free(cps[i]);
        free(snaps[i].data);
    }
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void incremental_chain_rolls_back_exactly(void **state) {
    (void)state;
    /* Deltas need memfd and pagemap; where either is missing the same states come
     * from full copies (the other tests below force those paths). */
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(0, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *probe = new_loaded(f, &c);
    call_ok(probe, "grow", "[3]");
    ri_checkpoint *a = ri_sandbox_checkpoint(probe, NULL, NULL);
    assert_non_null(a);
    call_ok(probe, "store", "[0,1]");
    ri_checkpoint *b = ri_sandbox_checkpoint(probe, NULL, NULL);
    assert_non_null(b);
    bool deltas = ri_checkpoint_get_info(b).depth > 0;
    if (!deltas) print_message("memfd or pagemap unavailable here: checkpoints are full copies\n");
    ri_checkpoint_free(a);
    ri_checkpoint_free(b);
    ri_sandbox_free(probe);
    ri_sandboxes_free(f);
    chain_with(NULL, deltas);
}

static void chain_without_pagemap(void **state) {
    (void)state;
    ri_checkpoint_options o = {false, true, false};
    chain_with(&o, false);
}

static void chain_without_memfd(void **state) {
    (void)state;
    ri_checkpoint_options o = {false, false, true};
    chain_with(&o, false);
}

/* The engine's view: pages written since the backing image, exactly. */
static void engine_reports_written_pages(void **state) {
    (void)state;
    ri_store *store = ri_store_new(NULL);
    assert_non_null(store);
    ri_memtype t = {{64, 1024, true}, false};
    ri_error e;
    ri_memory *mem = ri_memory_new(store, t, &e);
    assert_non_null(mem);
    uint8_t *data = ri_memory_data(mem);
    data[3 * PAGE + 100] = 1;
    data[40 * PAGE] = 2;
    ri_memimage *full = ri_memory_capture(mem, 0, &e);
    assert_non_null(full);
    assert_int_equal(ri_memimage_pages(full), 64);
    assert_ptr_equal(ri_memory_backing(mem), full);
    if (!ri_memimage_is_memfd(full)) {
        print_message("memfd unavailable: skipping the pagemap checks\n");
    } else {
        assert_int_equal(ri_memimage_stored_pages(full), 64); /* a full image: all its pages */
        uint8_t bitmap[8];
        assert_int_equal(ri_memory_written_pages(mem, 0, bitmap), 0);
        volatile uint8_t sink = data[5 * PAGE] + data[62 * PAGE]; /* reads do not count */
        (void)sink;
        assert_int_equal(ri_memory_written_pages(mem, 0, NULL), 0);
        data[7 * PAGE + 65535] = 9;
        data[3 * PAGE] = 9;
        assert_int_equal(ri_memory_written_pages(mem, 0, bitmap), 2);
        assert_int_equal(bitmap[0], (1u << 3) | (1u << 7));
        assert_int_equal(ri_memory_written_pages(mem, RI_MEMIMAGE_NO_PAGEMAP, NULL), 64);
        /* Nothing written since: the capture is the backing image itself. */
        ri_memimage *delta = ri_memory_capture(mem, 0, &e);
        assert_non_null(delta);
        assert_ptr_equal(ri_memimage_parent(delta), full);
        assert_int_equal(ri_memimage_stored_pages(delta), 2);
        ri_memimage *same = ri_memory_capture(mem, 0, &e);
        assert_ptr_equal(same, delta);
        ri_memimage_release(same);
        /* Shrunk and grown back: zero now, so those pages count as written. */
        assert_true(ri_memory_resize(mem, 30));
        assert_true(ri_memory_resize(mem, 64));
        assert_int_equal(data[40 * PAGE], 0);
        assert_int_equal(ri_memory_written_pages(mem, 0, NULL), 34);
        ri_memimage *shrunk = ri_memory_capture(mem, 0, &e);
        assert_non_null(shrunk);
        uint8_t page[PAGE];
        assert_true(ri_memimage_read_page(shrunk, 40, page));
        assert_int_equal(page[0], 0);
        assert_true(ri_memimage_read_page(full, 40, page));
        assert_int_equal(page[0], 2);
        assert_true(ri_memory_load_image(mem, full, &e));
        assert_int_equal(data[40 * PAGE], 2);
        assert_int_equal(data[7 * PAGE + 65535], 0);
        assert_true(ri_memory_load_image(mem, delta, &e));
        assert_int_equal(data[7 * PAGE + 65535], 9);
        ri_memimage_release(shrunk);
        ri_memimage_release(delta);
    }
    /* Heap-copy images (no memfd) load into a memory that still writes through its
     * working file: shrinking drops the tail for good (grown back, it is zero). */
    {
        ri_store *st = ri_store_new(NULL);
        ri_memtype ten = {{10, 20, true}, false}, four = {{4, 20, true}, false};
        ri_memory *big = ri_memory_new(st, ten, &e), *small = ri_memory_new(st, four, &e);
        assert_non_null(big);
        assert_non_null(small);
        ri_memory_data(big)[8 * PAGE] = 42;
        ri_memory_data(small)[PAGE] = 7;
        ri_memimage *copy = ri_memory_capture(small, RI_MEMIMAGE_NO_MEMFD, &e);
        assert_non_null(copy);
        assert_false(ri_memimage_is_memfd(copy));
        assert_true(ri_memory_load_image(big, copy, &e));
        assert_int_equal(ri_memory_pages(big), 4);
        assert_int_equal(ri_memory_data(big)[PAGE], 7);
        assert_int_equal(ri_memory_grow(big, 6), 4);
        assert_int_equal(ri_memory_data(big)[8 * PAGE], 0);
        ri_memimage_release(copy);
        ri_store_free(st);
    }
    /* Loading into a memory of another store, bounded by its maximum. */
    ri_store *other = ri_store_new(NULL);
    ri_memtype small = {{1, 16, true}, false};
    ri_memory *m2 = ri_memory_new(other, small, &e);
    assert_non_null(m2);
    assert_false(ri_memory_load_image(m2, full, &e));
    assert_int_equal(e.code, RI_ERR_LIMIT);
    assert_int_equal(ri_memory_pages(m2), 1);
    ri_memtype big = {{1, 100, true}, false};
    ri_memory *m3 = ri_memory_new(other, big, &e);
    assert_true(ri_memory_load_image(m3, full, &e));
    assert_int_equal(ri_memory_data(m3)[40 * PAGE], 2);
    ri_memory_data(m3)[40 * PAGE] = 3;
    assert_int_equal(data[40 * PAGE], 2);
    ri_memimage_release(full);
    ri_store_free(store); /* the image lives on in m3's backing */
    assert_int_equal(ri_memory_data(m3)[3 * PAGE + 100], 1);
    ri_store_free(other);
}

/* Pages of build_source: page p of `pages` holds p + 1 in every byte when p % 3 != 2
 * (two of three pages, so runs are cut), else it is zero (NULL); buffers lie back to
 * back in `buf`, so pages 0-1, 3-4, ... are runs of one pwrite. */
typedef struct build_source {
    uint8_t *buf;
    uint32_t calls, last;
} build_source;

static const uint8_t *build_page(void *ctx, uint32_t page) {
    build_source *b = ctx;
    assert_true(b->calls == 0 || page == b->last + 1); /* ascending, once each */
    b->calls++;
    b->last = page;
    if (page % 3 == 2) return NULL;
    memset(b->buf + (size_t)page * PAGE, (int)(page + 1), PAGE);
    return b->buf + (size_t)page * PAGE;
}

/* ri_memimage_build: the contents it was given (zero where the source said NULL),
 * loaded without copying (nothing counts as written, a capture is the image itself), and
 * the same bytes without memfd. */
static void built_images(void **state) {
    (void)state;
    const uint32_t pages = 20;
    for (int heap = 0; heap < 2; heap++) {
        build_source src = {calloc(pages, PAGE), 0, 0};
        assert_non_null(src.buf);
        ri_error e;
        ri_memimage *img = ri_memimage_build(pages, build_page, &src, heap ? RI_MEMIMAGE_NO_MEMFD : 0, &e);
        assert_non_null(img);
        assert_int_equal(src.calls, pages);
        assert_int_equal(ri_memimage_pages(img), pages);
        assert_int_equal(ri_memimage_depth(img), 0);
        assert_int_equal(ri_memimage_stored_pages(img), 14); /* pages with contents */
        uint8_t page[PAGE];
        for (uint32_t p = 0; p < pages; p++) {
            assert_true(ri_memimage_read_page(img, p, page));
            uint8_t want = p % 3 == 2 ? 0 : (uint8_t)(p + 1);
            assert_int_equal(page[0], want);
            assert_int_equal(page[PAGE - 1], want);
        }
        ri_store *store = ri_store_new(NULL);
        ri_memtype t = {{1, 64, true}, false};
        ri_memory *mem = ri_memory_new(store, t, &e);
        assert_non_null(mem);
        ri_memory_data(mem)[0] = 99; /* replaced by the image */
        assert_true(ri_memory_load_image(mem, img, &e));
        assert_int_equal(ri_memory_pages(mem), pages);
        uint8_t *data = ri_memory_data(mem);
        for (uint32_t p = 0; p < pages; p++) assert_int_equal(data[(size_t)p * PAGE + 7], p % 3 == 2 ? 0 : p + 1);
        if (!heap && ri_memimage_is_memfd(img)) {
            assert_int_equal(ri_memory_written_pages(mem, 0, NULL), 0);
            ri_memimage *again = ri_memory_capture(mem, 0, &e);
            assert_ptr_equal(again, img); /* nothing written: the image itself */
            ri_memimage_release(again);
            data[5 * PAGE] = 1;
            assert_int_equal(ri_memory_written_pages(mem, 0, NULL), 1);
        }
        ri_memimage_release(img); /* the memory keeps its backing */
        assert_int_equal(data[4 * PAGE], 5);
        ri_store_free(store);
        free(src.buf);
    }
    ri_error e;
    assert_null(ri_memimage_build(1, NULL, NULL, 0, &e));
    assert_int_equal(e.code, RI_ERR_ARGUMENT);
    assert_null(ri_memimage_build(65537, build_page, NULL, 0, &e));
    assert_int_equal(e.code, RI_ERR_ARGUMENT);
}

/* No file descriptors left: checkpoints fall back to heap copies, forks and rollbacks
 * still give the same states. */
static void out_of_descriptors(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(64ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *sb = new_loaded(f, &c);
    call_ok(sb, "grow", "[9]");
    call_ok(sb, "touch", "[0,10,1,5]");
    ri_sandbox_error err;
    ri_checkpoint *first = ri_sandbox_checkpoint(sb, NULL, &err); /* while descriptors last */
    assert_non_null(first);
    call_ok(sb, "touch", "[1,2,3,6]");
    blob want = snap(sb);

    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = 256 < old.rlim_cur ? 256 : old.rlim_cur;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fillers[256], nfill = 0;
    for (int fd; nfill < 256 && (fd = open("/dev/null", O_RDONLY)) >= 0;) fillers[nfill++] = fd;
    ri_checkpoint *cp = ri_sandbox_checkpoint(sb, NULL, &err);
    ri_checkpoint_info info = cp ? ri_checkpoint_get_info(cp) : (ri_checkpoint_info){0, 0, 0, true};
    call_ok(sb, "touch", "[0,10,1,7]");
    bool rolled = cp && ri_sandbox_rollback(sb, cp, &err);
    for (int i = 0; i < nfill; i++) close(fillers[i]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);

    if (!cp) print_error("checkpoint without descriptors: %s\n", err.message);
    assert_non_null(cp);
    assert_false(info.memfd);
    assert_true(rolled);
    blob got = snap(sb);
    assert_same_blob(want, got);
    assert_true(ri_sandbox_rollback(sb, first, &err));
    ri_sandbox *child = ri_sandbox_fork(f, sb, cp, &err);
    assert_non_null(child);
    blob fork_state = snap(child);
    assert_same_blob(want, fork_state);
    free(fork_state.data);
    free(got.data);
    free(want.data);
    ri_checkpoint_free(cp);
    ri_checkpoint_free(first);
    ri_sandbox_free(child);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void delta_images_on_disk_with(bool uncompressed) {
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(1024ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *sb = new_loaded(f, &c);
    call_ok(sb, "grow", "[63]");
    call_ok(sb, "touch", "[0,64,1,3]");
    ri_snapshot_options o = {RI_SNAPSHOT_V2, false, uncompressed};
    ri_sandbox_error err;
    blob parent;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &parent.data, &parent.len, &err));

    /* Changes of every kind: pages written, a page zeroed, growth, global, table, PRNG. */
    call_ok(sb, "touch", "[5,3,10,9]");
    call_ok(sb, "store", "[655360,0]"); /* page 10 back to all zero */
    call_ok(sb, "grow", "[4]");
    call_ok(sb, "store", "[4259840,8]"); /* page 65 */
    call_ok(sb, "mix", "[2]");
    blob full1, delta1;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &full1.data, &full1.len, &err));
    bool ok = ri_sandbox_snapshot_delta(sb, parent.data, parent.len, &o, &delta1.data, &delta1.len, &err);
    if (!ok) print_error("delta: %s\n", err.message);
    assert_true(ok);
    assert_true(delta1.len * 4 < full1.len || (!uncompressed && delta1.len < full1.len));
    ri_snap_delta_info info;
    assert_true(ri_snap_is_delta(delta1.data, delta1.len, &info));
    assert_false(ri_snap_is_delta(full1.data, full1.len, NULL));
    assert_int_equal(info.parent_len, parent.len);

    /* Parent + delta = the full image, byte for byte. */
    blob rebuilt;
    ri_snap_error se;
    assert_true(ri_snap_delta_apply(parent.data, parent.len, delta1.data, delta1.len, &rebuilt.data, &rebuilt.len, &se));
    assert_same_blob(rebuilt, full1);
    free(rebuilt.data);

    /* A chain: the next delta's parent is the rebuilt full image. */
    call_ok(sb, "touch", "[1,2,30,77]");
    blob full2, delta2;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &full2.data, &full2.len, &err));
    assert_true(ri_sandbox_snapshot_delta(sb, full1.data, full1.len, &o, &delta2.data, &delta2.len, &err));
    ri_sandbox *other = new_loaded(f, &c);
    assert_true(ri_sandbox_restore(other, parent.data, parent.len, &err));
    ok = ri_sandbox_restore_delta(other, parent.data, parent.len, delta1.data, delta1.len, &err);
    if (!ok) print_error("restore delta: %s\n", err.message);
    assert_true(ok);
    blob now;
    assert_true(ri_sandbox_snapshot_with(other, &o, &now.data, &now.len, &err));
    assert_same_blob(now, full1); /* the state at full1, from parent + delta */
    free(now.data);
    assert_true(ri_sandbox_restore_delta(other, full1.data, full1.len, delta2.data, delta2.len, &err));
    assert_same_state(other, sb);

    /* The wrong parent is refused, and the sandbox is unchanged. */
    blob before = snap(other);
    assert_false(ri_sandbox_restore_delta(other, full2.data, full2.len, delta1.data, delta1.len, &err));
    assert_non_null(strstr(err.message, "parent mismatch"));
    assert_false(ri_sandbox_restore_delta(other, parent.data, parent.len, delta2.data, delta2.len, &err));
    /* A delta alone is refused, and so is a damaged one. */
    assert_false(ri_sandbox_restore(other, delta1.data, delta1.len, &err));
    assert_non_null(strstr(err.message, "delta"));
    delta1.data[delta1.len / 2] ^= 0x40;
    assert_false(ri_sandbox_restore_delta(other, parent.data, parent.len, delta1.data, delta1.len, &err));
    blob after = snap(other);
    assert_same_blob(before, after);

    free(before.data);
    free(after.data);
    free(parent.data);
    free(full1.data);
    free(full2.data);
    free(delta1.data);
    free(delta2.data);
    ri_sandbox_free(other);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void delta_images_on_disk(void **state) {
    (void)state;
    delta_images_on_disk_with(false);
    delta_images_on_disk_with(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(transactional_failures_change_nothing),
        cmocka_unit_test(incremental_chain_rolls_back_exactly),
        cmocka_unit_test(chain_without_pagemap),
        cmocka_unit_test(chain_without_memfd),
        cmocka_unit_test(engine_reports_written_pages),
        cmocka_unit_test(built_images),
        cmocka_unit_test(delta_images_on_disk),
        cmocka_unit_test(out_of_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
