/* A WASI command for the server tests (tests/server/test_ws_delta.py): the first run makes
 * data/ with 200 files of 20 KiB (deterministic bytes), the second changes a few bytes of
 * one file and removes another, every later one changes nothing; each run then prints
 * every file of data/ in name order with its size and FNV-1a hash, so the test can check
 * the exact tree. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NFILES 200
#define FILE_BYTES 20480

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int make(void) {
    if (mkdir("data", 0755) != 0) return 10;
    static unsigned char buf[FILE_BYTES];
    for (int i = 0; i < NFILES; i++) {
        for (int k = 0; k < FILE_BYTES; k++) buf[k] = (unsigned char)((i * 31 + k * 7 + (k >> 8)) & 0xff);
        char name[32];
        snprintf(name, sizeof name, "data/f%03d", i);
        FILE *f = fopen(name, "wb");
        if (!f || fwrite(buf, 1, FILE_BYTES, f) != FILE_BYTES) return 11;
        fclose(f);
    }
    return 0;
}

static int touch(void) {
    FILE *f = fopen("data/f007", "r+b");
    if (!f || fseek(f, 1000, SEEK_SET) != 0 || fwrite("changed", 1, 7, f) != 7) return 20;
    fclose(f);
    if (remove("data/f123") != 0) return 21;
    return 0;
}

int main(void) {
    int step = 0;
    FILE *f = fopen("step", "r");
    if (f) {
        if (fscanf(f, "%d", &step) != 1) return 2;
        fclose(f);
    }
    int rc = step == 0 ? make() : step == 1 ? touch() : 0;
    if (rc) return rc;
    f = fopen("step", "w");
    if (!f) return 3;
    fprintf(f, "%d\n", step + 1);
    fclose(f);
    DIR *d = opendir("data");
    if (!d) return 4;
    char *list[NFILES + 8];
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < NFILES + 8)
        if (e->d_name[0] != '.') list[k++] = strdup(e->d_name);
    closedir(d);
    qsort(list, (size_t)k, sizeof list[0], cmp);
    printf("step %d\n", step);
    static unsigned char buf[FILE_BYTES * 2];
    for (int i = 0; i < k; i++) {
        char name[300];
        snprintf(name, sizeof name, "data/%s", list[i]);
        FILE *g = fopen(name, "rb");
        if (!g) return 5;
        size_t n = fread(buf, 1, sizeof buf, g);
        fclose(g);
        uint32_t h = 2166136261u;
        for (size_t j = 0; j < n; j++) h = (h ^ buf[j]) * 16777619u;
        printf("%s %zu %08x\n", list[i], n, (unsigned)h);
        free(list[i]);
    }
    return 0;
}
