/*
 * The WASI preview1 conformance runner: every NAME.wasm of the suite's folders is run as a
 * command in a sandbox with enable_wasi, configured by NAME.json (args, env, root: a host
 * folder copied into the workspace as "/"), and judged by its exit code, stdout and stderr
 * (SPECIFICATION.md). Prints one line per test and "N passed, N failed"; tests listed in
 * known_failures (with the reason) are expected to fail: the exit status is 0 exactly when
 * every other test passes and every listed one still fails (so a fix is noticed too).
 *
 *   ri-wasi-testsuite DIR...   (each DIR holds *.wasm and *.json)
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ri/sandbox.h"
#include "workspace/wsfs.h"

/* Tests that cannot pass yet, and why (one place). */
static const struct {
    const char *name;
    const char *reason;
} known_failures[] = {
    {"", ""}, /* (none: an empty name matches no test) */
};

static const char *known_reason(const char *name) {
    for (size_t i = 0; i < sizeof known_failures / sizeof known_failures[0]; i++)
        if (known_failures[i].name[0] && strcmp(known_failures[i].name, name) == 0) return known_failures[i].reason;
    return NULL;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Copies host folder `path` into directory `dir` of the workspace (regular files and folders). */
static bool copy_tree(wsfs *fs, uint64_t dir, const char *path) {
    DIR *d = opendir(path);
    if (!d) return false;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (strstr(e->d_name, ".cleanup")) continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(full, &st) != 0) continue;
        size_t nlen = strlen(e->d_name);
        uint64_t ino;
        if (S_ISDIR(st.st_mode)) {
            ok = wsfs_mkdir(fs, dir, e->d_name, nlen) == 0 && wsfs_lookup(fs, dir, e->d_name, nlen, false, &ino) == 0 &&
                 copy_tree(fs, ino, full);
        } else if (S_ISREG(st.st_mode)) {
            size_t len;
            uint8_t *data = read_file(full, &len);
            size_t n;
            ok = data && wsfs_open(fs, dir, e->d_name, nlen, WSFS_O_CREAT, &ino) == 0 &&
                 wsfs_pwrite(fs, ino, data, len, 0, &n) == 0;
            free(data);
        } else if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t n = readlink(full, target, sizeof target);
            ok = n >= 0 && wsfs_symlink(fs, target, (size_t)n, dir, e->d_name, nlen) == 0;
        }
    }
    closedir(d);
    return ok;
}

static bool same_text(const uint8_t *got, size_t len, const char *want) {
    return strlen(want) == len && (len == 0 || memcmp(got, want, len) == 0);
}

/* 1: passed, 0: failed (why filled). */
static int run_test(ri_sandboxes *factory, const char *dir, const char *name, char *why, size_t cap) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.wasm", dir, name);
    size_t wasm_len;
    uint8_t *wasm = read_file(path, &wasm_len);
    if (!wasm) return snprintf(why, cap, "cannot read %.300s", path), 0;
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    json_error_t jerr;
    json_t *cfg = json_load_file(path, 0, &jerr);
    if (!cfg) cfg = json_object();

    const char *argv[64];
    uint32_t argc = 0;
    argv[argc++] = name;
    json_t *args = json_object_get(cfg, "args"), *v;
    size_t i;
    json_array_foreach(args, i, v) if (argc < 64 && json_is_string(v)) argv[argc++] = json_string_value(v);
    char envbuf[64][512];
    const char *env[64];
    uint32_t nenv = 0;
    const char *key;
    json_object_foreach(json_object_get(cfg, "env"), key, v) {
        if (nenv < 64 && json_is_string(v)) {
            snprintf(envbuf[nenv], sizeof envbuf[nenv], "%s=%s", key, json_string_value(v));
            env[nenv] = envbuf[nenv];
            nenv++;
        }
    }
    ri_wasi_config wc;
    memset(&wc, 0, sizeof wc);
    wc.argv = argv;
    wc.argc = argc;
    wc.env = env;
    wc.nenv = nenv;
    /* SPECIFICATION.md: only a test with `root` gets a preopened directory. */
    wc.no_preopen = !json_is_string(json_object_get(cfg, "root"));
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000;
    c.max_memory_bytes = 1ull << 30;
    c.max_gas = 20000000000ull;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_execution_ms = 60000;
    c.enable_wasi = true;
    c.wasi = &wc;
    ri_sandbox_error err;
    int passed = 0;
    ri_sandbox *sb = ri_sandbox_create(factory, &c, &err);
    if (!sb) {
        snprintf(why, cap, "create: %s", err.message);
        goto out;
    }
    json_t *root = json_object_get(cfg, "root");
    if (json_is_string(root)) {
        char rootdir[4096];
        snprintf(rootdir, sizeof rootdir, "%s/%s", dir, json_string_value(root));
        if (!copy_tree(ri_sandbox_wasi_workspace(sb), 1, rootdir)) {
            snprintf(why, cap, "cannot copy %.300s into the workspace", rootdir);
            goto out;
        }
    }
    if (!ri_sandbox_load(sb, wasm, wasm_len, &err)) {
        snprintf(why, cap, "load: %s", err.message);
        goto out;
    }
    ri_sandbox_wasi_stdin_close(sb); /* no input */
    ri_sandbox_result r = ri_sandbox_wasi_run(sb);
    json_t *want_code = json_object_get(cfg, "exit_code");
    uint32_t want = json_is_integer(want_code) ? (uint32_t)json_integer_value(want_code) : 0;
    size_t out_len, err_len;
    const uint8_t *out = ri_sandbox_wasi_output(sb, RI_WASI_STDOUT, &out_len);
    const uint8_t *errout = ri_sandbox_wasi_output(sb, RI_WASI_STDERR, &err_len);
    json_t *want_out = json_object_get(cfg, "stdout"), *want_err = json_object_get(cfg, "stderr");
    if (!r.exited) {
        snprintf(why, cap, "did not exit: %s %s; stderr: %.*s", ri_sandbox_errcode_name(r.error.code), r.error.message,
                 (int)(err_len > 300 ? 300 : err_len), errout ? (const char *)errout : "");
    } else if (r.exit_code != want) {
        snprintf(why, cap, "exit code %u, expected %u; stderr: %.*s", r.exit_code, want, (int)(err_len > 300 ? 300 : err_len),
                 errout ? (const char *)errout : "");
    } else if (json_is_string(want_out) && !same_text(out, out_len, json_string_value(want_out))) {
        snprintf(why, cap, "stdout differs: %.*s", (int)(out_len > 200 ? 200 : out_len), out ? (const char *)out : "");
    } else if (json_is_string(want_err) && !same_text(errout, err_len, json_string_value(want_err))) {
        snprintf(why, cap, "stderr differs");
    } else {
        passed = 1;
    }
    ri_sandbox_result_free(&r);
out:
    ri_sandbox_free(sb);
    json_decref(cfg);
    free(wasm);
    return passed;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    ri_sandboxes *factory = ri_sandboxes_new();
    int passed = 0, failed = 0, unexpected = 0;
    for (int d = 1; d < argc; d++) {
        DIR *dir = opendir(argv[d]);
        if (!dir) {
            fprintf(stderr, "cannot open %s\n", argv[d]);
            return 2;
        }
        char *names[512];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(dir)) && n < 512) {
            size_t len = strlen(e->d_name);
            if (len > 5 && strcmp(e->d_name + len - 5, ".wasm") == 0) names[n++] = strndup(e->d_name, len - 5);
        }
        closedir(dir);
        qsort(names, (size_t)n, sizeof *names, by_name);
        for (int i = 0; i < n; i++) {
            char why[600] = "";
            int ok = run_test(factory, argv[d], names[i], why, sizeof why);
            const char *known = known_reason(names[i]);
            if (ok) passed++;
            else failed++;
            if (ok && !known) {
                printf("PASS %s\n", names[i]);
            } else if (!ok && known) {
                printf("FAIL-KNOWN %s (%s): %s\n", names[i], known, why);
            } else {
                unexpected++;
                printf("%s %s: %s\n", ok ? "PASS-UNEXPECTED (remove it from known_failures)" : "FAIL", names[i], why);
            }
            free(names[i]);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    ri_sandboxes_free(factory);
    return unexpected ? 1 : 0;
}
