/* A WASI command for the server tests: some output, then exit code 3. */
#include <stdio.h>

int main(void) {
    printf("about to fail\n");
    fprintf(stderr, "failing with 3\n");
    return 3;
}
