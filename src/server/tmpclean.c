/* Temporary files a killed server left in the checkpoint volume (docs/SERVER.md, "Stale
 * temporary files"): a whole image in .tmp-checkpoint_*, .tmp-latest-*,
 * .tmp-metadata.json-*, .tmp-lease-*. Only a server holding a sandbox's lease writes its
 * image, latest and metadata, and a lease is only written under the lease lock; so, under
 * that lock, lease temp files are always stale, and the others are stale unless another
 * server holds an unexpired lease on the sandbox. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server_internal.h"

static bool has_prefix(const char *name, const char *prefix) { return strncmp(name, prefix, strlen(prefix)) == 0; }

/* Removes the stale temp files directly in dir; returns how many. */
static unsigned clean_dir(const char *dir, bool lease_held_elsewhere) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *name = e->d_name;
        bool stale = has_prefix(name, ".tmp-lease-") ||
                     (!lease_held_elsewhere && (has_prefix(name, ".tmp-checkpoint_") || has_prefix(name, ".tmp-latest-") ||
                                                has_prefix(name, ".tmp-metadata.json-")));
        if (stale && unlinkat(dirfd(d), name, 0) == 0) n++;
    }
    closedir(d);
    return n;
}

static void clean_sandbox(srv *s, const char *id) {
    int fd = srv_lease_lock(s->checkpoint_path, id);
    if (fd < 0) return;
    bool elsewhere = srv_coord_maybe_elsewhere(s, id);
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", s->checkpoint_path, id);
    unsigned n = clean_dir(dir, elsewhere);
    snprintf(dir, sizeof dir, "%s/%s/checkpoints", s->checkpoint_path, id);
    n += clean_dir(dir, elsewhere);
    srv_lease_unlock(fd);
    if (n) srv_log(s, "info", "removed stale temporary files", "{s:s, s:i}", "sandbox_id", id, "files", (int)n);
}

void srv_clean_temps(srv *s, const char *id) {
    if (!s->checkpoint_path) return;
    if (id) {
        if (srv_id_valid(id)) clean_sandbox(s, id);
        return;
    }
    DIR *d = opendir(s->checkpoint_path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (srv_id_valid(e->d_name)) clean_sandbox(s, e->d_name);
    closedir(d);
}
