/* A WASI command that prints a counted sequence (each line with a running checksum) and
 * writes files as it goes: `ri run --snapshot` / `ri resume --snapshot` chains pause it
 * by gas anywhere, and must give the uninterrupted run's stdout and files
 * (tests/cli/test_file.sh). argv[1]: the count (default 300), $COUNTER_TAG: a prefix. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300;
    const char *tag = getenv("COUNTER_TAG");
    if (mkdir("out", 0755) != 0) return 10;
    uint32_t sum = 2166136261u;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 50; k++) sum = (sum ^ (uint32_t)(i * 31 + k)) * 16777619u;
        printf("%s%d %08x\n", tag ? tag : "", i, sum);
        if (i % 25 == 0) {
            char path[32];
            snprintf(path, sizeof path, "out/f%03d.txt", i);
            FILE *f = fopen(path, "w");
            if (!f) return 11;
            fprintf(f, "line %d sum %08x\n", i, sum);
            fclose(f);
        }
    }
    FILE *f = fopen("out/summary.txt", "w");
    if (!f) return 12;
    fprintf(f, "%d lines, sum %08x\n", n, sum);
    fclose(f);
    fprintf(stderr, "done\n");
    return 3;
}
