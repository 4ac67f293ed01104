/* A WASI command (crt1-command) that writes files, lists a directory, renames, reads back
 * and prints: tests/unit/test_wasi_c.c expects its exact output. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    if (mkdir("dir", 0755) != 0) return 10;
    const char *names[] = {"dir/b.txt", "dir/a.txt", "dir/c.txt"};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(names[i], "w");
        if (!f) return 11;
        fprintf(f, "file %d\n", i);
        fclose(f);
    }
    if (rename("dir/c.txt", "dir/z.txt") != 0) return 12;
    DIR *d = opendir("dir");
    if (!d) return 13;
    char *list[8];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 8)
        if (e->d_name[0] != '.') list[n++] = strdup(e->d_name);
    closedir(d);
    qsort(list, (size_t)n, sizeof list[0], cmp);
    for (int i = 0; i < n; i++) {
        char path[64], line[64] = "";
        snprintf(path, sizeof path, "dir/%s", list[i]);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(line, sizeof line, f)) return 14;
        fclose(f);
        printf("%s: %s", list[i], line);
        free(list[i]);
    }
    return 0;
}
