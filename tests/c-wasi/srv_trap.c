/* A WASI command for the server tests: output, then a trap (unreachable). */
#include <stdio.h>

int main(void) {
    printf("before the trap\n");
    fflush(stdout);
    __builtin_trap();
}
