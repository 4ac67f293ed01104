/* Embedding ri-sandbox in a C program: a sandbox with a host function, executions, a
 * limit, a snapshot restored into a second sandbox, and a copy-on-write fork.
 *
 *   wat2wasm examples/embed.wat -o embed.wasm
 *   cc -std=c11 examples/embed.c $(pkg-config --cflags --libs ri) -o embed && ./embed embed.wasm
 *
 * docs/GUIDE.md walks through it. */
#include <stdio.h>
#include <stdlib.h>

#include <ri/ri.h>

/* env.report(i32): the module tells the host each new counter value. */
static int report(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)results;
    printf("  %s heard %d\n", (const char *)user, args[0].of.i32);
    return 0;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 4096))) break;
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

/* Executes action and prints its value, or its error; returns whether it succeeded. */
static int run(ri_sandbox *sb, const char *action) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, NULL);
    if (r.ok)
        printf("%s %s -> %s (gas %llu)\n", ri_sandbox_id(sb), action, r.value_json ? r.value_json : "nothing",
               (unsigned long long)r.gas_used);
    else
        printf("%s %s failed: %s: %s\n", ri_sandbox_id(sb), action, ri_sandbox_errcode_name(r.error.code),
               r.error.message);
    int ok = r.ok;
    ri_sandbox_result_free(&r);
    return ok;
}

int main(int argc, char **argv) {
    size_t len = 0;
    uint8_t *wasm = argc == 2 ? read_file(argv[1], &len) : NULL;
    if (!wasm) {
        fprintf(stderr, "usage: embed MODULE.wasm (examples/embed.wat compiled with wat2wasm)\n");
        return 2;
    }
    printf("ri %s\n", ri_version());

    /* 1. Configure: limits, deterministic time and randomness, the host function. */
    static const ri_valtype i32[] = {RI_I32};
    ri_host_function host = {.name = "report", .nparams = 1, .params = i32, .fn = report, .user = "host"};
    ri_sandbox_config config = ri_sandbox_config_default();
    config.has_event_timestamp = true;          /* what __get_time returns: a fixed event time */
    config.event_timestamp = 1700000000000;
    config.gas_schedule = RI_GAS_INSTRUCTIONS;  /* every instruction costs 1 */
    config.max_gas = 100000;
    config.host_functions = &host;
    config.nhost_functions = 1;

    /* 2. Create and load: a bad module or a forbidden import is refused here. */
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &config, &err);
    if (!sb || !ri_sandbox_load(sb, wasm, len, &err)) {
        fprintf(stderr, "%s: %s\n", ri_sandbox_errcode_name(err.code), err.message);
        return 1;
    }

    /* 3. Execute, again and again: the state stays between executions. */
    run(sb, "step");
    run(sb, "step");
    run(sb, "spin");  /* stopped by the gas limit, deterministically */

    /* 4. A snapshot (WSNP v2 bytes: to a file, a store, another machine) restored into
     *    a new sandbox. */
    uint8_t *image = NULL;
    size_t image_len = 0;
    ri_sandbox *copy = ri_sandbox_create(factory, &config, &err);
    if (!copy || !ri_sandbox_snapshot_with(sb, NULL, &image, &image_len, &err) ||
        !ri_sandbox_load(copy, wasm, len, &err) || !ri_sandbox_restore(copy, image, image_len, &err)) {
        fprintf(stderr, "%s: %s\n", ri_sandbox_errcode_name(err.code), err.message);
        return 1;
    }
    printf("snapshot: %zu bytes, restored into %s\n", image_len, ri_sandbox_id(copy));
    run(copy, "step");

    /* 5. A fork: a copy-on-write twin in the same process; both go on separately. */
    ri_sandbox *twin = ri_sandbox_fork(factory, sb, NULL, &err);
    if (!twin) {
        fprintf(stderr, "%s: %s\n", ri_sandbox_errcode_name(err.code), err.message);
        return 1;
    }
    run(twin, "step");
    run(twin, "step");
    run(sb, "step");

    free(image);
    free(wasm);
    ri_sandbox_free(twin); /* destroys the sandbox and frees its handle */
    ri_sandbox_free(copy);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    return 0;
}
