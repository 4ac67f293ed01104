/* Held-out: LZ77 compression with a hash of 3-byte prefixes and a chain of earlier positions
 * (greedy, longest match in 16 candidates), then decompression, over a text of words. */
#include "bench.h" /* ../shared/bench/src/bench.h */
#define N (1u << 17)
#define HBITS 13
#define WIN 4096u
static u8 text[N], packed[N + N / 8 + 64], back[N];
static i32 head[1u << HBITS], prev[N];
static u32 h3(const u8 *p) { return ((u32)p[0] << 16 | (u32)p[1] << 8 | p[2]) * 2654435761u >> (32 - HBITS); }
static u32 make_text(u32 seed) {
  static const char *const words[] = {"the ", "sandbox ", "snapshot ", "of ", "a ", "memory ", "page ",
                                      "restore ", "fork ", "and ", "gas ", "call ", "frame ", "\n"};
  u32 s = seed, n = 0;
  while (n < N) {
    s = s * 1103515245u + 12345u;
    const char *w = words[(s >> 16) % 14];
    while (*w && n < N) text[n++] = (u8)*w++;
    if (((s >> 8) & 63u) == 0 && n + 4 < N) { text[n++] = (u8)('0' + (s >> 24) % 10); text[n++] = ' '; }
  }
  return n;
}
/* Output: a flag byte before each group of 8 items; a literal is one byte, a match two bytes
 * (12-bit distance - 1, 4-bit length - 3). */
static u32 compress(u32 n) {
  for (u32 i = 0; i < (1u << HBITS); i++) head[i] = -1;
  u32 in = 0, out = 0, flagpos = 0, items = 8;
  while (in < n) {
    if (items == 8) { flagpos = out++; packed[flagpos] = 0; items = 0; }
    u32 best = 0, dist = 0;
    if (in + 3 <= n) {
      u32 h = h3(text + in);
      i32 cand = head[h];
      for (int tries = 0; cand >= 0 && tries < 16 && in - (u32)cand <= WIN; tries++) {
        u32 len = 0, max = n - in < 18 ? n - in : 18;
        while (len < max && text[(u32)cand + len] == text[in + len]) len++;
        if (len > best) { best = len; dist = in - (u32)cand; }
        cand = prev[cand];
      }
      prev[in] = head[h];
      head[h] = (i32)in;
    }
    if (best >= 3) {
      packed[flagpos] |= (u8)(1u << items);
      u32 code = (dist - 1u) << 4 | (best - 3u);
      packed[out++] = (u8)(code >> 8);
      packed[out++] = (u8)code;
      for (u32 k = 1; k < best; k++)
        if (in + k + 3 <= n) {
          u32 h = h3(text + in + k);
          prev[in + k] = head[h];
          head[h] = (i32)(in + k);
        }
      in += best;
    } else {
      packed[out++] = text[in++];
    }
    items++;
  }
  return out;
}
static u32 decompress(u32 size) {
  u32 in = 0, out = 0;
  while (in < size) {
    u32 flags = packed[in++];
    for (u32 k = 0; k < 8 && in < size; k++) {
      if (flags & (1u << k)) {
        u32 code = (u32)packed[in] << 8 | packed[in + 1];
        in += 2;
        u32 dist = (code >> 4) + 1u, len = (code & 15u) + 3u;
        for (u32 j = 0; j < len; j++, out++) back[out] = back[out - dist];
      } else {
        back[out++] = packed[in++];
      }
    }
  }
  return out;
}
EXPORT("run") u32 run(void) {
  u32 acc = 0;
  for (u32 round = 0; round < 6; round++) {
    u32 n = make_text(round + 1u);
    u32 size = compress(n);
    u32 got = decompress(size);
    u32 h = 2166136261u;
    for (u32 i = 0; i < got; i++) h = (h ^ back[i]) * 16777619u;
    for (u32 i = 0; i < n; i++) if (back[i] != text[i]) return 0xBAD;
    acc = acc * 31u + size + h;
  }
  return acc;
}
