/*
 * The standard streams. stdout and stderr go to the embedder's write callback, or into a
 * buffer per stream (capped: beyond it ENOSPC). stdin comes from the embedder's read
 * callback, or from what it pushed; bytes received wait in a buffer (part of the state a
 * snapshot keeps) until the program reads them. "No input yet" is not an error: the read
 * pauses the process (fd_io.c, poll.c) until the embedder resumes it.
 */
#include <stdlib.h>
#include <string.h>

#include "wasi_internal.h"

#define STDIN_CHUNK 65536u

static bool reserve(uint8_t **data, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 256;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    uint8_t *grown = realloc(*data, n);
    if (!grown) return false;
    *data = grown;
    *cap = n;
    return true;
}

uint32_t wasi_stdio_write(ri_wasi *w, ri_wasi_stream s, const uint8_t *data, size_t len) {
    if (len == 0) return WASI_ESUCCESS;
    if (w->write) return w->write(w->write_user, s, data, len) ? WASI_ESUCCESS : WASI_EIO;
    wasi_outbuf *b = &w->out[s == RI_WASI_STDERR ? 1 : 0];
    if (len > w->max_output || b->len > w->max_output - len) return WASI_ENOSPC;
    if (!reserve(&b->data, &b->cap, b->len + len)) return WASI_ENOMEM;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return WASI_ESUCCESS;
}

bool ri_wasi_stdin_push(ri_wasi *w, const uint8_t *data, size_t len) {
    if (!w || (len && !data) || w->in_closed) return false;
    if (len > SIZE_MAX - w->in_len || !reserve(&w->in, &w->in_cap, w->in_len + len)) return false;
    if (len) memcpy(w->in + w->in_len, data, len);
    w->in_len += len;
    return true;
}

void ri_wasi_stdin_close(ri_wasi *w) {
    if (w) w->in_closed = true;
}

size_t wasi_stdin_buffered(const ri_wasi *w) { return w->in_len; }

wasi_in_state wasi_stdin_poll(ri_wasi *w) {
    if (w->in_len) return WASI_IN_READY;
    if (w->in_closed) return WASI_IN_EOF;
    if (!w->read) return WASI_IN_AGAIN;
    if (!reserve(&w->in, &w->in_cap, STDIN_CHUNK)) return WASI_IN_ERROR;
    int64_t n = w->read(w->read_user, w->in, STDIN_CHUNK);
    if (n == RI_WASI_READ_AGAIN) return WASI_IN_AGAIN;
    if (n == 0) {
        w->in_closed = true;
        return WASI_IN_EOF;
    }
    if (n < 0 || (uint64_t)n > STDIN_CHUNK) return WASI_IN_ERROR;
    w->in_len = (size_t)n;
    return WASI_IN_READY;
}

size_t wasi_stdin_take(ri_wasi *w, uint8_t *dst, size_t cap) {
    size_t n = cap < w->in_len ? cap : w->in_len;
    if (dst && n) memcpy(dst, w->in, n);
    memmove(w->in, w->in + n, w->in_len - n);
    w->in_len -= n;
    return n;
}

const uint8_t *ri_wasi_output(const ri_wasi *w, ri_wasi_stream stream, size_t *len) {
    const wasi_outbuf *b = &w->out[stream == RI_WASI_STDERR ? 1 : 0];
    if (len) *len = b->len;
    return b->data;
}

void ri_wasi_output_clear(ri_wasi *w, ri_wasi_stream stream) { w->out[stream == RI_WASI_STDERR ? 1 : 0].len = 0; }

bool wasi_may_pause(ri_host_call *call) {
    return call && (ri_store_suspend_mode(ri_host_call_store(call)) & RI_SUSPEND_ON_YIELD);
}

bool wasi_stdin_wait(ri_wasi *w, ri_host_call *call) {
    if (!wasi_may_pause(call)) return false;
    w->wait = (wasi_wait){WASI_WAIT_INPUT, 0, 0, 0, 0};
    return true;
}
