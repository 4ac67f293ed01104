/*
 * Section FRMS: a suspended call (docs/SNAPSHOT_FORMAT.md "FRMS"). The frames are the
 * engine's description in WebAssembly terms (ri_suspension); this file only puts them
 * into bytes and takes them out again, checking every length before it allocates and
 * every field before it is believed. Whether they fit the module's code is the engine's
 * check (ri_store_rebuild_suspended).
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

#define FRMS_LAYOUT 1u
#define FRMS_LAYOUT_INVOKE 2u /* frames entered through Emscripten invokes (docs/SNAPSHOT_FORMAT.md) */
#define FRMS_LAYOUT_EXNS 3u   /* the same, and frames with kept exceptions (exception handling) */
#define FRMS_LAYOUT_EXNREFS 4u /* the same, and the exceptions exnref values refer to */
#define FRMS_EXN_BYTES 12u    /* slot, tag, count */
#define FRMS_EXNREF_BYTES 8u  /* tag, count */
#define FRMS_HEADER_BYTES 40u  /* layout .. export name length */
#define FRMS_FRAME_BYTES 20u
#define FRMS_VALUE_BYTES 9u    /* type byte + 8 bytes of bits */
#define FRMS_MAX_NAME 65536u

#define CORRUPT(...) snap_fail(err, RI_SNAP_ERR_CORRUPT, __VA_ARGS__)

void ri_snap_call_free(ri_snap_call *call) {
    if (!call) return;
    free(call->export_name);
    free(call->result_types);
    ri_suspension_free(&call->suspension);
    memset(call, 0, sizeof *call);
}

static bool storable_type(ri_valtype t) {
    return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64 || t == RI_V128 || t == RI_FUNCREF ||
           t == RI_EXTERNREF || t == RI_EXNREF;
}

/* The checks a reader makes of one value, shared so that a writer never writes what a
 * reader refuses (an exnref: an index below nexn, in the table of layout 4). NULL: fine;
 * else what is wrong. */
static const char *value_problem(ri_valtype type, uint64_t bits, uint32_t func_count, uint32_t nexn) {
    switch (type) {
    case RI_I32: case RI_F32: return bits <= UINT32_MAX ? NULL : "a 32-bit value above 2^32 - 1";
    case RI_I64: case RI_F64: return NULL;
    case RI_V128: return NULL; /* one half of a vector: any bits */
    case RI_FUNCREF: return bits == RI_SUSP_NULL_REF || bits < func_count ? NULL : "a function index out of range";
    case RI_EXTERNREF: return bits == RI_SUSP_NULL_REF ? NULL : "a non-null externref";
    case RI_EXNREF: return bits == RI_SUSP_NULL_REF || bits < nexn ? NULL : "an exnref to no stored exception";
    default: return "an unknown value type";
    }
}

static bool point_known(uint32_t p) {
    return p == RI_SUSP_ENTRY || p == RI_SUSP_GAS || p == RI_SUSP_LOOP || p == RI_SUSP_CALL || p == RI_SUSP_BULK;
}

/* ---- writing ---------------------------------------------------------------------------- */

static bool put_values(snap_buf *b, const ri_susp_value *v, uint32_t n, uint32_t func_count, uint32_t nexn,
                       uint32_t frame, ri_snap_error *err) {
    for (uint32_t i = 0; i < n; i++) {
        const char *why = storable_type(v[i].type) ? value_problem(v[i].type, v[i].bits, func_count, nexn)
                                                   : "a type WSNP v2 does not hold";
        if (why) return snap_fail(err, RI_SNAP_ERR_STATE, "frame %u holds %s", frame, why);
        snap_buf_u8(b, (uint8_t)v[i].type);
        snap_buf_u64(b, v[i].bits);
    }
    return true;
}

bool snap_write_frames(snap_buf *b, const ri_snap_call *call, uint32_t func_count, ri_snap_error *err) {
    const ri_suspension *s = &call->suspension;
    if (s->nframes == 0 || !s->frames || s->reason < RI_SUSPENDED_GAS || s->reason > RI_SUSPENDED_YIELD ||
        (call->pause_on & ~(uint32_t)RI_SUSPEND_ALL) || call->gas_schedule > 1 || call->gas_used > (uint64_t)INT64_MAX ||
        s->func_index >= func_count || call->export_name_len >= FRMS_MAX_NAME ||
        (call->export_name_len && !call->export_name) || (call->nresults && !call->result_types))
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: the suspended call is not well-formed");
    size_t at = snap_buf_begin_section(b, SNAP_TAG_FRMS, SNAP_FLAG_REQUIRED);
    /* Layout 2 only when a frame was entered through an Emscripten invoke (so images
     * without one keep their bytes). */
    uint32_t layout = FRMS_LAYOUT;
    for (uint32_t i = 0; i < s->nframes; i++)
        if (s->frames[i].via != RI_SUSP_VIA_CALL) layout = FRMS_LAYOUT_INVOKE;
    for (uint32_t i = 0; i < s->nframes; i++) /* (and layout 3 only with kept exceptions) */
        if (s->frames[i].nexns) layout = FRMS_LAYOUT_EXNS;
    if (s->nexnrefs) layout = FRMS_LAYOUT_EXNREFS; /* (and 4 only with exnrefs to exceptions) */
    if (s->nexnrefs && !s->exnrefs)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: the suspended call is not well-formed");
    snap_buf_u32(b, layout);
    snap_buf_u32(b, (uint32_t)s->reason);
    snap_buf_u32(b, call->pause_on);
    snap_buf_u32(b, call->gas_schedule);
    snap_buf_u64(b, call->gas_used);
    snap_buf_u64(b, call->gas_left);
    snap_buf_u32(b, s->func_index);
    snap_buf_u32(b, call->export_name_len);
    snap_buf_put(b, call->export_name, call->export_name_len);
    snap_buf_u32(b, call->nresults);
    for (uint32_t i = 0; i < call->nresults; i++) {
        if (!storable_type(call->result_types[i]))
            return snap_fail(err, RI_SNAP_ERR_STATE, "result %u has a type WSNP v2 does not hold", i);
        snap_buf_u8(b, (uint8_t)call->result_types[i]);
    }
    if (layout >= FRMS_LAYOUT_EXNREFS) {
        snap_buf_u32(b, s->nexnrefs);
        for (uint32_t k = 0; k < s->nexnrefs; k++) {
            const ri_susp_exn *e = &s->exnrefs[k];
            if ((e->nvals && !e->vals) || e->slot)
                return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: exnref %u is not well-formed", k);
            snap_buf_u32(b, e->tag_index);
            snap_buf_u32(b, e->nvals);
            /* (an exception's exnref values refer to earlier ones only) */
            if (!put_values(b, e->vals, e->nvals, func_count, k, k, err)) return false;
        }
    }
    uint32_t nexn = s->nexnrefs;
    snap_buf_u32(b, s->nframes);
    for (uint32_t i = 0; i < s->nframes; i++) {
        const ri_susp_frame *f = &s->frames[i];
        if (f->func_index >= func_count || !point_known((uint32_t)f->point) || (f->nlocals && !f->locals) ||
            (f->nstack && !f->stack) || f->via > RI_SUSP_VIA_SETTHREW || (i == 0 && f->via != RI_SUSP_VIA_CALL) ||
            f->via_value > (f->via == RI_SUSP_VIA_INVOKE ? UINT32_MAX : 0))
            return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: frame %u is not well-formed", i);
        snap_buf_u32(b, f->func_index);
        snap_buf_u32(b, f->wasm_offset);
        snap_buf_u8(b, (uint8_t)f->point);
        snap_buf_u8(b, (uint8_t)f->via);
        snap_buf_zeros(b, 2);
        snap_buf_u32(b, f->nlocals);
        snap_buf_u32(b, f->nstack);
        if (f->via == RI_SUSP_VIA_INVOKE) snap_buf_u32(b, (uint32_t)f->via_value);
        if (!put_values(b, f->locals, f->nlocals, func_count, nexn, i, err) ||
            !put_values(b, f->stack, f->nstack, func_count, nexn, i, err))
            return false;
        if (layout < FRMS_LAYOUT_EXNS) continue;
        if (f->nexns && !f->exns) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: frame %u is not well-formed", i);
        snap_buf_u32(b, f->nexns);
        for (uint32_t k = 0; k < f->nexns; k++) {
            const ri_susp_exn *e = &f->exns[k];
            if (e->nvals && !e->vals)
                return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: frame %u is not well-formed", i);
            snap_buf_u32(b, e->slot);
            snap_buf_u32(b, e->tag_index);
            snap_buf_u32(b, e->nvals);
            if (!put_values(b, e->vals, e->nvals, func_count, nexn, i, err)) return false;
        }
    }
    snap_buf_end_section(b, at);
    return true;
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    uint64_t left;
} rd;

static const uint8_t *take(rd *r, uint64_t n) {
    if (n > r->left) return NULL;
    const uint8_t *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

static bool get_values(rd *r, uint32_t n, ri_susp_value **out, uint32_t func_count, uint32_t nexn, uint32_t frame,
                       const char *what, ri_snap_error *err) {
    *out = NULL;
    if ((uint64_t)n * FRMS_VALUE_BYTES > r->left) /* before allocating anything */
        return CORRUPT("Invalid snapshot — FRMS: frame %u claims %u %s, more than the section holds", frame, n, what);
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading a suspended call");
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = take(r, FRMS_VALUE_BYTES);
        ri_valtype t = (ri_valtype)p[0];
        uint64_t bits = ri_le_get64(p + 1);
        const char *why = storable_type(t) ? value_problem(t, bits, func_count, nexn) : "an unknown value type";
        if (why) return CORRUPT("Invalid snapshot — FRMS: frame %u, %s %u: %s", frame, what, i, why);
        (*out)[i].type = t;
        (*out)[i].bits = bits;
    }
    return true;
}

/* Layout 3: the frame's kept exceptions. */
static bool get_exns(rd *r, ri_susp_frame *f, uint32_t func_count, uint32_t nexn, uint32_t frame, ri_snap_error *err) {
    const uint8_t *p = take(r, 4);
    if (!p) return CORRUPT("Invalid snapshot — FRMS is cut short in frame %u", frame);
    uint32_t n = ri_le_get32(p);
    if ((uint64_t)n * FRMS_EXN_BYTES > r->left)
        return CORRUPT("Invalid snapshot — FRMS: frame %u claims %u kept exceptions, more than the section holds", frame, n);
    f->exns = calloc(n ? n : 1, sizeof *f->exns);
    if (!f->exns) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading a suspended call");
    f->nexns = n;
    for (uint32_t k = 0; k < n; k++) {
        const uint8_t *h = take(r, FRMS_EXN_BYTES);
        if (!h) return CORRUPT("Invalid snapshot — FRMS is cut short in frame %u", frame);
        f->exns[k].slot = ri_le_get32(h);
        f->exns[k].tag_index = ri_le_get32(h + 4);
        uint32_t nvals = ri_le_get32(h + 8);
        if (!get_values(r, nvals, &f->exns[k].vals, func_count, nexn, frame, "exception value", err)) return false;
        f->exns[k].nvals = nvals;
    }
    return true;
}

/* Layout 4: the exceptions exnref values refer to (an entry's exnrefs: earlier entries). */
static bool get_exnrefs(rd *r, ri_suspension *s, uint32_t func_count, ri_snap_error *err) {
    const uint8_t *p = take(r, 4);
    if (!p) return CORRUPT("Invalid snapshot — FRMS is cut short");
    uint32_t n = ri_le_get32(p);
    if ((uint64_t)n * FRMS_EXNREF_BYTES > r->left)
        return CORRUPT("Invalid snapshot — FRMS claims %u exceptions of exnrefs, more than the section holds", n);
    s->exnrefs = calloc(n ? n : 1, sizeof *s->exnrefs);
    if (!s->exnrefs) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading a suspended call");
    s->nexnrefs = n;
    for (uint32_t k = 0; k < n; k++) {
        const uint8_t *h = take(r, FRMS_EXNREF_BYTES);
        if (!h) return CORRUPT("Invalid snapshot — FRMS is cut short in exception %u of exnrefs", k);
        s->exnrefs[k].tag_index = ri_le_get32(h);
        uint32_t nvals = ri_le_get32(h + 4);
        /* (reported as "frame k" by get_values' message: the index of the exception) */
        if (!get_values(r, nvals, &s->exnrefs[k].vals, func_count, k, k, "exnref exception value", err)) return false;
        s->exnrefs[k].nvals = nvals;
    }
    return true;
}

static bool read_call(const ri_snap_image *img, ri_snap_call *out, ri_snap_error *err) {
    rd r = {img->frames, img->frames_len};
    uint32_t func_count = img->func_count;
    const uint8_t *h = take(&r, FRMS_HEADER_BYTES);
    if (!h) return CORRUPT("Invalid snapshot — FRMS is cut short");
    uint32_t layout = ri_le_get32(h), reason = ri_le_get32(h + 4), pause_on = ri_le_get32(h + 8);
    if (layout < FRMS_LAYOUT || layout > FRMS_LAYOUT_EXNREFS)
        return snap_fail(err, RI_SNAP_ERR_UNSUPPORTED,
                         "Unsupported snapshot — FRMS layout %u (this reader knows %u to %u)", layout, FRMS_LAYOUT,
                         FRMS_LAYOUT_EXNREFS);
    if (reason < RI_SUSPENDED_GAS || reason > RI_SUSPENDED_YIELD)
        return CORRUPT("Invalid snapshot — FRMS: unknown suspension reason %u", reason);
    if (pause_on & ~(uint32_t)RI_SUSPEND_ALL) return CORRUPT("Invalid snapshot — FRMS: unknown pause-on bits 0x%x", pause_on);
    out->suspension.reason = (ri_suspend_reason)reason;
    out->pause_on = pause_on;
    out->gas_schedule = ri_le_get32(h + 12);
    if (out->gas_schedule > 1) return CORRUPT("Invalid snapshot — FRMS: unknown gas schedule %u", out->gas_schedule);
    out->gas_used = ri_le_get64(h + 16);
    if (out->gas_used > (uint64_t)INT64_MAX) return CORRUPT("Invalid snapshot — FRMS: gas used above 2^63 - 1");
    out->gas_left = ri_le_get64(h + 24);
    out->suspension.func_index = ri_le_get32(h + 32);
    if (out->suspension.func_index >= func_count)
        return CORRUPT("Invalid snapshot — FRMS: called function %u out of range (%u functions)",
                       out->suspension.func_index, func_count);
    uint32_t name_len = ri_le_get32(h + 36);
    const uint8_t *name = name_len < FRMS_MAX_NAME ? take(&r, name_len) : NULL;
    if (!name) return CORRUPT("Invalid snapshot — FRMS: export name of %u bytes does not fit", name_len);
    if (name_len) {
        out->export_name = malloc(name_len);
        if (!out->export_name) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading a suspended call");
        memcpy(out->export_name, name, name_len);
        out->export_name_len = name_len;
    }
    const uint8_t *p = take(&r, 4);
    if (!p) return CORRUPT("Invalid snapshot — FRMS is cut short");
    uint32_t nresults = ri_le_get32(p);
    const uint8_t *types = take(&r, nresults);
    if (!types) return CORRUPT("Invalid snapshot — FRMS: %u result types do not fit", nresults);
    out->result_types = calloc(nresults ? nresults : 1, sizeof *out->result_types);
    if (!out->result_types) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading a suspended call");
    out->nresults = nresults;
    for (uint32_t i = 0; i < nresults; i++) {
        out->result_types[i] = (ri_valtype)types[i];
        if (!storable_type(out->result_types[i]))
            return CORRUPT("Invalid snapshot — FRMS: result %u has unknown type 0x%02X", i, types[i]);
    }
    if (layout >= FRMS_LAYOUT_EXNREFS && !get_exnrefs(&r, &out->suspension, func_count, err)) return false;
    uint32_t nexn = out->suspension.nexnrefs;
    if (!(p = take(&r, 4))) return CORRUPT("Invalid snapshot — FRMS is cut short");
    uint32_t nframes = ri_le_get32(p);
    if (nframes == 0) return CORRUPT("Invalid snapshot — FRMS holds no frame");
    if ((uint64_t)nframes * FRMS_FRAME_BYTES > r.left)
        return CORRUPT("Invalid snapshot — FRMS claims %u frames, more than the section holds", nframes);
    out->suspension.frames = calloc(nframes, sizeof *out->suspension.frames);
    if (!out->suspension.frames) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading a suspended call");
    out->suspension.nframes = nframes;
    for (uint32_t i = 0; i < nframes; i++) {
        ri_susp_frame *f = &out->suspension.frames[i];
        const uint8_t *fh = take(&r, FRMS_FRAME_BYTES);
        if (!fh) return CORRUPT("Invalid snapshot — FRMS is cut short in frame %u", i);
        f->func_index = ri_le_get32(fh);
        f->wasm_offset = ri_le_get32(fh + 4);
        uint32_t point = fh[8];
        if (fh[10] || fh[11] || (layout == FRMS_LAYOUT && fh[9]))
            return CORRUPT("Invalid snapshot — FRMS: frame %u has non-zero reserved bytes", i);
        f->via = fh[9];
        if (f->via > RI_SUSP_VIA_SETTHREW || (i == 0 && f->via != RI_SUSP_VIA_CALL))
            return CORRUPT("Invalid snapshot — FRMS: frame %u entered by unknown or misplaced way %u", i, f->via);
        if (!point_known(point)) return CORRUPT("Invalid snapshot — FRMS: frame %u has unknown point kind %u", i, point);
        f->point = (ri_susp_point)point;
        if (f->func_index >= func_count)
            return CORRUPT("Invalid snapshot — FRMS: frame %u names function %u (%u functions)", i, f->func_index,
                           func_count);
        uint32_t nlocals = ri_le_get32(fh + 12), nstack = ri_le_get32(fh + 16);
        if (f->via == RI_SUSP_VIA_INVOKE) {
            const uint8_t *sp = take(&r, 4);
            if (!sp) return CORRUPT("Invalid snapshot — FRMS is cut short in frame %u", i);
            f->via_value = ri_le_get32(sp);
        }
        if (!get_values(&r, nlocals, &f->locals, func_count, nexn, i, "local", err)) return false;
        f->nlocals = nlocals;
        if (!get_values(&r, nstack, &f->stack, func_count, nexn, i, "operand", err)) return false;
        f->nstack = nstack;
        if (layout >= FRMS_LAYOUT_EXNS && !get_exns(&r, f, func_count, nexn, i, err)) return false;
    }
    /* (The outermost frame is the called function's, or one it reached by tail calls: the
     * engine checks which when it rebuilds the call.) */
    if (r.left) return CORRUPT("Invalid snapshot — FRMS has %llu bytes after its last frame", (unsigned long long)r.left);
    return true;
}

bool ri_snap_read_call(const ri_snap_image *img, ri_snap_call *out, ri_snap_error *err) {
    snap_ok(err);
    if (!out) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_read_call: out is NULL");
    memset(out, 0, sizeof *out);
    if (!img || !img->has_frames || !img->frames)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_read_call: the image holds no suspended call");
    if (!read_call(img, out, err)) {
        ri_snap_call_free(out);
        return false;
    }
    return true;
}
