/*
 * proc_exit, proc_raise, sched_yield and the sockets.
 *
 *   proc_exit(code)  ends the process: the execution stops cleanly with the exit code
 *                    (the sandbox reports it; 0 is success).
 *   sched_yield      a stop point: with the sandbox's pause-on-yield the process pauses
 *                    there (after returning 0) until resumed; otherwise it returns 0.
 *   proc_raise       ENOSYS: signals have no deterministic meaning here.
 *   sock_*           ENOTSOCK (EBADF for a closed descriptor): no descriptor is ever a socket.
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
/* No descriptor is a socket: EBADF for a closed one, else ENOTSOCK. */
static uint32_t not_a_socket(wasi_call *c, const ri_val *args) {
    return wasi_fd_get(c->w, wasi_arg32(args, 0)) ? WASI_ENOTSOCK : WASI_EBADF;
}
WASI_HANDLER(sock_accept) { return not_a_socket(c, args); }
WASI_HANDLER(sock_recv) { return not_a_socket(c, args); }
WASI_HANDLER(sock_send) { return not_a_socket(c, args); }
WASI_HANDLER(sock_shutdown) { return not_a_socket(c, args); }
