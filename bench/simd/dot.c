/* SIMD benchmark kernel: an int16 dot product and a float saxpy over arrays in linear
 * memory, repeated; run() returns a checksum. Built twice with clang-19 -O3, with and
 * without -msimd128 (the vectoriser turns the loops into v128 code), to compare ri's
 * SIMD with its scalar code and with Node. */
#include <stdint.h>

#define N 4096
#define REPS 400

static int16_t a[N], b[N];
static float x[N], y[N];

__attribute__((export_name("run"))) uint32_t run(void) {
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        a[i] = (int16_t)(seed >> 16);
        seed = seed * 1103515245u + 12345u;
        b[i] = (int16_t)(seed >> 16);
        x[i] = (float)(i & 255) * 0.25f;
        y[i] = (float)(i & 127) * 0.5f;
    }
    uint32_t sum = 0;
    for (int r = 0; r < REPS; r++) {
        int32_t dot = 0;
        for (int i = 0; i < N; i++) dot += (int32_t)a[i] * b[i];
        sum = sum * 31u + (uint32_t)dot;
        float k = (float)(r & 7) * 0.125f;
        for (int i = 0; i < N; i++) y[i] = y[i] * 0.5f + k * x[i];
        a[r & (N - 1)] ^= (int16_t)dot;
    }
    uint32_t fs = 0;
    for (int i = 0; i < N; i++) fs += (uint32_t)(int32_t)y[i];
    return sum ^ fs;
}
