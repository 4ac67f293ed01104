/* SIMD benchmark kernel, byte-wise: a [1 2 1]/4 blur of an 8-bit image (horizontal, then
 * vertical, with rounding), a threshold count and a byte-wise saturating brighten,
 * repeated; run() returns a checksum. Built with clang-19 -O3, with and without
 * -msimd128, like dot.c (the vectoriser widens to 16-bit lanes, shifts and narrows). */
#include <stdint.h>

#define W 256
#define H 128
#define REPS 60

static uint8_t img[H][W], tmp[H][W];

__attribute__((export_name("run"))) uint32_t run(void) {
    uint32_t seed = 777;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            seed = seed * 1664525u + 1013904223u;
            img[y][x] = (uint8_t)(seed >> 24);
        }
    uint32_t sum = 0;
    for (int r = 0; r < REPS; r++) {
        for (int y = 0; y < H; y++) {
            tmp[y][0] = img[y][0];
            tmp[y][W - 1] = img[y][W - 1];
            for (int x = 1; x < W - 1; x++)
                tmp[y][x] = (uint8_t)((img[y][x - 1] + 2 * img[y][x] + img[y][x + 1] + 2) >> 2);
        }
        for (int y = 1; y < H - 1; y++)
            for (int x = 0; x < W; x++)
                img[y][x] = (uint8_t)((tmp[y - 1][x] + 2 * tmp[y][x] + tmp[y + 1][x] + 2) >> 2);
        uint32_t count = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) count += img[y][x] > 128;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                unsigned v = img[y][x] + (unsigned)(r & 3);
                img[y][x] = (uint8_t)(v > 255 ? 255 : v);
            }
        sum = sum * 31u + count;
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) sum += img[y][x] * (uint32_t)(x + 1);
    return sum;
}
