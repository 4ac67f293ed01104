/* A growable byte buffer with little-endian integers. An allocation failure is remembered
 * (failed) and every later write is dropped, so a writer checks once at the end. */
#ifndef RI_UTIL_BUF_H
#define RI_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ri_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed; /* an allocation failed (or a size overflowed): later writes are dropped */
} ri_buf;

/* Room for n more bytes; false (and failed set) on no memory or size_t overflow. */
bool ri_buf_reserve(ri_buf *b, size_t n);
void ri_buf_put(ri_buf *b, const void *src, size_t n);
void ri_buf_zeros(ri_buf *b, size_t n);
void ri_buf_u8(ri_buf *b, uint8_t v);
void ri_buf_u16(ri_buf *b, uint16_t v);
void ri_buf_u32(ri_buf *b, uint32_t v);
void ri_buf_u64(ri_buf *b, uint64_t v);
/* Frees the bytes and empties the buffer (reusable). */
void ri_buf_free(ri_buf *b);

#endif
