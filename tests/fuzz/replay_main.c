/* A main for the harnesses outside libFuzzer: runs LLVMFuzzerTestOneInput once on each
 * file named (a directory: each file in it, in name order), so the committed regression
 * inputs replay in the normal and the sanitizer builds as ordinary tests. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "out of memory reading %s\n", path);
        return 1;
    }
    /* an exact-size copy, so ASan sees a read past the input as libFuzzer would */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    printf("ok %s (%zu bytes)\n", path, n);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

int main(int argc, char **argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int failed = 0, ran = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "cannot stat %s\n", argv[i]);
            failed++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed += run_file(argv[i]);
            ran++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, NULL, by_name);
        for (int k = 0; k < n; k++) {
            if (names[k]->d_name[0] != '.') {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
                failed += run_file(path);
                ran++;
            }
            free(names[k]);
        }
        if (n >= 0) free(names);
    }
    printf("%d inputs replayed, %d unreadable\n", ran, failed);
    return failed ? 1 : 0;
}
