/* `ri file extract` (see file_extract.h). */
#include "cli/file_extract.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/files.h"
#include "cli/output.h"
#include "cli/wasi_dirs.h"
#include "sandbox/files_ws.h"
#include "workspace/wsfs.h"

/* A real host directory at path (made if missing; a symlink or a file there: refused). */
static int host_dir(const char *cmd, const char *path) {
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return RI_EXIT_OK;
        return ri_fail(RI_EXIT_INPUT, cmd, "'%s' exists on the host and is not a directory (%s)", path,
                       S_ISLNK(st.st_mode) ? "a symlink, which extract does not follow" : "a file");
    }
    if (errno != ENOENT || mkdir(path, 0777) != 0)
        return ri_fail(RI_EXIT_INPUT, cmd, "cannot create the directory '%s': %s", path, strerror(errno));
    return RI_EXIT_OK;
}

static int extract_entry(const char *cmd, const wsfs *fs, const char *image, const char *guest, const char *host,
                         ri_file_type type);

static int extract_dir(const char *cmd, const wsfs *fs, const char *image, const char *guest, const char *host) {
    int rc = host_dir(cmd, host);
    if (rc != RI_EXIT_OK) return rc;
    ri_file_entry *list;
    size_t n;
    ri_sandbox_error err;
    if (!files_list(fs, guest, &list, &n, &err)) return ri_fail(RI_EXIT_INPUT, cmd, "%s: %s", image, err.message);
    for (size_t i = 0; i < n && rc == RI_EXIT_OK; i++) {
        char *g = ri_path_join(guest, list[i].name), *h = ri_path_join(host, list[i].name);
        rc = g && h ? extract_entry(cmd, fs, image, g, h, list[i].type) : ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
        free(g);
        free(h);
    }
    ri_file_list_free(list, n);
    return rc;
}

static int extract_symlink(const char *cmd, const wsfs *fs, const char *image, const char *guest, const char *host) {
    char target[WSFS_DEFAULT_MAX_PATH + 1];
    size_t n = 0;
    wsfs_errno e = wsfs_readlink(fs, WSFS_ROOT_INO, guest, strlen(guest), target, sizeof target - 1, &n);
    if (e != WSFS_ESUCCESS || n >= sizeof target)
        return ri_fail(RI_EXIT_INPUT, cmd, "%s: cannot read the symlink '%s'", image, guest);
    target[n] = '\0';
    struct stat st;
    if (lstat(host, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(host) != 0)
        return ri_fail(RI_EXIT_INPUT, cmd, "cannot replace '%s': %s", host, strerror(errno));
    if (symlink(target, host) != 0)
        return ri_fail(RI_EXIT_INPUT, cmd, "cannot create the symlink '%s': %s", host, strerror(errno));
    return RI_EXIT_OK;
}

static int extract_entry(const char *cmd, const wsfs *fs, const char *image, const char *guest, const char *host,
                         ri_file_type type) {
    if (type == RI_FILE_TYPE_DIRECTORY) return extract_dir(cmd, fs, image, guest, host);
    if (type == RI_FILE_TYPE_SYMLINK) return extract_symlink(cmd, fs, image, guest, host);
    uint8_t *data;
    size_t len;
    ri_sandbox_error err;
    if (!files_get(fs, guest, &data, &len, &err)) return ri_fail(RI_EXIT_INPUT, cmd, "%s: %s", image, err.message);
    char why[256];
    int rc = ri_write_file_atomic(host, data ? data : (const uint8_t *)"", len, why, sizeof why);
    free(data);
    return rc == RI_EXIT_OK ? rc : ri_fail(rc, cmd, "cannot write '%s': %s", host, why);
}

int ri_file_extract(const char *cmd, const wsfs *fs, const char *image, const char *guest, const char *dest) {
    ri_file_stat st;
    ri_sandbox_error err;
    if (!files_stat(fs, guest, &st, &err)) return ri_fail(RI_EXIT_INPUT, cmd, "%s: %s", image, err.message);
    if (st.type == RI_FILE_TYPE_DIRECTORY) return extract_dir(cmd, fs, image, guest, dest);
    int rc = host_dir(cmd, dest);
    if (rc != RI_EXIT_OK) return rc;
    const char *base = strrchr(guest, '/');
    char *h = ri_path_join(dest, base ? base + 1 : guest);
    rc = h ? extract_entry(cmd, fs, image, guest, h, st.type) : ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    free(h);
    return rc;
}
