/*
 * poll_oneoff, deterministically:
 *   1. descriptor subscriptions that are ready now (stdout/stderr writes, stdin with
 *      input or at its end, files, bad descriptors with their error) are reported,
 *      with clock subscriptions whose deadline has passed;
 *   2. else, with clock subscriptions, the virtual clock advances to the earliest
 *      deadline (no sleeping) and the clocks due then are reported;
 *   3. else (only stdin reads, no input yet) the process pauses until input comes, the
 *      events written when it resumes (as fd_read does).
 * subscription (48 bytes): userdata u64 @0, tag u8 @8, clock: id u32 @16, timeout u64 @24,
 * precision u64 @32, flags u16 @40; fd_read/fd_write: file_descriptor u32 @16.
 * event (32 bytes): userdata u64 @0, error u16 @8, type u8 @10, nbytes u64 @16, flags u16 @24.
 */
#include <string.h>

#include "wasi_internal.h"

#define SUB_BYTES 48u
#define EVENT_BYTES 32u
#define EVENT_HANGUP 1u

typedef struct fd_state {
    bool ready;
    uint16_t error;
    uint64_t nbytes;
    uint16_t flags;
} fd_state;

static fd_state fd_readiness(ri_wasi *w, uint8_t type, uint32_t fd) {
    fd_state s = {true, 0, 0, 0};
    wasi_fd *f = wasi_fd_get(w, fd);
    if (!f) {
        s.error = WASI_EBADF;
        return s;
    }
    if (!(f->rights_base & WASI_RIGHT(R_POLL_FD_READWRITE)) &&
        !(f->rights_base & WASI_RIGHT(type == EV_FD_READ ? R_FD_READ : R_FD_WRITE))) {
        s.error = WASI_ENOTCAPABLE;
        return s;
    }
    if (type == EV_FD_WRITE) {
        if (f->kind == WASI_FD_STDOUT || f->kind == WASI_FD_STDERR || f->kind == WASI_FD_FILE) return s;
        s.error = WASI_EBADF;
        return s;
    }
    if (f->kind == WASI_FD_STDIN) {
        switch (wasi_stdin_poll(w)) {
        case WASI_IN_READY: s.nbytes = wasi_stdin_buffered(w); break;
        case WASI_IN_EOF: s.flags = EVENT_HANGUP; break;
        case WASI_IN_ERROR: s.error = WASI_EIO; break;
        case WASI_IN_AGAIN: s.ready = false; break;
        }
        return s;
    }
    if (f->kind == WASI_FD_FILE) {
        uint64_t size = 0;
        if (!wasi_fs_size(w, f->ino, &size)) s.nbytes = size > f->offset ? size - f->offset : 0;
        return s;
    }
    s.error = WASI_EBADF;
    return s;
}

static void put_event(uint8_t *ev, uint64_t userdata, uint16_t error, uint8_t type, uint64_t nbytes, uint16_t flags) {
    memset(ev, 0, EVENT_BYTES);
    ri_le_put64(ev, userdata);
    ri_le_put16(ev + 8, error);
    ev[10] = type;
    ri_le_put64(ev + 16, nbytes);
    ri_le_put16(ev + 24, flags);
}

/* WASI_R_WAIT when nothing is ready and only stdin can make something ready. */
static uint32_t poll_run(wasi_call *c, uint32_t in, uint32_t out, uint32_t n, uint32_t nevents_ptr, bool may_wait) {
    if (n == 0) return WASI_EINVAL;
    const uint8_t *subs = wasi_mem_range(&c->mem, in, (uint64_t)n * SUB_BYTES);
    uint8_t *events = wasi_mem_range(&c->mem, out, (uint64_t)n * EVENT_BYTES);
    if (!subs || !events || !wasi_mem_range(&c->mem, nevents_ptr, 4)) return WASI_EFAULT;
    for (uint32_t i = 0; i < n; i++)
        if (subs[(size_t)i * SUB_BYTES + 8] > EV_FD_WRITE) return WASI_EINVAL;

    /* 1: descriptors ready now, and clocks already due */
    uint32_t nev = 0;
    bool any_clock = false;
    /* Relative timeouts count from the call, not from the advance (else never due). */
    const uint64_t start = c->w->monotonic_ns;
    uint64_t earliest = UINT64_MAX;
    for (uint32_t pass = 0; pass < 2 && nev == 0; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            const uint8_t *s = subs + (size_t)i * SUB_BYTES;
            uint64_t userdata = ri_le_get64(s);
            uint8_t type = s[8];
            if (type == EV_CLOCK) {
                uint32_t id = ri_le_get32(s + 16);
                uint64_t deadline =
                    wasi_clock_deadline(c->w, id, ri_le_get64(s + 24), (ri_le_get16(s + 40) & SUBCLOCK_ABSTIME) != 0,
                                        start);
                if (id > CLOCK_THREAD_CPUTIME_ID) {
                    if (pass == 0) put_event(events + (size_t)nev++ * EVENT_BYTES, userdata, WASI_EINVAL, type, 0, 0);
                    continue;
                }
                any_clock = true;
                if (deadline < earliest) earliest = deadline;
                /* pass 0: due without waiting; pass 1: due after the advance */
                if (deadline <= c->w->monotonic_ns)
                    put_event(events + (size_t)nev++ * EVENT_BYTES, userdata, 0, type, 0, 0);
                continue;
            }
            if (pass == 1) continue;
            fd_state st = fd_readiness(c->w, type, ri_le_get32(s + 16));
            if (st.ready) put_event(events + (size_t)nev++ * EVENT_BYTES, userdata, st.error, type, st.nbytes, st.flags);
        }
        if (nev == 0 && pass == 0) {
            if (!any_clock) {
                if (!may_wait) return WASI_EAGAIN;
                return WASI_R_WAIT;
            }
            wasi_clock_advance_to(c->w, earliest); /* 2: instead of sleeping */
        }
    }
    wasi_store_u32(&c->mem, nevents_ptr, nev);
    return WASI_ESUCCESS;
}

WASI_HANDLER(poll_oneoff) {
    uint32_t in = wasi_arg32(args, 0), out = wasi_arg32(args, 1), n = wasi_arg32(args, 2);
    uint32_t nevents = wasi_arg32(args, 3);
    uint32_t e = poll_run(c, in, out, n, nevents, wasi_may_pause(c->host));
    if (e == WASI_R_WAIT) c->w->wait = (wasi_wait){WASI_WAIT_POLL, in, out, n, nevents};
    return e;
}

bool wasi_poll_complete(wasi_call *c, uint32_t in, uint32_t out, uint32_t n, uint32_t nevents_ptr) {
    uint32_t e = poll_run(c, in, out, n, nevents_ptr, true);
    if (e == WASI_R_WAIT) return false;
    if (e) wasi_store_u32(&c->mem, nevents_ptr, 0); /* (cannot be reported: 0 went back) */
    return true;
}

bool ri_wasi_waiting(const ri_wasi *w) { return w && w->wait.kind != WASI_WAIT_NONE; }

bool ri_wasi_complete_wait(ri_wasi *w, ri_memory *memory) {
    if (!w || w->wait.kind == WASI_WAIT_NONE) return true;
    wasi_call c = {w, NULL, {NULL, 0}};
    if (memory) {
        c.mem.data = ri_memory_data(memory);
        c.mem.size = ri_memory_size(memory);
    }
    wasi_wait wt = w->wait;
    bool done = wt.kind == WASI_WAIT_READ    ? wasi_read_complete(&c, wt.a, wt.b, wt.c)
                : wt.kind == WASI_WAIT_INPUT ? wasi_stdin_poll(w) != WASI_IN_AGAIN
                                             : wasi_poll_complete(&c, wt.a, wt.b, wt.c, wt.d);
    if (done) memset(&w->wait, 0, sizeof w->wait);
    return done;
}
