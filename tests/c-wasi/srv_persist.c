/* A WASI command for the server tests (tests/server/test_wasi_proc.py): each run counts
 * itself in state/count (written to a temporary file, then renamed), keeps a file per run,
 * and prints the count and the sorted listing of state/: files outlive executions. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    if (mkdir("state", 0755) != 0 && errno != EEXIST) return 10;
    int n = 0;
    FILE *f = fopen("state/count", "r");
    if (f) {
        if (fscanf(f, "%d", &n) != 1) return 11;
        fclose(f);
    }
    n++;
    f = fopen("state/count.tmp", "w");
    if (!f) return 12;
    fprintf(f, "%d\n", n);
    fclose(f);
    if (rename("state/count.tmp", "state/count") != 0) return 13;
    char name[64];
    snprintf(name, sizeof name, "state/run-%d.txt", n);
    f = fopen(name, "w");
    if (!f) return 14;
    fprintf(f, "run %d was here\n", n);
    fclose(f);
    DIR *d = opendir("state");
    if (!d) return 15;
    char *list[64];
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < 64)
        if (e->d_name[0] != '.') list[k++] = strdup(e->d_name);
    closedir(d);
    qsort(list, (size_t)k, sizeof list[0], cmp);
    printf("run %d\n", n);
    for (int i = 0; i < k; i++) {
        printf("  %s\n", list[i]);
        free(list[i]);
    }
    f = fopen("state/run-1.txt", "r");
    char line[64] = "";
    if (!f || !fgets(line, sizeof line, f)) return 16;
    fclose(f);
    printf("first: %s", line);
    return 0;
}
