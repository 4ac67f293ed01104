/*
 * In-memory checkpoints: the sandbox's complete state (what WSNP v2 holds) without
 * serialising it. Memory is an engine memory image (copy-on-write, incremental: see
 * src/engine/memory.c); the rest (globals, tables, segment flags, PRNG, gas, status)
 * is small and copied. Function references travel as indices, so a checkpoint
 * applies to any instance of its module (rollback here, fork.c in a new sandbox).
 *
 * A paused call (resume.c) is part of the state: the checkpoint holds it as the
 * snapshot's FRMS section would (sb_snapshot_call: frames in WebAssembly terms), and
 * rollback and fork rebuild it in their store (sb_pending_rebuild), so a fork of a
 * paused sandbox is a second paused sandbox.
 *
 * Transactional execution is a checkpoint before the call and a rollback when the
 * call failed; a pause is not a failure (the call goes on when resumed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"

static bool cp_error(ri_sandbox_error *err, const char *fmt, const char *detail) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, fmt, detail);
    return false;
}

static void *alloc_array(size_t n, size_t size) { return calloc(n ? n : 1, size); }

void ri_checkpoint_free(ri_checkpoint *cp) {
    if (!cp) return;
    for (uint32_t i = 0; cp->memories && i < cp->nmemories; i++) ri_memimage_release(cp->memories[i]);
    free(cp->memories);
    free(cp->globals);
    for (uint32_t i = 0; cp->tables && i < cp->ntables; i++) free(cp->tables[i].entries);
    free(cp->tables);
    free(cp->elem_dropped);
    free(cp->data_dropped);
    if (cp->has_call) ri_snap_call_free(&cp->call);
    ri_wasi_free(cp->wasi);
    ri_module_free(cp->module);
    free(cp);
}

/* A reference as an index in inst's function space; false for what no index names. */
static bool ref_index(const ri_instance *inst, void *ref, uint32_t *out) {
    if (!ref) {
        *out = RI_SNAP_NULL_REF;
        return true;
    }
    return ri_instance_func_index(inst, (const ri_func *)ref, out);
}

static bool capture_rest(ri_instance *inst, ri_checkpoint *cp, ri_sandbox_error *err) {
    cp->nglobals = ri_instance_global_count(inst);
    cp->globals = alloc_array(cp->nglobals, sizeof *cp->globals);
    cp->ntables = ri_instance_table_count(inst);
    cp->tables = alloc_array(cp->ntables, sizeof *cp->tables);
    cp->nelems = ri_instance_elem_count(inst);
    cp->ndatas = ri_instance_data_count(inst);
    cp->elem_dropped = alloc_array(cp->nelems, sizeof(bool));
    cp->data_dropped = alloc_array(cp->ndatas, sizeof(bool));
    if (!cp->globals || !cp->tables || !cp->elem_dropped || !cp->data_dropped)
        return cp_error(err, "%s", "Cannot checkpoint: out of memory");
    for (uint32_t i = 0; i < cp->nglobals; i++) {
        ri_val v = ri_global_get(ri_instance_global(inst, i));
        if (v.type == RI_FUNCREF || v.type == RI_EXTERNREF) {
            uint32_t index;
            if (v.type == RI_EXTERNREF ? v.of.ref != NULL : !ref_index(inst, v.of.ref, &index))
                return cp_error(err, "%s", "Cannot checkpoint: a global holds a reference no checkpoint can hold");
            v.of.i64 = v.type == RI_EXTERNREF ? RI_SNAP_NULL_REF : index;
        }
        cp->globals[i] = v;
    }
    for (uint32_t i = 0; i < cp->ntables; i++) {
        const ri_table *t = ri_instance_table(inst, i);
        sb_cp_table *ct = &cp->tables[i];
        ct->size = ri_table_size(t);
        ct->entries = alloc_array(ct->size, sizeof *ct->entries);
        if (!ct->entries) return cp_error(err, "%s", "Cannot checkpoint: out of memory");
        bool externref = ri_table_type(t).elem == RI_EXTERNREF;
        for (uint32_t k = 0; k < ct->size; k++) {
            void *ref = NULL;
            ri_table_get(t, k, &ref);
            if ((externref && ref) || (!externref && !ref_index(inst, ref, &ct->entries[k])))
                return cp_error(err, "%s", "Cannot checkpoint: a table holds a reference no checkpoint can hold");
            if (externref) ct->entries[k] = RI_SNAP_NULL_REF;
        }
    }
    for (uint32_t i = 0; i < cp->nelems; i++) cp->elem_dropped[i] = ri_instance_elem_dropped(inst, i);
    for (uint32_t i = 0; i < cp->ndatas; i++) cp->data_dropped[i] = ri_instance_data_dropped(inst, i);
    return true;
}

static unsigned image_flags(const ri_checkpoint_options *opts) {
    unsigned flags = 0;
    if (opts && opts->full) flags |= RI_MEMIMAGE_FULL;
    if (opts && opts->no_pagemap) flags |= RI_MEMIMAGE_NO_PAGEMAP;
    if (opts && opts->no_memfd) flags |= RI_MEMIMAGE_NO_MEMFD;
    return flags;
}

ri_checkpoint *ri_sandbox_checkpoint(ri_sandbox *sb, const ri_checkpoint_options *opts, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) return cp_error(err, "%s", "ri_sandbox_checkpoint: sandbox is NULL"), NULL;
    if (!sb_snapshot_allowed(sb, err)) return NULL;
    ri_instance *inst = sb->image->instance;
    ri_checkpoint *cp = calloc(1, sizeof *cp);
    if (!cp) return cp_error(err, "%s", "Cannot checkpoint: out of memory"), NULL;
    cp->module = ri_module_retain(sb->image->module);
    cp->prng_state = sb->prng_state;
    cp->gas_used = sb->metrics.gas_used;
    cp->execution_ms = sb->metrics.execution_ms;
    cp->status = sb_status(sb) == RI_SANDBOX_SUSPENDED ? RI_SANDBOX_SUSPENDED : RI_SANDBOX_LOADED;
    if (sb->wasi && !(cp->wasi = ri_wasi_copy(sb->wasi, NULL))) {
        ri_checkpoint_free(cp);
        return cp_error(err, "%s", "Cannot checkpoint: out of memory for the WASI state"), NULL;
    }
    if (sb->pending) {
        if (!sb_snapshot_call(sb, &cp->call, err)) {
            ri_checkpoint_free(cp);
            return NULL;
        }
        cp->has_call = true;
    }
    if (!capture_rest(inst, cp, err)) {
        ri_checkpoint_free(cp);
        return NULL;
    }
    cp->nmemories = ri_instance_memory_count(inst);
    cp->memories = alloc_array(cp->nmemories, sizeof *cp->memories);
    if (!cp->memories) {
        ri_checkpoint_free(cp);
        return cp_error(err, "%s", "Cannot checkpoint: out of memory"), NULL;
    }
    for (uint32_t i = 0; i < cp->nmemories; i++) {
        ri_error e;
        cp->memories[i] = ri_memory_capture(ri_instance_memory(inst, i), image_flags(opts), &e);
        if (!cp->memories[i]) {
            ri_checkpoint_free(cp);
            return cp_error(err, "Cannot checkpoint the memory: %s", e.message), NULL;
        }
    }
    return cp;
}

ri_checkpoint_info ri_checkpoint_get_info(const ri_checkpoint *cp) {
    ri_checkpoint_info info;
    memset(&info, 0, sizeof info);
    if (!cp || !cp->nmemories) return info;
    const ri_memimage *m = cp->memories[0];
    info.memory_pages = ri_memimage_pages(m);
    info.stored_pages = ri_memimage_stored_pages(m);
    info.depth = ri_memimage_depth(m);
    info.memfd = ri_memimage_is_memfd(m);
    return info;
}

/* ---- applying ------------------------------------------------------------------------ */

static void *ref_of(ri_instance *inst, uint32_t index) {
    return index == RI_SNAP_NULL_REF ? NULL : ri_instance_func(inst, index);
}

bool sb_checkpoint_apply(sb_image *img, const ri_checkpoint *cp, ri_sandbox_error *err) {
    ri_instance *inst = img->instance;
    if (ri_instance_module(inst) != cp->module || ri_instance_memory_count(inst) != cp->nmemories ||
        ri_instance_table_count(inst) != cp->ntables || ri_instance_global_count(inst) != cp->nglobals)
        return cp_error(err, "%s", "Cannot roll back: the sandbox no longer runs the checkpoint's module");
    /* The failable steps first: tables grow, then memories load. */
    uint32_t *old_sizes = alloc_array(cp->ntables, sizeof *old_sizes);
    if (!old_sizes) return cp_error(err, "%s", "Cannot roll back: out of memory");
    bool ok = true;
    uint32_t grown = 0;
    for (; ok && grown < cp->ntables; grown++) {
        ri_table *t = ri_instance_table(inst, grown);
        old_sizes[grown] = ri_table_size(t);
        if (cp->tables[grown].size > old_sizes[grown]) ok = ri_table_resize(t, cp->tables[grown].size, NULL);
    }
    if (!ok) cp_error(err, "%s", "Cannot roll back: a table cannot grow to the checkpoint's size");
    for (uint32_t i = 0; ok && i < cp->nmemories; i++) {
        ri_error e;
        ok = ri_memory_load_image(ri_instance_memory(inst, i), cp->memories[i], &e);
        if (!ok) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot roll back the memory: %s", e.message);
    }
    if (!ok) {
        for (uint32_t i = 0; i < grown; i++) ri_table_resize(ri_instance_table(inst, i), old_sizes[i], NULL);
        free(old_sizes);
        return false;
    }
    free(old_sizes);
    for (uint32_t i = 0; i < cp->ntables; i++) {
        ri_table *t = ri_instance_table(inst, i);
        ri_table_resize(t, cp->tables[i].size, NULL); /* shrinking cannot fail */
        for (uint32_t k = 0; k < cp->tables[i].size; k++) ri_table_set(t, k, ref_of(inst, cp->tables[i].entries[k]));
    }
    for (uint32_t i = 0; i < cp->nglobals; i++) {
        ri_global *g = ri_instance_global(inst, i);
        if (!ri_global_type(g).mutable_) continue;
        ri_val v = cp->globals[i];
        if (v.type == RI_FUNCREF || v.type == RI_EXTERNREF) v.of.ref = ref_of(inst, (uint32_t)v.of.i64);
        ri_global_set(g, v);
    }
    for (uint32_t i = 0; i < cp->nelems; i++) ri_instance_set_elem_dropped(inst, i, cp->elem_dropped[i]);
    for (uint32_t i = 0; i < cp->ndatas; i++) ri_instance_set_data_dropped(inst, i, cp->data_dropped[i]);
    return true;
}

/* keep_files: the sandbox's own WASI state stays (its workspace, input and output), only
 * its process restarts; else the checkpoint's WASI state comes back whole. */
static bool rollback(ri_sandbox *sb, const ri_checkpoint *cp, bool keep_files, ri_sandbox_error *err);

bool ri_sandbox_rollback(ri_sandbox *sb, const ri_checkpoint *cp, ri_sandbox_error *err) {
    return rollback(sb, cp, false, err);
}

bool ri_sandbox_restart(ri_sandbox *sb, const ri_checkpoint *cp, ri_sandbox_error *err) {
    return rollback(sb, cp, true, err);
}

static bool rollback(ri_sandbox *sb, const ri_checkpoint *cp, bool keep_files, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb || !cp) return cp_error(err, "%s", "ri_sandbox_rollback: a NULL argument");
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) return cp_error(err, "%s", "Cannot roll back a destroyed instance");
    if (status == RI_SANDBOX_RUNNING || sb->run)
        return cp_error(err, "%s", "Cannot roll back a running instance \u2014 suspend first");
    /* A restart may bring another module (an interpreter's initialised image into a sandbox
     * that ran something else): a new image of the checkpoint's module, built under this
     * sandbox's config (its import rules apply), replaces the sandbox's only once complete. */
    bool other_module = keep_files && (!sb->image || !sb->image->instance ||
                                       ri_instance_module(sb->image->instance) != cp->module);
    if (!other_module && (!sb->image || !sb->image->instance))
        return cp_error(err, "%s", "Cannot roll back an instance that has not been loaded");
    ri_wasi *wasi = NULL;
    if (!keep_files && sb->wasi && cp->wasi && !(wasi = ri_wasi_copy(cp->wasi, NULL)))
        return cp_error(err, "%s", "Cannot roll back: out of memory for the WASI state");
    if (other_module) {
        sb_image *fresh = NULL;
        if (!sb_build_image_from(sb, ri_module_retain(cp->module), false, &fresh, err) ||
            !sb_checkpoint_apply(fresh, cp, err)) {
            sb_image_free(fresh);
            return false;
        }
        sb_pending_drop(sb);
        sb_image_free(sb->image);
        sb->image = fresh;
    } else if (!sb_checkpoint_apply(sb->image, cp, err)) {
        ri_wasi_free(wasi);
        return false;
    }
    if (wasi) sb_wasi_install(sb, wasi);
    else if (keep_files && sb->wasi) ri_wasi_reset_process(sb->wasi);
    sb->prng_state = cp->prng_state;
    sb->metrics.gas_used = cp->gas_used;
    sb->metrics.execution_ms = cp->execution_ms;
    /* The paused call is the checkpoint's: the sandbox's own one (if any) is dropped as
     * ri_sandbox_abandon drops it, and the checkpoint's (if any) rebuilt in its place. */
    sb_pending_drop(sb);
    if (cp->has_call) {
        sb->pending = sb_pending_rebuild(sb, sb->image, &cp->call, err);
        if (!sb->pending) {
            /* Only out of memory gets here (the frames come from this module): the state
             * is the checkpoint's, without its call. */
            sb_set_status(sb, RI_SANDBOX_LOADED);
            sb_error_prefix(err, "Rolled back without the paused call: ");
            return false;
        }
    }
    sb_set_status(sb, cp->status);
    return true;
}

/* ---- transactional execution ------------------------------------------------------------ */

ri_sandbox_result ri_sandbox_execute_with(ri_sandbox *sb, const char *action, const char *payload_json,
                                          const ri_execute_options *opts) {
    if (!opts || !opts->transactional || !sb || sb_status(sb) != RI_SANDBOX_LOADED || sb->run || !sb->image ||
        !sb->image->instance)
        return ri_sandbox_execute(sb, action, payload_json); /* its guards say what is wrong */
    ri_sandbox_error e;
    ri_checkpoint *cp = ri_sandbox_checkpoint(sb, NULL, &e);
    if (!cp) {
        ri_sandbox_result r;
        memset(&r, 0, sizeof r);
        r.metrics = ri_sandbox_get_metrics(sb);
        sb_error_trap(&r.error, "runtime_error", "Cannot start a transactional execution: %s", e.message);
        return r;
    }
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload_json);
    /* A pause is not a failure: the call goes on when resumed (without the checkpoint). */
    bool paused = !r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL;
    if (!r.ok && !paused && sb_status(sb) != RI_SANDBOX_DESTROYED && sb->image && sb->image->instance) {
        uint64_t gas = r.metrics.gas_used;
        double ms = r.metrics.execution_ms;
        if (!ri_sandbox_rollback(sb, cp, &e)) {
            /* The failure stays the call's; the rollback's reason is appended. */
            size_t n = strlen(r.error.message), room = sizeof r.error.message - n;
            if (room > 1) snprintf(r.error.message + n, room, " (and the rollback failed: %.200s)", e.message);
        }
        /* The result still reports what the failed run used. */
        r.metrics = ri_sandbox_get_metrics(sb);
        r.metrics.gas_used = gas;
        r.metrics.execution_ms = ms;
    }
    ri_checkpoint_free(cp);
    return r;
}
