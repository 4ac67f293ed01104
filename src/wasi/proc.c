/*
 * proc_exit, proc_raise, sched_yield and the sockets.
 *
 *   proc_exit(code)  ends the process: the execution stops cleanly with the exit code
 *                    (the sandbox reports it; 0 is success).
 *   sched_yield      a stop point: with the sandbox's pause-on-yield the process pauses
 *                    there (after returning 0) until resumed; otherwise it returns 0.
 *   proc_raise       ENOSYS: signals have no deterministic meaning here.
 *   sock_*           ENOSYS: there are no sockets (no descriptor is ever one).
 */
#include "wasi_internal.h"

WASI_HANDLER(proc_exit) {
    c->w->exited = true;
    c->w->exit_code = wasi_arg32(args, 0);
    return WASI_R_EXIT;
}

WASI_HANDLER(sched_yield) {
    (void)args;
    return c->w->yield_pauses ? WASI_R_YIELD : WASI_ESUCCESS;
}

void ri_wasi_set_yield_pauses(ri_wasi *w, bool pauses) {
    if (w) w->yield_pauses = pauses;
}

WASI_HANDLER(proc_raise) {
    (void)c, (void)args;
    return WASI_ENOSYS;
}
WASI_HANDLER(sock_accept) {
    (void)c, (void)args;
    return WASI_ENOSYS;
}
WASI_HANDLER(sock_recv) {
    (void)c, (void)args;
    return WASI_ENOSYS;
}
WASI_HANDLER(sock_send) {
    (void)c, (void)args;
    return WASI_ENOSYS;
}
WASI_HANDLER(sock_shutdown) {
    (void)c, (void)args;
    return WASI_ENOSYS;
}
