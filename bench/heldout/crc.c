/* Held-out: table-driven CRC-32 over a pseudo-random buffer, many passes. */
#include "bench.h" /* ../shared/bench/src/bench.h */
static u32 table[256];
static u8 buf[65536];
EXPORT("run") u32 run(void) {
  for (u32 i = 0; i < 256; i++) { u32 c = i; for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1; table[i] = c; }
  u32 s = 12345; for (u32 i = 0; i < sizeof buf; i++) { s = s * 1103515245u + 12345u; buf[i] = (u8)(s >> 16); }
  u32 acc = 0;
  for (int pass = 0; pass < 300; pass++) {
    u32 c = 0xFFFFFFFFu ^ (u32)pass;
    for (u32 i = 0; i < sizeof buf; i++) c = table[(c ^ buf[i]) & 0xFF] ^ (c >> 8);
    acc += c ^ 0xFFFFFFFFu;
  }
  return acc;
}
