/* Held-out: big-integer arithmetic on 32-bit limbs with 64-bit products: schoolbook
 * multiplication, then a factorial by multiplying with small numbers, then a checksum. */
#include "bench.h" /* ../shared/bench/src/bench.h */
#define LIMBS 640
static u32 a[LIMBS], b[LIMBS], prod[2 * LIMBS], fact[4096];
static void mul(const u32 *x, u32 nx, const u32 *y, u32 ny, u32 *out) {
  for (u32 i = 0; i < nx + ny; i++) out[i] = 0;
  for (u32 i = 0; i < nx; i++) {
    u64 carry = 0, xi = x[i];
    for (u32 j = 0; j < ny; j++) {
      u64 t = xi * y[j] + out[i + j] + carry;
      out[i + j] = (u32)t;
      carry = t >> 32;
    }
    out[i + ny] = (u32)carry;
  }
}
static u32 mul_small(u32 *x, u32 n, u32 m) {
  u64 carry = 0;
  for (u32 i = 0; i < n; i++) {
    u64 t = (u64)x[i] * m + carry;
    x[i] = (u32)t;
    carry = t >> 32;
  }
  if (carry) x[n++] = (u32)carry;
  return n;
}
EXPORT("run") u32 run(void) {
  u32 s = 12345u, acc = 0;
  for (u32 round = 0; round < 24; round++) {
    for (u32 i = 0; i < LIMBS; i++) { s = s * 1664525u + 1013904223u; a[i] = s; s = s * 1664525u + 1013904223u; b[i] = s ^ round; }
    mul(a, LIMBS, b, LIMBS, prod);
    for (u32 i = 0; i < 2 * LIMBS; i++) acc = (acc ^ prod[i]) * 16777619u;
  }
  u32 n = 1;
  fact[0] = 1;
  for (u32 k = 2; k <= 9000 && n < 4000; k++) n = mul_small(fact, n, k);
  for (u32 i = 0; i < n; i++) acc = (acc ^ fact[i]) * 16777619u;
  return acc ^ n;
}
