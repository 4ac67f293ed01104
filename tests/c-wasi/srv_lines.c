/* A WASI command for the server tests: reads stdin line by line, answers each uppercased,
 * until a line "quit" (the protocol has no end of stdin) or the end of input. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[256];
    int n = 0;
    printf("ready\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        if (strcmp(line, "quit\n") == 0) break;
        for (char *p = line; *p; p++) *p = (char)toupper((unsigned char)*p);
        printf("%d> %s", ++n, line);
        fflush(stdout);
    }
    printf("bye after %d\n", n);
    return 0;
}
