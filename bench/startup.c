/* ri-bench-startup: the start-up of the `ri` command, process spawn to exit, against the least
 * a process costs on the same machine, in one run:
 *   C main()          a C program whose main returns 0 (startup_hello.c, built like ri)
 *   true              /bin/true
 *   ri --version      the binary's load and relocation alone
 *   ri run            `ri run MODULE FUNCTION` (load, validate, compile, one call, the JSON
 *                     report), output to /dev/null
 *   ri serve --help   the server module loaded (dlopen of ri-serve.so and its libraries)
 * Rounds interleave the commands, so a change in the machine's load hits all alike. Each line
 * prints medians of the wall time, of the CPU time (user + system, from wait4) and of the
 * page faults (minor + major), and the ratios to the C program's wall and CPU time.
 * usage: ri-bench-startup RI MODULE.wasm FUNCTION [--rounds N] [--hello PATH] */
#include <fcntl.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"

#ifndef RI_BENCH_HELLO
#define RI_BENCH_HELLO "ri-bench-hello"
#endif

extern char **environ;

static double now_ms(void) { return (double)ri_clock_mono_ns() / 1e6; }

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct sample {
    double wall_ms, cpu_ms, faults;
} sample;

static double tv_ms(struct timeval tv) { return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3; }

/* One spawn of argv with stdout and stderr on /dev/null; false if it did not exit 0. */
static bool spawn_once(char *const argv[], sample *out) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = now_ms();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
    out->wall_ms = now_ms() - t0;
    out->cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
    out->faults = (double)(ru.ru_minflt + ru.ru_majflt);
    return true;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: ri-bench-startup RI MODULE.wasm FUNCTION [--rounds N] [--hello PATH]\n");
        return 2;
    }
    int rounds = 200;
    char *hello = RI_BENCH_HELLO;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--hello") == 0) hello = argv[i + 1];
        else {
            fprintf(stderr, "ri-bench-startup: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    char *ri = argv[1];
    char *cmd_hello[] = {hello, NULL};
    char *cmd_true[] = {"/bin/true", NULL};
    char *cmd_version[] = {ri, "--version", NULL};
    char *cmd_run[] = {ri, "run", argv[2], argv[3], NULL};
    char *cmd_serve[] = {ri, "serve", "--help", NULL};
    struct {
        const char *name;
        char **argv;
        sample *s;
    } cmds[] = {{"C main()", cmd_hello, NULL},
                {"true", cmd_true, NULL},
                {"ri --version", cmd_version, NULL},
                {"ri run", cmd_run, NULL},
                {"ri serve --help", cmd_serve, NULL}};
    enum { NCMD = sizeof cmds / sizeof cmds[0] };
    double *col = calloc((size_t)rounds, sizeof(double));
    if (!col) return 4;
    for (int c = 0; c < NCMD; c++) {
        cmds[c].s = calloc((size_t)rounds, sizeof(sample));
        sample warm;
        if (!cmds[c].s) return 4;
        if (!spawn_once(cmds[c].argv, &warm)) { /* a warm-up, and a check that it runs */
            fprintf(stderr, "ri-bench-startup: `%s` (%s) failed\n", cmds[c].name, cmds[c].argv[0]);
            return 1;
        }
    }
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < NCMD; c++)
            if (!spawn_once(cmds[c].argv, &cmds[c].s[r])) {
                fprintf(stderr, "ri-bench-startup: `%s` failed in round %d\n", cmds[c].name, r + 1);
                return 1;
            }
    printf("start-up, medians of %d interleaved rounds (process spawn to exit; CPU = user + system):\n", rounds);
    printf("  %-16s %9s %9s %7s %9s %8s %8s\n", "", "wall ms", "CPU ms", "faults", "CPU-C ms", "wall/C", "CPU/C");
    double base_wall = 0, base_cpu = 0;
    for (int c = 0; c < NCMD; c++) {
        for (int r = 0; r < rounds; r++) col[r] = cmds[c].s[r].wall_ms;
        double wall = median(col, rounds);
        for (int r = 0; r < rounds; r++) col[r] = cmds[c].s[r].cpu_ms;
        double cpu = median(col, rounds);
        for (int r = 0; r < rounds; r++) col[r] = cmds[c].s[r].faults;
        double faults = median(col, rounds);
        if (c == 0) {
            base_wall = wall;
            base_cpu = cpu;
        }
        printf("  %-16s %9.3f %9.3f %7.0f %+9.3f %7.2fx %7.2fx\n", cmds[c].name, wall, cpu, faults, cpu - base_cpu,
               base_wall > 0 ? wall / base_wall : 0.0, base_cpu > 0 ? cpu / base_cpu : 0.0);
        free(cmds[c].s);
    }
    free(col);
    return 0;
}
