/* A WASI command for the server tests: a long counted sequence, each line after some work,
 * so that time slices and a live checkpoint pause it mid-way; then one line of stdin, then
 * more lines. Its output is the same however often it is paused. */
#include <stdint.h>
#include <stdio.h>

static uint32_t work(uint32_t x) {
    for (int i = 0; i < 200000; i++) x = x * 1664525u + 1013904223u;
    return x;
}

int main(void) {
    uint32_t h = 1;
    for (int i = 0; i < 400; i++) {
        h = work(h);
        printf("line %d %08x\n", i, h);
        fflush(stdout);
    }
    char line[128] = "";
    if (!fgets(line, sizeof line, stdin)) return 4;
    printf("input: %s", line);
    for (int i = 400; i < 500; i++) {
        h = work(h);
        printf("line %d %08x\n", i, h);
        fflush(stdout);
    }
    return 0;
}
