/*
 * A call run in slices of gas, each pause described, optionally moved into a fresh world
 * (a new store and instance: state copied or through a snapshot image, the call rebuilt
 * from its description) and resumed with the next slice until it returns: what the pause
 * tests compare with an uninterrupted run (test_suspend.c, test_tail_call.c,
 * test_exceptions.c, test_emsc_invoke.c, test_try_table.c, test_fusion_families.c).
 * Header-only, like engine_fixture.h; include cmocka.h first.
 */
#ifndef ENGINE_SLICING_H
#define ENGINE_SLICING_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "ri/snapshot.h"
#include "sandbox_test_util.h" /* print_error */

/* Where the call runs: a test's fixture holds these (and its module). */
typedef struct slicing_world {
    ri_store *store;
    ri_instance *instance;
} slicing_world;

typedef struct slicing {
    uint64_t slice;      /* the gas of each slice */
    uint32_t max_slices; /* the run must take fewer slices than this (0: no bound) */
    void *user;          /* for the callbacks */
    /* Sees each pause's description before the call moves or resumes (NULL: none). */
    void (*paused)(void *user, const slicing_world *w, const ri_suspension *d);
    /* Moves the call paused in `from`, described by d, into a fresh world it returns:
     * opens it, brings the state over, rebuilds d there (slicing_rebuild), closes `from`.
     * The gas `from` had left goes along. NULL: the call resumes where it paused. */
    slicing_world (*move)(void *user, const slicing_world *from, const ri_suspension *d);
} slicing;

typedef struct slicing_outcome {
    uint64_t gas;    /* the gas the call used in all: the slices given less what is left */
    uint32_t slices; /* how many slices it took (1: no pause) */
} slicing_outcome;

/* Calls func(args) in *w, paused on gas every s->slice, until it returns; fails the test
 * unless it returns RI_OK. *w is then the world the call ended in (results are its). */
static inline slicing_outcome slicing_run(const slicing *s, slicing_world *w, ri_func *func, const ri_val *args,
                                          uint32_t nargs, ri_val *results, uint32_t nresults) {
    ri_store_set_suspend_mode(w->store, RI_SUSPEND_ON_GAS);
    ri_store_set_gas(w->store, s->slice);
    ri_error err;
    ri_errcode rc = ri_func_call(w->store, func, args, nargs, results, nresults, &err);
    slicing_outcome o = {s->slice, 1};
    while (rc == RI_ERR_SUSPENDED) {
        ri_suspension d;
        if (!ri_store_describe_suspended(w->store, w->instance, &d, &err)) {
            print_error("describe: %s\n", err.message);
            fail();
        }
        if (s->paused) s->paused(s->user, w, &d);
        if (s->move) {
            uint64_t left = ri_store_gas(w->store);
            *w = s->move(s->user, w, &d);
            ri_store_set_suspend_mode(w->store, RI_SUSPEND_ON_GAS);
            ri_store_set_gas(w->store, left);
        }
        ri_suspension_free(&d);
        rc = ri_store_resume(w->store, s->slice, results, nresults, &err);
        o.gas += s->slice;
        o.slices++;
        if (s->max_slices) assert_true(o.slices < s->max_slices);
    }
    if (rc != RI_OK) print_error("slice %llu: %s\n", (unsigned long long)s->slice, err.message);
    assert_int_equal(rc, RI_OK);
    o.gas -= ri_store_gas(w->store);
    return o;
}

/* Rebuilds the call d describes in `to`; fails the test if refused. */
static inline void slicing_rebuild(const slicing_world *to, const ri_suspension *d) {
    ri_error err;
    if (!ri_store_rebuild_suspended(to->store, to->instance, d, &err)) {
        print_error("rebuild: %s\n", err.message);
        fail();
    }
}

/* What slicing_expect_described_as compares besides the frames' offsets and operand counts. */
enum {
    SLICING_SAME_VALUES = 1, /* each frame's locals and operands */
    SLICING_SAME_VIA = 2,    /* each frame's catch point (via, via_value) */
};

/* The call rebuilt in w describes as d: as many frames, each at the same offset with as
 * many operands, and what `also` names. */
static inline void slicing_expect_described_as(const slicing_world *w, const ri_suspension *d, unsigned also) {
    ri_suspension d2;
    ri_error err;
    assert_true(ri_store_describe_suspended(w->store, w->instance, &d2, &err));
    assert_int_equal(d2.nframes, d->nframes);
    for (uint32_t i = 0; i < d->nframes; i++) {
        const ri_susp_frame *a = &d->frames[i], *b = &d2.frames[i];
        if (also & SLICING_SAME_VIA) {
            assert_int_equal(b->via, a->via);
            assert_int_equal(b->via_value, a->via_value);
        }
        assert_int_equal(b->wasm_offset, a->wasm_offset);
        assert_int_equal(b->nstack, a->nstack);
        if (also & SLICING_SAME_VALUES) {
            assert_memory_equal(b->locals, a->locals, a->nlocals * sizeof(ri_susp_value));
            assert_memory_equal(b->stack, a->stack, a->nstack * sizeof(ri_susp_value));
        }
    }
    ri_suspension_free(&d2);
}

/* Brings memory 0 (its size too) and every mutable global of `from` into `to`: what a
 * snapshot restore does with the state these tests' modules have. */
static inline void slicing_copy_state(const slicing_world *from, const slicing_world *to) {
    ri_memory *a = ri_instance_memory(from->instance, 0), *b = ri_instance_memory(to->instance, 0);
    assert_true(ri_memory_resize(b, ri_memory_pages(a)));
    memcpy(ri_memory_data(b), ri_memory_data(a), ri_memory_size(a));
    for (uint32_t i = 0; i < ri_instance_global_count(from->instance); i++) {
        ri_global *g = ri_instance_global(to->instance, i);
        if (ri_global_type(g).mutable_)
            assert_true(ri_global_set(g, ri_global_get(ri_instance_global(from->instance, i))));
    }
}

/* FNV-1a of memory 0's bytes, to compare final states. */
static inline uint64_t slicing_memory_hash(ri_instance *instance) {
    ri_memory *mem = ri_instance_memory(instance, 0);
    const uint8_t *p = ri_memory_data(mem);
    uint64_t h = 1469598103934665603u;
    for (uint64_t i = 0; i < ri_memory_size(mem); i++) h = (h ^ p[i]) * 1099511628211u;
    return h;
}

/* A WSNP v2 image of `instance` (its module module_size bytes) whose suspended call is
 * d: export `name`, one i32 result, paused on gas. false (and serr) if the writer
 * refuses d. */
static inline bool slicing_write_call(ri_instance *instance, size_t module_size, const char *name,
                                      const ri_suspension *d, uint8_t **bytes, size_t *len, ri_snap_error *serr) {
    ri_snap_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.module_size = module_size;
    meta.status = RI_SNAP_STATUS_SUSPENDED;
    ri_snap_call c;
    memset(&c, 0, sizeof c);
    c.pause_on = RI_SUSPEND_ON_GAS;
    c.gas_schedule = 1;
    c.export_name = (char *)name;
    c.export_name_len = (uint32_t)strlen(name);
    static const ri_valtype i32 = RI_I32;
    c.nresults = 1;
    c.result_types = (ri_valtype *)&i32;
    c.suspension = *d;
    return ri_snap_write_call(instance, &meta, NULL, &c, bytes, len, serr);
}

/* The image slicing_write_call writes, read back: its bytes (free them), the image and
 * its call (ri_snap_image_free, ri_snap_call_free). */
typedef struct slicing_image {
    uint8_t *bytes;
    ri_snap_image img;
    ri_snap_call call;
} slicing_image;

static inline void slicing_image_of(ri_instance *instance, size_t module_size, const char *name,
                                    const ri_suspension *d, slicing_image *out) {
    size_t len = 0;
    ri_snap_error serr;
    out->bytes = NULL;
    if (!slicing_write_call(instance, module_size, name, d, &out->bytes, &len, &serr)) {
        print_error("write: %s\n", serr.message);
        fail();
    }
    assert_true(ri_snap_read(out->bytes, len, &out->img, &serr));
    if (!ri_snap_read_call(&out->img, &out->call, &serr)) {
        print_error("read: %s\n", serr.message);
        fail();
    }
}

static inline void slicing_image_free(slicing_image *x) {
    ri_snap_call_free(&x->call);
    ri_snap_image_free(&x->img);
    free(x->bytes);
}

#endif
