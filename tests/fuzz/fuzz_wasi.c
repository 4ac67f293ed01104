/* The WASI layer (src/wasi) under random call sequences with random arguments, through a real
 * sandbox: tests/wat/wasi_dispatch.wat exports call(index, a0..a8), which calls any of the 46
 * wasi_snapshot_preview1 functions. The input is a program of steps:
 *   byte % 4 == 0: a write into the guest's memory: u16 offset, u8 length, the bytes;
 *   otherwise:     a call: u8 function index, then per argument a selector byte choosing a
 *                  value (0, a small number, an address in memory, a descriptor, all ones,
 *                  a 32- or 64-bit raw value, a page boundary) and its bytes.
 * Every call must end as a value (an errno), a pause (a stdin wait or sched_yield: the call
 * is abandoned), an exit (proc_exit: the run ends) or a limit; the host must never crash,
 * leak or read outside the guest's memory (ASan), and the workspace must stay sound (its
 * image round-trips). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/files.h"
#include "ri/sandbox.h"
#include "workspace/wsfs.h"

#define STEPS_MAX 64

static uint8_t *dispatcher;
static size_t dispatcher_len;

static void check(int cond, const char *what) {
    if (!cond) {
        fprintf(stderr, "fuzz_wasi: %s\n", what);
        abort();
    }
}

static void load_dispatcher(void) {
    if (dispatcher) return;
    FILE *f = fopen(RI_FUZZ_WAT_DIR "/wasi_dispatch.wasm", "rb");
    check(f != NULL, "cannot open " RI_FUZZ_WAT_DIR "/wasi_dispatch.wasm");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    dispatcher = malloc((size_t)n);
    check(dispatcher && fread(dispatcher, 1, (size_t)n, f) == (size_t)n, "cannot read the dispatcher");
    dispatcher_len = (size_t)n;
    fclose(f);
}

typedef struct reader {
    const uint8_t *p, *end;
} reader;

static uint64_t take(reader *r, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n && r->p < r->end; i++) v |= (uint64_t)*r->p++ << (8 * i);
    return v;
}

static int64_t argument(reader *r) {
    switch (take(r, 1) % 8) {
    case 0: return 0;
    case 1: return (int64_t)take(r, 1);             /* a small number (a length, flags) */
    case 2: return (int64_t)(take(r, 2) % 65536);   /* an address in the first page */
    case 3: return (int64_t)(take(r, 1) % 8);       /* a descriptor */
    case 4: return -1;                              /* all ones */
    case 5: return (int64_t)(uint32_t)take(r, 4);   /* any 32-bit value */
    case 6: return (int64_t)take(r, 8);             /* any 64-bit value */
    default: return 65536 - (int64_t)(take(r, 1) % 16); /* at the end of the memory */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    load_dispatcher();
    static const char *const argv[] = {"prog", "--flag", "x"};
    static const char *const env[] = {"HOME=/", "LANG=C.UTF-8"};
    ri_wasi_config wasi;
    memset(&wasi, 0, sizeof wasi);
    wasi.argv = argv;
    wasi.argc = 3;
    wasi.env = env;
    wasi.nenv = 2;
    wasi.max_output_bytes = 65536;
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = 1000000;
    c.max_memory_bytes = 4u << 16;
    c.max_execution_ms = 60000;
    c.enable_wasi = true;
    c.wasi = &wasi;
    ri_sandbox_error err;
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = ri_sandbox_create(factory, &c, &err);
    check(sb != NULL, "create");
    check(ri_sandbox_load(sb, dispatcher, dispatcher_len, &err), "load of the dispatcher");
    /* a small tree to find: a file, a directory with a file, a symlink made by the program */
    ri_sandbox_file_put(sb, "/a.txt", (const uint8_t *)"hello\n", 6, 0, &err);
    ri_sandbox_file_put(sb, "/d/b.bin", (const uint8_t *)"\0\1\2\3", 4, RI_FILE_PARENTS, &err);
    static const char paths[] = "a.txt\0d\0d/b.bin\0new\0../x\0/abs\0d/../a.txt\0";
    ri_sandbox_memory_write(sb, 1024, paths, sizeof paths, &err);
    ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)"input\n", 6);

    reader r = {data, data + size};
    for (int step = 0; step < STEPS_MAX && r.p < r.end; step++) {
        uint8_t op = (uint8_t)take(&r, 1);
        if (op % 4 == 0) {
            uint64_t at = take(&r, 2);
            size_t n = (size_t)take(&r, 1);
            if (n > (size_t)(r.end - r.p)) n = (size_t)(r.end - r.p);
            ri_sandbox_memory_write(sb, at, r.p, n, &err); /* out of bounds: refused, fine */
            r.p += n;
            continue;
        }
        ri_val args[10];
        args[0] = ri_val_i32((int32_t)take(&r, 1));
        for (int i = 1; i < 10; i++) args[i] = ri_val_i64(argument(&r));
        ri_sandbox_result res = ri_sandbox_wasi_call(sb, "call", args, 10);
        if (getenv("RI_FUZZ_WASI_TRACE")) fprintf(stderr, "call %d: ok %d value %d err %s %s\n", args[0].of.i32, res.ok, res.nresults ? res.results[0].of.i32 : -99, ri_sandbox_errcode_name(res.error.code), res.error.message);
        bool paused = !res.ok && res.error.code == RI_SANDBOX_SUSPENDED_CALL;
        bool exited = res.exited;
        check(res.ok || paused || exited || res.error.code == RI_SANDBOX_GAS_EXHAUSTED ||
                  res.error.code == RI_SANDBOX_MEMORY_EXCEEDED || res.error.code == RI_SANDBOX_WASM_TRAP,
              res.error.message);
        ri_sandbox_result_free(&res);
        if (paused) check(ri_sandbox_abandon(sb, &err), "abandon of a paused call");
        if (exited) break;
    }
    /* the workspace is still sound: its image parses back to the same bytes */
    struct wsfs *fs = ri_sandbox_wasi_workspace(sb);
    check(fs != NULL, "no workspace");
    uint8_t *img = NULL, *img2 = NULL;
    size_t len = 0, len2 = 0;
    wsfs_error we;
    check(wsfs_serialize(fs, &img, &len, &we) == WSFS_OK, "serialize");
    wsfs *back = NULL;
    check(wsfs_parse(img, len, NULL, &back, &we) == WSFS_OK, "the workspace's image does not parse");
    check(wsfs_serialize(back, &img2, &len2, &we) == WSFS_OK && len2 == len && memcmp(img, img2, len) == 0,
          "the workspace's image does not round-trip");
    free(img);
    free(img2);
    wsfs_free(back);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    return 0;
}
