/* The progress line of long operations (progress.h): a drawing thread wakes every tenth
 * of a second, so that an operation inside the library (which reports nothing) still
 * shows that it is alive and for how long. */
#include "cli/progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DRAW_EVERY_NS 100000000L /* 10 drawings a second at most */
#define SHOW_AFTER_S 0.5         /* quicker operations are not worth a line */
#define LOG_EVERY_S 1.0          /* into a pipe or a log, a line a second is enough */

struct ri_progress {
    char what[160];
    uint64_t total;
    _Atomic uint64_t done;
    bool terminal; /* redraw in place; else one line per drawing (RI_PROGRESS=always) */
    double delay;
    struct timespec started;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;
    bool drawn;
    double last_drawn;
};

static double seconds_since(const struct timespec *t0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void draw(ri_progress *p) {
    double elapsed = seconds_since(&p->started);
    if (elapsed < p->delay || (!p->terminal && p->drawn && elapsed - p->last_drawn < LOG_EVERY_S)) return;
    char line[320];
    uint64_t done = atomic_load(&p->done);
    if (p->total > 0) {
        if (done > p->total) done = p->total;
        snprintf(line, sizeof line, "ri: %s  %3u%%  %llu MiB of %llu MiB  %.1f s", p->what,
                 (unsigned)(done * 100 / p->total), (unsigned long long)(done >> 20),
                 (unsigned long long)(p->total >> 20), elapsed);
    } else {
        snprintf(line, sizeof line, "ri: %s...  %.1f s", p->what, elapsed);
    }
    if (p->terminal) fprintf(stderr, "\r\033[K%s", line);
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
    p->drawn = true;
    p->last_drawn = elapsed;
}

static void *drawing_loop(void *arg) {
    ri_progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += DRAW_EVERY_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->wake, &p->lock, &until);
        if (!p->stop) draw(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

ri_progress *ri_progress_start(const char *what, uint64_t total) {
    const char *mode = getenv("RI_PROGRESS");
    bool always = mode && strcmp(mode, "always") == 0;
    if ((mode && strcmp(mode, "never") == 0) || (!always && !isatty(STDERR_FILENO))) return NULL;
    ri_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL; /* progress is a courtesy: the operation goes on without it */
    snprintf(p->what, sizeof p->what, "%s", what);
    p->total = total;
    p->terminal = isatty(STDERR_FILENO);
    p->delay = always ? 0 : SHOW_AFTER_S;
    clock_gettime(CLOCK_MONOTONIC, &p->started);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (always) draw(p); /* the first line at once: a test sees it however fast the work is */
    if (pthread_create(&p->thread, NULL, drawing_loop, p) != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

void ri_progress_set(ri_progress *p, uint64_t done) {
    if (p) atomic_store(&p->done, done);
}

void ri_progress_finish(ri_progress *p) {
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    if (p->drawn) {
        if (p->terminal) fprintf(stderr, "\r\033[K");
        else fprintf(stderr, "ri: %s done  %.1f s\n", p->what, seconds_since(&p->started));
        fflush(stderr);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
