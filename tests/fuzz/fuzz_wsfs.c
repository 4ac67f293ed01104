/* The workspace file system (src/workspace). Mode byte, then:
 *   2 (mod 4): a workspace delta (docs/SNAPSHOT_FORMAT.md "WSFS in a delta") applied to a
 *         fixed base tree; what applies goes through the image path below;
 *   0 (mod 4): an image for wsfs_parse; a valid one re-serializes to the same bytes, and still
 *         works (a fork is changed, diffed against it, and its image parses again);
 *   odd:  a program of operations (one byte an opcode, then arguments) run on a small file
 *         system and a fork of it taken midway; afterwards both images round-trip exactly,
 *         the diff runs, and the usage counters match the images.
 * Seeds: with RI_WSFS_SEED_DIR set, the harness writes its seeds there and exits
 * (scripts/fuzz.sh does this before a run). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs.h"

#define R WSFS_ROOT_INO

static uint64_t tick(void *ctx) { return ++*(uint64_t *)ctx; }

static void check(int cond, const char *what) {
    if (!cond) {
        fprintf(stderr, "fuzz_wsfs: %s\n", what);
        abort();
    }
}

static uint8_t *image(const wsfs *fs, size_t *len) {
    uint8_t *img = NULL;
    wsfs_error err;
    check(wsfs_serialize(fs, &img, len, &err) == WSFS_OK, "serialize failed");
    return img;
}

/* parse(serialize(fs)) serializes to the same bytes */
static void round_trip(const wsfs *fs, const wsfs_config *cfg) {
    size_t len, len2;
    uint8_t *img = image(fs, &len);
    wsfs *back = NULL;
    wsfs_error err;
    if (wsfs_parse(img, len, cfg, &back, &err) != WSFS_OK) {
        fprintf(stderr, "fuzz_wsfs: an image the library wrote is refused: %s\n", err.message);
        abort();
    }
    uint8_t *again = image(back, &len2);
    check(len == len2 && memcmp(img, again, len) == 0, "round trip changed the bytes");
    free(img);
    free(again);
    wsfs_free(back);
}

static bool count_change(void *ctx, const wsfs_change *c) {
    check(c->path != NULL, "a change without a path");
    ++*(size_t *)ctx;
    return true;
}

static const char *const names[] = {"a", "b", "c", "a/b", "a/b/c", "l", "..", ".", "a/..", "/b/", "d/e", "x"};
#define NNAMES (sizeof names / sizeof names[0])

static const char *name_at(const uint8_t *p) { return names[*p % NNAMES]; }

static void run_ops(const uint8_t *d, size_t n, const wsfs_config *cfg) {
    wsfs *fs = NULL, *fork = NULL;
    check(wsfs_new(cfg, &fs, NULL) == WSFS_OK, "new failed");
    uint64_t inos[8] = {R, R, R, R, R, R, R, R};
    size_t i = 0;
    uint8_t buf[300];
    while (i + 4 <= n) {
        uint8_t op = d[i] % 18;
        const char *p1 = name_at(&d[i + 1]), *p2 = name_at(&d[i + 2]);
        uint8_t arg = d[i + 3];
        i += 4;
        wsfs *t = (fork && (op & 1)) ? fork : fs;
        uint64_t ino = inos[arg & 7];
        size_t got = 0;
        switch (op) {
        case 0: case 1: {
            uint64_t o;
            if (wsfs_open(t, R, p1, strlen(p1), arg & 31, &o) == WSFS_ESUCCESS) inos[arg & 7] = o;
            break;
        }
        case 2: wsfs_mkdir(t, R, p1, strlen(p1)); break;
        case 3: wsfs_unlink(t, R, p1, strlen(p1)); break;
        case 4: wsfs_rmdir(t, R, p1, strlen(p1)); break;
        case 5: wsfs_rename(t, R, p1, strlen(p1), R, p2, strlen(p2)); break;
        case 6: wsfs_symlink(t, p2, strlen(p2), R, p1, strlen(p1)); break;
        case 7: wsfs_link(t, R, p1, strlen(p1), arg & 1, R, p2, strlen(p2)); break;
        case 8: case 9: {
            size_t len = (size_t)(arg % 200);
            memset(buf, arg, len);
            wsfs_pwrite(t, ino, buf, len, (uint64_t)(d[i - 2] % 8) * 4093u * (arg >> 5), &got);
            break;
        }
        case 10: wsfs_pread(t, ino, buf, sizeof buf, (uint64_t)arg * 131u, &got); break;
        case 11: wsfs_truncate(t, ino, (uint64_t)arg * 257u); break;
        case 12: wsfs_pin(t, ino); break;
        case 13: wsfs_unpin(t, ino); break;
        case 14: {
            wsfs_dirent ents[4];
            wsfs_readdir(t, ino, arg, ents, 4, &got);
            break;
        }
        case 15: {
            char link[64];
            wsfs_readlink(t, R, p1, strlen(p1), link, sizeof link, &got);
            break;
        }
        case 16:
            if (!fork) fork = wsfs_fork(fs);
            break;
        default: wsfs_set_times(t, ino, arg, arg, arg & 15); break;
        }
    }
    round_trip(fs, cfg);
    if (fork) {
        round_trip(fork, cfg);
        size_t changes = 0;
        check(wsfs_diff(fs, fork, count_change, &changes) == WSFS_ESUCCESS, "diff failed");
        wsfs_free(fork);
    }
    wsfs_free(fs);
}

static void parse_bytes(const uint8_t *d, size_t n, const wsfs_config *cfg) {
    wsfs *fs = NULL;
    wsfs_error err;
    if (wsfs_parse(d, n, cfg, &fs, &err) != WSFS_OK) {
        check(fs == NULL && err.message[0], "a refused image without a message");
        return;
    }
    size_t len;
    uint8_t *img = image(fs, &len);
    check(len == n && memcmp(img, d, n) == 0, "an accepted image is not canonical");
    free(img);
    wsfs *f = wsfs_fork(fs);
    check(f != NULL, "fork failed");
    uint64_t ino;
    size_t got;
    if (wsfs_open(f, R, "fz", 2, WSFS_O_CREAT, &ino) == WSFS_ESUCCESS) wsfs_pwrite(f, ino, "z", 1, 70000, &got);
    wsfs_mkdir(f, R, "fzd", 3);
    wsfs_rename(f, R, "fz", 2, R, "fzd/fz", 6);
    size_t changes = 0;
    check(wsfs_diff(fs, f, count_change, &changes) == WSFS_ESUCCESS, "diff failed");
    round_trip(f, cfg);
    wsfs_free(f);
    wsfs_free(fs);
}

/* The base of the delta mode: a small tree built the same way every time. */
static uint8_t *delta_base(size_t *len) {
    uint64_t clk = 0;
    wsfs_config cfg = {.clock = tick, .clock_ctx = &clk};
    wsfs *fs = NULL;
    check(wsfs_new(&cfg, &fs, NULL) == WSFS_OK, "new failed");
    uint64_t ino;
    size_t got;
    wsfs_mkdir(fs, R, "d", 1);
    wsfs_open(fs, R, "d/f", 3, WSFS_O_CREAT, &ino);
    wsfs_pwrite(fs, ino, "base file", 9, 0, &got);
    wsfs_open(fs, R, "g", 1, WSFS_O_CREAT, &ino);
    wsfs_pwrite(fs, ino, "x", 1, 17000, &got);
    wsfs_symlink(fs, "d/f", 3, R, "l", 1);
    uint8_t *img = image(fs, len);
    wsfs_free(fs);
    return img;
}

static void apply_delta(const uint8_t *d, size_t n, const wsfs_config *cfg) {
    size_t blen, len;
    uint8_t *base = delta_base(&blen), *out = NULL;
    wsfs_error err;
    if (wsfs_delta_apply(base, blen, d, n, &out, &len, &err) == WSFS_OK) parse_bytes(out, len, cfg);
    else check(out == NULL && err.message[0], "a refused delta without a message");
    free(out);
    free(base);
}

static void write_seed(const char *dir, const char *name, uint8_t mode, const uint8_t *d, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    check(f != NULL, "cannot write a seed");
    fputc(mode, f);
    fwrite(d, 1, n, f);
    fclose(f);
}

/* Seeds: images of a few trees (the parser's side) and op programs (the other side). */
static void write_seeds(const char *dir) {
    uint64_t clk = 0;
    wsfs_config cfg = {.clock = tick, .clock_ctx = &clk};
    wsfs *fs = NULL;
    check(wsfs_new(&cfg, &fs, NULL) == WSFS_OK, "new failed");
    size_t len, got;
    uint8_t *img = image(fs, &len);
    write_seed(dir, "image-empty", 0, img, len);
    free(img);
    uint64_t ino;
    wsfs_mkdir(fs, R, "a", 1);
    wsfs_mkdir(fs, R, "a/b", 3);
    wsfs_open(fs, R, "a/b/c", 5, WSFS_O_CREAT, &ino);
    wsfs_pwrite(fs, ino, "content", 7, 0, &got);
    wsfs_symlink(fs, "a/b", 3, R, "l", 1);
    wsfs_link(fs, R, "a/b/c", 5, false, R, "x", 1);
    wsfs_open(fs, R, "b", 1, WSFS_O_CREAT, &ino);
    wsfs_pwrite(fs, ino, "tail", 4, 20000, &got);
    wsfs_pin(fs, ino);
    wsfs_unlink(fs, R, "b", 1);
    img = image(fs, &len);
    write_seed(dir, "image-tree", 0, img, len);
    free(img);
    wsfs_free(fs);
    static const uint8_t prog[] = {2, 0, 0, 0, 2, 3, 0, 0, 0, 4, 0, 9, 8, 0, 0, 77, 16, 0, 0, 0, 9, 0, 0, 66,
                                   5, 4, 11, 0, 6, 5, 3, 0, 7, 2, 5, 1, 12, 0, 0, 1, 3, 4, 0, 0, 13, 0, 0, 1,
                                   14, 0, 0, 0, 15, 5, 0, 0, 11, 0, 0, 3, 17, 0, 0, 5, 4, 3, 0, 0};
    write_seed(dir, "ops", 1, prog, sizeof prog);
    /* a delta: a file edited and grown, one added, the symlink removed */
    size_t blen, dlen;
    uint8_t *base = delta_base(&blen), *delta = NULL;
    wsfs *b = NULL, *c;
    check(wsfs_parse(base, blen, &cfg, &b, NULL) == WSFS_OK, "the delta base does not parse");
    c = wsfs_fork(b);
    wsfs_open(c, R, "d/f", 3, 0, &ino);
    wsfs_pwrite(c, ino, "EDIT", 4, 5, &got);
    wsfs_open(c, R, "new", 3, WSFS_O_CREAT, &ino);
    wsfs_pwrite(c, ino, "n", 1, 0, &got);
    wsfs_unlink(c, R, "l", 1);
    img = image(c, &len);
    check(wsfs_delta_encode(base, blen, img, len, &delta, &dlen, NULL) == WSFS_OK, "delta encode failed");
    write_seed(dir, "delta", 2, delta, dlen);
    free(delta);
    free(img);
    free(base);
    wsfs_free(c);
    wsfs_free(b);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *dir = getenv("RI_WSFS_SEED_DIR");
    if (dir && *dir) {
        write_seeds(dir);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    /* small limits, so that the limits are reached */
    wsfs_config cfg = {.limits = {.max_bytes = 1u << 20, .max_inodes = 64, .max_path = 64, .max_name = 16,
                                  .max_symlinks = 8}};
    uint64_t clk = 0;
    cfg.clock = tick;
    cfg.clock_ctx = &clk;
    if (data[0] & 1) run_ops(data + 1, size - 1, &cfg);
    else if (data[0] & 2) apply_delta(data + 1, size - 1, &cfg);
    else parse_bytes(data + 1, size - 1, &cfg);
    return 0;
}
