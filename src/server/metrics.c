/* GET /metrics: Prometheus text exposition. */
#include <stdio.h>
#include <stdlib.h>

#include "server_internal.h"

char *srv_metrics_text(srv *s) {
    uint64_t live = 0, hib = 0, running = 0, mem = 0, parked = 0;
    for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) {
        if (sb->hibernated) hib++;
        else if (sb->sb) {
            live++;
            /* a sandbox with a job belongs to its worker: its last known size */
            mem += sb->job ? sb->mem_bytes : ri_sandbox_get_metrics(sb->sb).memory_used_bytes;
        }
        if (sb->job && sb->job->kind == SRV_JOB_EXECUTION) running++;
        if (sb->parked) parked++;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
#define G(name, help, v) fprintf(f, "# HELP " name " " help "\n# TYPE " name " gauge\n" name " %llu\n", (unsigned long long)(v))
#define C(name, help, v) fprintf(f, "# HELP " name " " help "\n# TYPE " name " counter\n" name " %llu\n", (unsigned long long)(v))
    G("ri_server_sandboxes_live", "Sandboxes in memory.", live);
    G("ri_server_sandboxes_hibernated", "Sandboxes hibernated to disk.", hib);
    G("ri_server_connections", "Open WebSocket connections.", s->nconns);
    G("ri_server_executions_running", "Executions running now.", running);
    G("ri_server_sandbox_memory_bytes", "Memory of the live sandboxes.", mem);
    G("ri_server_output_queued_bytes", "Output of executions not yet sent to its client.", atomic_load(&s->out_bytes));
    G("ri_server_executions_paused_for_output", "Executions waiting for their client to read.", parked);
    C("ri_server_executions_total", "Executions started.", atomic_load(&s->m.executions));
    C("ri_server_checkpoints_total", "Checkpoints written.", atomic_load(&s->m.checkpoints));
    C("ri_server_checkpoint_failures_total", "Checkpoints that failed.", atomic_load(&s->m.checkpoint_failures));
    C("ri_server_restores_total", "Sandboxes restored from the volume.", atomic_load(&s->m.restores));
    C("ri_server_restore_failures_total", "Restores that failed.", atomic_load(&s->m.restore_failures));
    C("ri_server_hibernations_total", "Sandboxes hibernated under memory pressure.", atomic_load(&s->m.hibernations));
    C("ri_server_messages_total", "Client messages received.", atomic_load(&s->m.messages));
    C("ri_server_bad_messages_total", "Client messages refused.", atomic_load(&s->m.bad_messages));
#undef G
#undef C
    fclose(f);
    return buf;
}
