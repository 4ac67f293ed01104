/* Executions of `{"language":"wasm","code":...}`: the module is loaded and its `_start`
 * runs on a worker: as a WASI process when it imports wasi_snapshot_preview1 (stdout and
 * stderr through the write callback, stdin pushed into the process, a read with no input
 * pauses it off its worker until a stdin event), else with the I/O ABI ri.write / ri.read
 * (docs/SERVER.md). Output goes
 * out as UTF-8 text (a character split across writes waits for its end) through the
 * sandbox's output log (outlog.c); stdin is a buffer the service thread fills;
 * kill_process interrupts the run and wakes a read. A program that fails once it runs
 * reports it as the original does: its error on stderr, then SANDBOX_EXECUTION_DONE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_internal.h"

static const ri_valtype write_params[] = {RI_I32, RI_I32, RI_I32};
static const ri_valtype read_params[] = {RI_I32, RI_I32};
static const ri_valtype i32_result[] = {RI_I32};

static bool mem_range(ri_host_call *call, int32_t ptr, int32_t len, uint8_t **p) {
    ri_memory *mem = ri_host_call_memory(call);
    if (!mem || ptr < 0 || len < 0) return false;
    uint64_t size = ri_memory_size(mem);
    if ((uint64_t)(uint32_t)ptr + (uint64_t)(uint32_t)len > size) return false;
    *p = ri_memory_data(mem) + (uint32_t)ptr;
    return true;
}

static void emit_output(srv_sandbox *sb, int fd, const uint8_t *data, size_t len, bool flush) {
    size_t n;
    char *text = srv_utf8_feed(&sb->out_utf8[fd - 1], data, len, flush, &n);
    if (!text) return;
    if (n > 0) srv_post_output(sb->s, sb, fd, text, n);
    else free(text);
}

static int host_write(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    srv_sandbox *sb = user;
    int32_t fd = args[0].of.i32, ptr = args[1].of.i32, len = args[2].of.i32;
    uint8_t *p;
    if ((fd != 1 && fd != 2) || !mem_range(call, ptr, len, &p)) {
        results[0] = ri_val_i32(-1);
        return 0;
    }
    emit_output(sb, fd, p, (size_t)len, false);
    results[0] = ri_val_i32(len);
    /* the client does not read, or others wait: the call completes, then the execution
     * pauses (an interrupt alone may not reach code that keeps calling imports) */
    if (srv_sched_should_yield(sb)) return ri_host_yield(call);
    return 0;
}

static int host_read(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    srv_sandbox *sb = user;
    int32_t ptr = args[0].of.i32, len = args[1].of.i32;
    uint8_t *p;
    if (!mem_range(call, ptr, len, &p)) {
        results[0] = ri_val_i32(-1);
        return 0;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    int64_t left = sb->exec_deadline - ri_clock_mono_ms();
    if (left < 0) left = 0;
    deadline.tv_sec += left / 1000;
    deadline.tv_nsec += (left % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&sb->io_lock);
    while (sb->stdin_len == 0 && !sb->stdin_closed && !atomic_load(&sb->killed)) {
        if (pthread_cond_timedwait(&sb->io_cond, &sb->io_lock, &deadline) == ETIMEDOUT) break;
    }
    if (atomic_load(&sb->killed)) {
        pthread_mutex_unlock(&sb->io_lock);
        return ri_host_fail(call, "killed");
    }
    size_t n = sb->stdin_len < (size_t)len ? sb->stdin_len : (size_t)len;
    /* the memory may not have moved: the run is blocked here, nothing grows it */
    if (n > 0) {
        memcpy(p, sb->stdin_buf, n);
        memmove(sb->stdin_buf, sb->stdin_buf + n, sb->stdin_len - n);
        sb->stdin_len -= n;
    }
    pthread_mutex_unlock(&sb->io_lock);
    results[0] = ri_val_i32((int32_t)n);
    return 0;
}

/* A WASI process wrote to stdout or stderr: into the output log, as ri.write. Back-pressure
 * or a preemption interrupts it: it pauses at its next stop point (a write callback
 * cannot yield as an import can). */
static bool wasi_write(void *user, ri_wasi_stream stream, const uint8_t *data, size_t len) {
    srv_sandbox *sb = user;
    emit_output(sb, stream == RI_WASI_STDERR ? 2 : 1, data, len, false);
    if (srv_sched_should_yield(sb) && sb->sb) ri_sandbox_interrupt(sb->sb);
    return true;
}

ri_sandbox_config srv_sandbox_ri_config(srv_sandbox *sb) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.max_memory_bytes = sb->cfg.max_memory_bytes;
    c.max_gas = sb->cfg.max_gas;
    c.max_execution_ms = sb->cfg.max_execution_ms;
    c.deterministic_seed = sb->cfg.seed;
    c.has_event_timestamp = true;
    c.event_timestamp = sb->cfg.event_timestamp;
    c.gas_schedule = sb->cfg.gas_schedule;
    return c;
}

ri_sandbox_config srv_sandbox_full_config(srv_sandbox *sb, srv_host_fns *host, ri_wasi_config *wasi) {
    static const char *const argv[1] = {"main"};
    ri_host_function *fns = host->fns;
    memset(host, 0, sizeof *host);
    memset(wasi, 0, sizeof *wasi);
    wasi->argv = argv;
    wasi->argc = 1;
    wasi->write = wasi_write;
    wasi->write_user = sb;
    fns[0] = (ri_host_function){.name = "write", .nparams = 3, .params = write_params,
                                .nresults = 1, .results = i32_result, .fn = host_write, .user = sb};
    fns[1] = (ri_host_function){.name = "read", .nparams = 2, .params = read_params,
                                .nresults = 1, .results = i32_result, .fn = host_read, .user = sb};
    host->modules[0] = host->modules[1] = "ri";
    ri_sandbox_config c = srv_sandbox_ri_config(sb);
    c.host_functions = fns;
    c.nhost_functions = srv_lang_imports_add(sb->s, host, 2);
    c.host_modules = host->modules;
    /* every sandbox owns a workspace: its files outlive executions, and snapshots carry them;
     * the Emscripten profile lets it run the interpreters of code as text (langs.c) */
    c.enable_wasi = true;
    c.enable_emscripten = true;
    c.wasi = wasi;
    return c;
}

ri_sandbox *srv_sandbox_make(srv_sandbox *sb, ri_sandbox_error *err) {
    srv_host_fns *fns = malloc(sizeof *fns);
    ri_wasi_config wasi;
    if (!fns) {
        memset(err, 0, sizeof *err);
        err->code = RI_SANDBOX_INVALID_CONFIG;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    ri_sandbox_config c = srv_sandbox_full_config(sb, fns, &wasi);
    ri_sandbox *made = ri_sandbox_create_with_id(sb->s->factory, &c, sb->id, err);
    free(fns);
    return made;
}

/* ---- the execution job ------------------------------------------------------------------- */

static void post_status(srv_sandbox *sb, const char *status) { srv_post(sb->s, sb, srv_ev_status(status)); }

static void post_error(srv_sandbox *sb, const char *status, const char *message) {
    post_status(sb, status);
    srv_post(sb->s, sb, srv_ev_error(message));
}

static void format_error(const ri_sandbox_error *e, char *out, size_t cap) {
    if (e->code == RI_SANDBOX_WASM_TRAP && e->trap_kind[0])
        snprintf(out, cap, "WASM_TRAP %s: %s", e->trap_kind, e->message);
    else
        snprintf(out, cap, "%s: %s", ri_sandbox_errcode_name(e->code), e->message);
}

/* The call is over: the rest of its output, its error on stderr (a failing program is not
 * a protocol error), its DONE event (job->event, with exit_code and the typed error), and
 * back to unpausable calls. */
static void execution_end(srv_job *job, const ri_sandbox_result *r) {
    srv_sandbox *sb = job->sb;
    ri_sandbox_set_pause_on(sb->sb, 0, NULL);
    emit_output(sb, 1, NULL, 0, true);
    emit_output(sb, 2, NULL, 0, true);
    if (atomic_load(&sb->killed)) {
        job->event = srv_ev_done(false, "KILLED", "The execution was stopped.", NULL);
    } else if (!r->ok) {
        char msg[700];
        format_error(&r->error, msg, sizeof msg);
        size_t n = strlen(msg);
        msg[n] = '\n';
        emit_output(sb, 2, (const uint8_t *)msg, n + 1, true);
        /* a WASI process's own exit code; any other failure is 1 */
        int code = r->exited && r->exit_code <= INT32_MAX ? (int)r->exit_code : 1;
        job->event = srv_ev_done_code(code, ri_sandbox_errcode_name(r->error.code), r->error.message,
                                      r->error.code == RI_SANDBOX_WASM_TRAP ? r->error.trap_kind : NULL);
    } else {
        job->event = srv_ev_done(true, NULL, NULL, NULL);
    }
}

/* Why a slice came back paused: the kill, output back-pressure, a preemption, else its
 * time is up (the engine's per-slice limit, max_execution_ms, pauses instead of failing). */
static void slice_paused(srv_job *job, ri_sandbox_result *r) {
    srv_sandbox *sb = job->sb;
    if (!atomic_load(&sb->killed) && job->run_ms < (int64_t)sb->cfg.max_execution_ms) {
        job->paused = true; /* a preemption, output to wait for, stdin, or a stray interrupt */
        if (atomic_load(&sb->out_blocked)) job->pause_why = SRV_PAUSE_OUTPUT;
        else if (job->wasi && ri_sandbox_wasi_waiting(sb->sb)) job->pause_why = SRV_PAUSE_STDIN;
        else job->pause_why = SRV_PAUSE_SLICE;
        return;
    }
    ri_sandbox_abandon(sb->sb, NULL);
    ri_sandbox_result_free(r);
    memset(r, 0, sizeof *r);
    if (atomic_load(&sb->killed)) {
        r->ok = true;
        return;
    }
    r->error.code = RI_SANDBOX_TIMEOUT;
    snprintf(r->error.message, sizeof r->error.message, "Execution timed out after %lld ms (limit %u ms)",
             (long long)job->run_ms, sb->cfg.max_execution_ms);
}

/* A WASI process waiting for stdin gets what the client sent (and its end); one that is
 * not waiting gets nothing yet, so input a program never reads stays bounded in our buffer
 * (SRV_STDIN_MAX), as with ri.read. */
static void feed_stdin(srv_sandbox *sb) {
    if (!ri_sandbox_wasi_waiting(sb->sb)) return;
    pthread_mutex_lock(&sb->io_lock);
    if (sb->stdin_len > 0) ri_sandbox_wasi_stdin_push(sb->sb, sb->stdin_buf, sb->stdin_len);
    sb->stdin_len = 0;
    if (sb->stdin_closed) ri_sandbox_wasi_stdin_close(sb->sb);
    pthread_mutex_unlock(&sb->io_lock);
}

/* One slice: the call's start, or its continuation. */
static ri_sandbox_result run_slice(srv_job *job) {
    srv_sandbox *sb = job->sb;
    int64_t t0 = ri_clock_mono_ms();
    sb->exec_deadline = t0 + ((int64_t)sb->cfg.max_execution_ms - job->run_ms);
    atomic_store(&job->preempt, false);
    atomic_store(&sb->out_blocked, false);
    atomic_store(&job->slice_deadline, sb->exec_deadline);
    atomic_store(&job->slice_started, t0 ? t0 : 1);
    ri_sandbox_result r;
    if (atomic_load(&sb->killed)) {
        memset(&r, 0, sizeof r);
        r.ok = true;
        if (job->started) ri_sandbox_abandon(sb->sb, NULL);
    } else if (job->started && job->wasi && atomic_load(&sb->live_ckpt)) {
        /* a live checkpoint waits for it: paused as it is, without running */
        atomic_store(&job->slice_started, 0);
        job->paused = true;
        job->pause_why = SRV_PAUSE_SLICE;
        memset(&r, 0, sizeof r);
        r.error.code = RI_SANDBOX_SUSPENDED_CALL;
        return r;
    } else if (!job->started) {
        job->started = true;
        atomic_store(&sb->pausable, true);
        if (job->interp) {
            const char *code = json_string_value(json_object_get(job->msg, "code"));
            r = ri_interpreter_run(job->interp, sb->sb, code, strlen(code));
        } else {
            r = job->wasi ? ri_sandbox_wasi_run(sb->sb) : ri_sandbox_execute(sb->sb, "_start", NULL);
        }
    } else {
        if (job->wasi) feed_stdin(sb);
        atomic_store(&sb->pausable, true);
        r = ri_sandbox_resume_carry(sb->sb);
        if (job->interp) ri_interpreter_end(job->interp, sb->sb, &r);
    }
    atomic_store(&sb->pausable, false);
    atomic_store(&job->slice_started, 0);
    job->run_ms += ri_clock_mono_ms() - t0;
    if (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) slice_paused(job, &r);
    return r;
}

/* RUNNING, then the first slice: pausing on an interrupt (preemption, the slice's time) and
 * when ri.write yields. */
static void first_slice(srv_job *job) {
    srv_sandbox *sb = job->sb;
    memset(sb->out_utf8, 0, sizeof sb->out_utf8);
    post_status(sb, "SANDBOX_EXECUTION_RUNNING");
    ri_sandbox_set_pause_on(sb->sb, RI_SUSPEND_ON_INTERRUPT | RI_SUSPEND_ON_YIELD, NULL);
    ri_sandbox_result r = run_slice(job);
    if (!job->paused) execution_end(job, &r);
    ri_sandbox_result_free(&r);
}

static void execution_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    if (job->started) {
        ri_sandbox_result r = run_slice(job);
        if (!job->paused) execution_end(job, &r);
        ri_sandbox_result_free(&r);
        return;
    }
    if (!sb->sb) { /* a sandbox still being made (snapshot_restore/branch) */
        post_error(sb, "SANDBOX_EXECUTION_ERROR", "The sandbox is not ready yet.");
        return;
    }
    const char *code = json_string_value(json_object_get(job->msg, "code"));
    ri_language lang = srv_language_of(json_string_value(json_object_get(job->msg, "language")));
    if (lang != RI_LANG_NONE) { /* code as text: the sandbox restarts into the interpreter */
        char why[600];
        if (!code) {
            post_error(sb, "SANDBOX_EXECUTION_ERROR", "Invalid code: a string was expected.");
            return;
        }
        job->interp = srv_interpreter(sb->s, lang, why, sizeof why);
        if (!job->interp) {
            post_error(sb, "SANDBOX_EXECUTION_ERROR", why);
            return;
        }
        job->wasi = true;
        sb->run_lang = lang;
        first_slice(job);
        return;
    }
    sb->run_lang = RI_LANG_NONE;
    uint8_t *wasm = NULL;
    size_t n = 0;
    if (!code || !ri_base64_decode_lenient(code, strlen(code), &wasm, &n)) {
        post_error(sb, "SANDBOX_EXECUTION_ERROR", "Invalid code: a base64-encoded WebAssembly module was expected.");
        return;
    }
    ri_sandbox_error err;
    bool loaded = ri_sandbox_load(sb->sb, wasm, n, &err);
    job->wasi = loaded && srv_module_imports_wasi(wasm, n);
    free(wasm);
    if (!loaded) {
        char msg[700];
        format_error(&err, msg, sizeof msg);
        post_error(sb, "SANDBOX_EXECUTION_ERROR", msg);
        return;
    }
    first_slice(job);
}

/* No stdin, no kill request: the state between executions. */
static void reset_io(srv_sandbox *sb) {
    pthread_mutex_lock(&sb->io_lock);
    sb->stdin_len = 0;
    sb->stdin_closed = false;
    atomic_store(&sb->killed, false);
    pthread_mutex_unlock(&sb->io_lock);
}

/* DONE is sent here, on the service thread, once the sandbox is free again: a client that
 * acts on DONE never finds the execution still running. It follows the rest of the output
 * and is kept for a reconnect until written (outlog.c). */
static void execution_done(srv_job *job) {
    srv_sandbox *sb = job->sb;
    if (job->event) { /* it ran (execution_end) */
        srv_output_done(sb, job->event);
        job->event = NULL;
    } else if (sb->conn) { /* refused before it ran: no RUNNING, a plain DONE */
        srv_conn_send_status(sb->conn, "SANDBOX_EXECUTION_DONE");
    }
    reset_io(sb);
    sb->detached_since = 0; /* the next execution's grace starts when it runs detached */
    /* a live checkpoint asked as it ended: an ordinary checkpoint now */
    if (atomic_exchange(&sb->live_ckpt, false) && !sb->removed && !sb->kill_pending && !sb->detached_ended &&
        sb->live_reason != SRV_CKPT_HANDOFF) /* (a handoff's checkpoint starts on the next tick) */
        srv_start_checkpoint(sb, sb->live_reason);
    if (sb->detached_ended) { /* ended by the grace period: with checkpointing, saved and freed */
        sb->detached_ended = false;
        srv *s = sb->s;
        if (!sb->conn && !sb->removed && !s->stopping && !sb->kill_pending && s->checkpoint_path &&
            sb->cfg.enable_checkpoint)
            srv_start_checkpoint(sb, SRV_CKPT_IDLE);
    }
}

srv_job *srv_execution_job_resumed(srv_sandbox *sb) {
    srv_job *job = srv_job_new(SRV_JOB_EXECUTION, sb, NULL, execution_work, execution_done);
    if (!job) return NULL;
    job->started = true;
    job->wasi = true;
    /* a run of code as text goes on with its interpreter's end (a restored one too) */
    if (sb->run_lang != RI_LANG_NONE) {
        char why[600];
        job->interp = srv_interpreter(sb->s, sb->run_lang, why, sizeof why);
    }
    return job;
}

void srv_start_execution(srv_sandbox *sb, json_t *msg) {
    srv_job *job = srv_job_new(SRV_JOB_EXECUTION, sb, msg, execution_work, execution_done);
    if (!job) {
        if (sb->conn) srv_conn_send_error(sb->conn, "SANDBOX_EXECUTION_ERROR", "Out of memory.");
        return;
    }
    reset_io(sb);
    srv_output_new_execution(sb);
    atomic_fetch_add(&sb->s->m.executions, 1);
    srv_submit(sb->s, job);
}

/* Stops whatever runs: the interrupt reaches a loop without host calls, the condition
 * variable a blocked read. */
void srv_kill_process(srv_sandbox *sb) {
    if (!sb->job && !sb->hib_proc) return;
    pthread_mutex_lock(&sb->io_lock);
    atomic_store(&sb->killed, true);
    pthread_cond_broadcast(&sb->io_cond);
    pthread_mutex_unlock(&sb->io_lock);
    if (sb->sb) ri_sandbox_interrupt(sb->sb);
    if (sb->parked || sb->hib_proc) srv_sched_unpark(sb); /* a parked execution ends on its worker */
}
