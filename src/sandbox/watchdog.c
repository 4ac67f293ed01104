/*
 * The factory's watchdog: one thread, started on the first armed deadline, that
 * sleeps on a condition variable until the earliest deadline of the running
 * executions and interrupts their stores (ri_store_interrupt) when it passes. This is
 * how a loop without host calls still times out.
 *
 * Sandboxes may outlive their factory, so the watchdog is reference counted: the
 * factory and every sandbox hold a reference, and the last release stops and joins
 * the thread.
 */
#include <stdlib.h>
#include <time.h>

#include "sandbox_internal.h"

struct sb_watchdog {
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* on CLOCK_MONOTONIC, like the deadlines */
    sb_watch *watches;      /* armed, unordered (few run at once per factory) */
    unsigned refs;
    bool started;
    bool stopping;
    /* The deadline the thread sleeps until (UINT64_MAX: no deadline; 0: awake, it
     * rescans before sleeping again). Arming wakes it only for an earlier deadline,
     * so an execution costs no context switch in the common case. */
    uint64_t sleeping_until;
    pthread_t thread;
};

sb_watchdog *sb_watchdog_new(void) {
    sb_watchdog *wd = calloc(1, sizeof *wd);
    if (!wd) return NULL;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0) {
        free(wd);
        return NULL;
    }
    bool ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
              pthread_cond_init(&wd->wake, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (!ok) {
        free(wd);
        return NULL;
    }
    if (pthread_mutex_init(&wd->lock, NULL) != 0) {
        pthread_cond_destroy(&wd->wake);
        free(wd);
        return NULL;
    }
    wd->refs = 1;
    return wd;
}

void sb_watchdog_retain(sb_watchdog *wd) {
    if (!wd) return;
    pthread_mutex_lock(&wd->lock);
    wd->refs++;
    pthread_mutex_unlock(&wd->lock);
}

void sb_watchdog_release(sb_watchdog *wd) {
    if (!wd) return;
    pthread_mutex_lock(&wd->lock);
    bool last = --wd->refs == 0;
    if (last) {
        wd->stopping = true;
        pthread_cond_signal(&wd->wake);
    }
    bool started = wd->started;
    pthread_mutex_unlock(&wd->lock);
    if (!last) return;
    /* No run can be armed now: every run belongs to a sandbox holding a reference. */
    if (started) pthread_join(wd->thread, NULL);
    pthread_cond_destroy(&wd->wake);
    pthread_mutex_destroy(&wd->lock);
    free(wd);
}

static void *watchdog_main(void *arg) {
    sb_watchdog *wd = arg;
    pthread_mutex_lock(&wd->lock);
    while (!wd->stopping) {
        uint64_t now = (uint64_t)ri_clock_mono_ns();
        uint64_t earliest = UINT64_MAX;
        for (sb_watch *w = wd->watches; w; w = w->next) {
            if (w->fired) continue;
            if (w->deadline_ns <= now) {
                w->fired = true;
                ri_store_interrupt(w->store); /* the one cross-thread engine call */
            } else if (w->deadline_ns < earliest) {
                earliest = w->deadline_ns;
            }
        }
        wd->sleeping_until = earliest;
        if (earliest == UINT64_MAX) {
            pthread_cond_wait(&wd->wake, &wd->lock);
        } else {
            struct timespec until;
            until.tv_sec = (time_t)(earliest / 1000000000u);
            until.tv_nsec = (long)(earliest % 1000000000u);
            int rc = pthread_cond_timedwait(&wd->wake, &wd->lock, &until);
            (void)rc; /* timeouts and wake-ups alike: rescan */
        }
        wd->sleeping_until = 0;
    }
    pthread_mutex_unlock(&wd->lock);
    return NULL;
}

bool sb_watchdog_arm(sb_watchdog *wd, sb_watch *watch, ri_store *store, uint64_t deadline_ns) {
    if (!wd || !watch) return false;
    pthread_mutex_lock(&wd->lock);
    if (!wd->started) {
        if (pthread_create(&wd->thread, NULL, watchdog_main, wd) != 0) {
            pthread_mutex_unlock(&wd->lock);
            return false;
        }
        wd->started = true;
    }
    watch->store = store;
    watch->deadline_ns = deadline_ns;
    watch->fired = false;
    watch->prev = NULL;
    watch->next = wd->watches;
    if (wd->watches) wd->watches->prev = watch;
    wd->watches = watch;
    if (deadline_ns < wd->sleeping_until) pthread_cond_signal(&wd->wake); /* the new earliest */
    pthread_mutex_unlock(&wd->lock);
    return true;
}

bool sb_watchdog_disarm(sb_watchdog *wd, sb_watch *watch) {
    if (!wd || !watch) return false;
    pthread_mutex_lock(&wd->lock);
    if (watch->prev) watch->prev->next = watch->next;
    else wd->watches = watch->next;
    if (watch->next) watch->next->prev = watch->prev;
    watch->prev = watch->next = NULL;
    bool fired = watch->fired;
    pthread_mutex_unlock(&wd->lock);
    return fired;
}
