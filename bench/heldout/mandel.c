/* Held-out: f32 Mandelbrot set, escape counts summed. */
#include "bench.h" /* ../shared/bench/src/bench.h */
EXPORT("run") u32 run(void) {
  u32 total = 0;
  for (int y = 0; y < 400; y++)
    for (int x = 0; x < 600; x++) {
      float cr = -2.0f + 3.0f * (float)x / 600.0f, ci = -1.2f + 2.4f * (float)y / 400.0f;
      float zr = 0, zi = 0; int it = 0;
      while (it < 200 && zr * zr + zi * zi < 4.0f) { float t = zr * zr - zi * zi + cr; zi = 2.0f * zr * zi + ci; zr = t; it++; }
      total += (u32)it;
    }
  return total;
}
