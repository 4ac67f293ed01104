/* Held-out: open-addressing hash table, inserts then lookups with a multiplicative hash. */
#include "bench.h" /* ../shared/bench/src/bench.h */
#define CAP (1u << 16)
static u32 keys[CAP], vals[CAP];
EXPORT("run") u32 run(void) {
  u32 acc = 0;
  for (int round = 0; round < 40; round++) {
    for (u32 i = 0; i < CAP; i++) keys[i] = 0;
    u32 s = 777u + (u32)round;
    for (u32 n = 0; n < CAP / 2; n++) {
      s = s * 1664525u + 1013904223u; u32 k = s | 1u;
      u32 h = (k * 2654435761u) >> 16;
      while (keys[h] && keys[h] != k) h = (h + 1) & (CAP - 1);
      keys[h] = k; vals[h] = n;
    }
    s = 777u + (u32)round;
    for (u32 n = 0; n < CAP / 2; n++) {
      s = s * 1664525u + 1013904223u; u32 k = s | 1u;
      u32 h = (k * 2654435761u) >> 16;
      while (keys[h] != k) h = (h + 1) & (CAP - 1);
      acc += vals[h] ^ h;
    }
  }
  return acc;
}
