/* Held-out: naive substring search counting matches over a text of a small alphabet. */
#include "bench.h" /* ../shared/bench/src/bench.h */
static u8 text[200000];
EXPORT("run") u32 run(void) {
  u32 s = 99;
  for (u32 i = 0; i < sizeof text; i++) { s = s * 1103515245u + 12345u; text[i] = (u8)('a' + ((s >> 16) % 4)); }
  static const u8 pats[4][6] = {"abcab", "ddaca", "bbbba", "acdca"};
  u32 count = 0;
  for (int rep = 0; rep < 30; rep++)
    for (int p = 0; p < 4; p++)
      for (u32 i = 0; i + 5 <= sizeof text; i++) {
        u32 j = 0;
        while (j < 5 && text[i + j] == pats[p][j]) j++;
        if (j == 5) count += i;
      }
  return count;
}
