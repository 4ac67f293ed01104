/* A WASI command for the server tests: says so, then works forever without reading stdin. */
#include <stdint.h>
#include <stdio.h>

int main(void) {
    printf("spinning\n");
    fflush(stdout);
    volatile uint32_t x = 1;
    for (;;) x = x * 1664525u + 1013904223u;
}
