/* ri-bench-startup: the start-up of the `ri` command, process spawn to exit, against the least
 * a dynamically linked process costs on the same machine (/bin/true), in one run:
 *   true              /bin/true
 *   ri --version      the binary's load and relocation alone
 *   ri run            `ri run MODULE FUNCTION` on a one-instruction function (load, validate,
 *                     compile, one call, the JSON report), output to /dev/null
 *   ri serve --help   the server module loaded (dlopen of ri-serve.so and its libraries)
 * Rounds interleave the commands; each line prints the median, and the median less true's
 * (the cost that is ri's own).
 * usage: ri-bench-startup RI MODULE.wasm FUNCTION [--rounds N] */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"

extern char **environ;

static double now_ms(void) { return (double)ri_clock_mono_ns() / 1e6; }

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One spawn of argv with stdout and stderr on /dev/null; its wall time in ms, or -1. */
static double spawn_once(char *const argv[]) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = now_ms();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return now_ms() - t0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: ri-bench-startup RI MODULE.wasm FUNCTION [--rounds N]\n");
        return 2;
    }
    int rounds = 200;
    if (argc >= 6 && strcmp(argv[4], "--rounds") == 0) rounds = atoi(argv[5]);
    if (rounds < 1) rounds = 1;
    char *ri = argv[1];
    char *cmd_true[] = {"/bin/true", NULL};
    char *cmd_version[] = {ri, "--version", NULL};
    char *cmd_run[] = {ri, "run", argv[2], argv[3], NULL};
    char *cmd_serve[] = {ri, "serve", "--help", NULL};
    struct {
        const char *name;
        char **argv;
        double *ms;
    } cmds[] = {{"true", cmd_true, NULL}, {"ri --version", cmd_version, NULL}, {"ri run", cmd_run, NULL},
                {"ri serve --help", cmd_serve, NULL}};
    enum { NCMD = sizeof cmds / sizeof cmds[0] };
    for (int c = 0; c < NCMD; c++) {
        cmds[c].ms = calloc((size_t)rounds, sizeof(double));
        if (!cmds[c].ms) return 4;
        if (spawn_once(cmds[c].argv) < 0) { /* a warm-up, and a check that it runs */
            fprintf(stderr, "ri-bench-startup: `%s` failed\n", cmds[c].name);
            return 1;
        }
    }
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < NCMD; c++) cmds[c].ms[r] = spawn_once(cmds[c].argv);
    printf("start-up, median of %d interleaved rounds (process spawn to exit):\n", rounds);
    double base = 0;
    for (int c = 0; c < NCMD; c++) {
        qsort(cmds[c].ms, (size_t)rounds, sizeof(double), cmp);
        double med = cmds[c].ms[rounds / 2];
        if (c == 0) base = med;
        printf("  %-16s %7.3f ms   %+7.3f ms over true   %5.2fx true\n", cmds[c].name, med, med - base,
               base > 0 ? med / base : 0.0);
        free(cmds[c].ms);
    }
    return 0;
}
