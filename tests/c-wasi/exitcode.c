/* A WASI command that exits with the code its first argument names (default 3), after a
 * line on stdout and one on stderr. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    printf("args=%d\n", argc);
    fprintf(stderr, "bye\n");
    exit(argc > 1 ? atoi(argv[1]) : 3);
}
