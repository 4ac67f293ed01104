/* `ri file SUBCOMMAND`: the files of a snapshot's workspace (an image file, or a store
 * snapshot with --store DIR): ls, cat, add, rm, extract (file_extract.c). docs/CLI.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/file_extract.h"
#include "cli/file_image.h"
#include "cli/files.h"
#include "cli/jsonw.h"
#include "cli/suggest.h"
#include "cli/output.h"
#include "cli/wasi_dirs.h"
#include "sandbox/files_ws.h"
#include "workspace/wsfs.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri file SUBCOMMAND [--store DIR] IMAGE [ARGS] [OPTIONS]\n"
            "\n"
            "The files of a WASI sandbox's workspace in a snapshot: IMAGE is a WSNP v2 file\n"
            "(written by `ri run --snapshot OUT COMMAND.wasm`), or with --store DIR the name\n"
            "of a snapshot in that store. Paths in the workspace are absolute (\"/data/a.txt\").\n"
            "\n"
            "subcommands:\n"
            "  ls IMAGE [PATH] [-l] [-R]        list a directory (sorted by name): -l with type\n"
            "                                   and size, -R everything below it\n"
            "  cat IMAGE PATH                   a file's bytes on stdout\n"
            "  add IMAGE HOST_PATH GUEST_PATH [-o OUT]\n"
            "                                   put a host file (or directory tree) at\n"
            "                                   GUEST_PATH, parents created, and write the image\n"
            "  rm IMAGE PATH [-r] [-o OUT]      remove a file, symlink or empty directory (-r:\n"
            "                                   a tree), and write the image\n"
            "  extract IMAGE [GUEST_PATH] DEST_DIR\n"
            "                                   copy a workspace tree (default /) to the host\n"
            "\n"
            "add and rm write a new image: to OUT with -o (a file, atomically; with --store a\n"
            "new snapshot named OUT), else in place of IMAGE (with --store, the snapshot's\n"
            "new version). Everything else in the image (memory, a paused call) is kept.\n"
            "\n"
            "options:\n"
            "  --store DIR       IMAGE names a snapshot of the store in DIR\n"
            "  -o, --output OUT  add, rm: where the new image goes\n"
            "  --json | --text   ls, add, rm: output (JSON when stdout is not a terminal)\n"
            "  -h, --help        show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

typedef struct file_opts {
    const char *cmd;
    const char *store;
    const char *out;
    const char *pos[4];
    int npos;
    bool long_, recursive;
    ri_output_mode mode;
} file_opts;

/* Options of every subcommand; flags says which of -l, -R, -r, -o it takes. */
enum { OPT_LONG = 1, OPT_RECURSE = 2, OPT_REMOVE_R = 4, OPT_OUT = 8 };

static int parse(int argc, char **argv, const char *cmd, unsigned flags, int maxpos, file_opts *o, bool *help) {
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->mode = RI_OUTPUT_AUTO;
    *help = false;
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        int rc = RI_EXIT_OK;
        if (a.kind == RI_ARG_POSITIONAL) {
            if (o->npos == maxpos) return ri_usage(cmd, "unexpected argument '%s'", a.text);
            o->pos[o->npos++] = a.text;
            continue;
        }
        int mode = ri_arg_output_mode(cmd, &a, &o->mode, &rc);
        if (mode < 0) return rc;
        if (mode > 0) continue;
        if (ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h")) {
            *help = true;
            return RI_EXIT_OK;
        } else if (ri_arg_is(&a, "--store")) {
            o->store = ri_args_value(&args, &a);
            if (!o->store || !*o->store) return ri_usage(cmd, "option --store needs a directory");
        } else if ((flags & OPT_OUT) && (ri_arg_is(&a, "-o") || ri_arg_is(&a, "--output"))) {
            o->out = ri_args_value(&args, &a);
            if (!o->out || !*o->out) return ri_usage(cmd, "option %s needs a value", a.name);
        } else if ((flags & OPT_LONG) && ri_arg_is(&a, "-l")) {
            o->long_ = true;
        } else if ((flags & OPT_RECURSE) && ri_arg_is(&a, "-R")) {
            o->recursive = true;
        } else if ((flags & OPT_REMOVE_R) && (ri_arg_is(&a, "-r") || ri_arg_is(&a, "-R"))) {
            o->recursive = true;
        } else {
            return ri_unknown_option(cmd, a.text, usage);
        }
    }
    return RI_EXIT_OK;
}

static int file_error(const ri_file_source *s, const ri_sandbox_error *err) {
    return ri_fail(RI_EXIT_INPUT, s->cmd, "%s: %s", s->image, err->message);
}

/* ---- ls ------------------------------------------------------------------------------- */

typedef struct ls_ctx {
    const ri_file_source *s;
    const file_opts *o;
    ri_jsonw *json;
} ls_ctx;

static void ls_entry(const ls_ctx *c, const char *path, const char *shown, ri_file_type type, uint64_t size) {
    char target[4097] = "";
    size_t tlen = 0;
    if (type == RI_FILE_TYPE_SYMLINK &&
        wsfs_readlink(c->s->fs, WSFS_ROOT_INO, path, strlen(path), target, sizeof target - 1, &tlen) == WSFS_ESUCCESS)
        target[tlen < sizeof target - 1 ? tlen : sizeof target - 1] = '\0';
    if (c->json) {
        ri_jsonw_object(c->json);
        ri_jsonw_key(c->json, "path");
        ri_jsonw_str(c->json, path);
        ri_jsonw_key(c->json, "type");
        ri_jsonw_str(c->json, ri_file_type_name(type));
        ri_jsonw_key(c->json, "size");
        ri_jsonw_u64(c->json, size);
        if (type == RI_FILE_TYPE_SYMLINK) {
            ri_jsonw_key(c->json, "target");
            ri_jsonw_str(c->json, target);
        }
        ri_jsonw_end(c->json);
        return;
    }
    const char *suffix = type == RI_FILE_TYPE_DIRECTORY ? "/" : "";
    if (c->o->long_ && type == RI_FILE_TYPE_SYMLINK)
        ri_printf_safe(stdout, "%-9s %12" PRIu64 "  %s -> %s\n", ri_file_type_name(type), size, shown, target);
    else if (c->o->long_)
        ri_printf_safe(stdout, "%-9s %12" PRIu64 "  %s%s\n", ri_file_type_name(type), size, shown, suffix);
    else
        ri_printf_safe(stdout, "%s%s\n", shown, suffix);
}

static int ls_dir(const ls_ctx *c, const char *dir) {
    ri_file_entry *list;
    size_t n;
    ri_sandbox_error err;
    if (!files_list(c->s->fs, dir, &list, &n, &err)) return file_error(c->s, &err);
    int rc = RI_EXIT_OK;
    for (size_t i = 0; i < n && rc == RI_EXIT_OK; i++) {
        char *path = ri_path_join(dir, list[i].name);
        if (!path) {
            rc = ri_fail(RI_EXIT_INTERNAL, c->s->cmd, "out of memory");
            break;
        }
        ls_entry(c, path, c->o->recursive ? path : list[i].name, list[i].type, list[i].size);
        if (c->o->recursive && list[i].type == RI_FILE_TYPE_DIRECTORY) rc = ls_dir(c, path);
        free(path);
    }
    ri_file_list_free(list, n);
    return rc;
}

static int do_ls(ri_file_source *s, const file_opts *o) {
    const char *path = o->npos > 1 ? o->pos[1] : "/";
    ri_file_stat st;
    ri_sandbox_error err;
    if (!files_stat(s->fs, path, &st, &err)) return file_error(s, &err);
    ri_jsonw w;
    ls_ctx c = {s, o, NULL};
    if (ri_output_is_json(o->mode)) {
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "image");
        ri_jsonw_str(&w, s->image);
        ri_jsonw_key(&w, "path");
        ri_jsonw_str(&w, path);
        ri_jsonw_key(&w, "entries");
        ri_jsonw_array(&w);
        c.json = &w;
    }
    int rc = RI_EXIT_OK;
    if (st.type == RI_FILE_TYPE_DIRECTORY) {
        rc = ls_dir(&c, path);
    } else {
        ls_entry(&c, path, path, st.type, st.size);
    }
    if (c.json) {
        ri_jsonw_end(&w);
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    }
    return rc;
}

/* ---- cat ------------------------------------------------------------------------------ */

static int do_cat(ri_file_source *s, const file_opts *o) {
    if (o->npos < 2) return ri_usage(s->cmd, "missing PATH (the file in the workspace)");
    uint8_t *data;
    size_t len;
    ri_sandbox_error err;
    if (!files_get(s->fs, o->pos[1], &data, &len, &err)) return file_error(s, &err);
    size_t done = fwrite(data ? data : (const uint8_t *)"", 1, len, stdout);
    free(data);
    return done == len ? RI_EXIT_OK : ri_fail(RI_EXIT_INPUT, s->cmd, "cannot write to stdout");
}

/* ---- add, rm -------------------------------------------------------------------------- */

static int add_file(ri_file_source *s, const char *host, const char *guest) {
    uint8_t *data;
    size_t len;
    char why[256];
    int rc = ri_read_file(host, (size_t)WSFS_DEFAULT_MAX_BYTES, &data, &len, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, s->cmd, "cannot read '%s': %s", host, why);
    ri_sandbox_error err;
    bool ok = files_put(s->fs, guest, data, len, RI_FILE_PARENTS, &err);
    free(data);
    return ok ? RI_EXIT_OK : file_error(s, &err);
}

static int add(ri_file_source *s, const file_opts *o) {
    if (o->npos < 3) return ri_usage(s->cmd, "missing %s", o->npos < 2 ? "HOST_PATH and GUEST_PATH" : "GUEST_PATH");
    const char *host = o->pos[1], *guest = o->pos[2];
    if (guest[0] != '/') return ri_usage(s->cmd, "GUEST_PATH '%s' is not absolute (e.g. /data/in.txt)", guest);
    struct stat st;
    if (stat(host, &st) != 0) return ri_fail(RI_EXIT_INPUT, s->cmd, "cannot read '%s': no such file or directory", host);
    if (!S_ISDIR(st.st_mode)) return add_file(s, host, guest);
    ri_sandbox_error err;
    ri_file_stat gs;
    if (files_stat(s->fs, guest, &gs, &err) && gs.type != RI_FILE_TYPE_DIRECTORY)
        return ri_fail(RI_EXIT_INPUT, s->cmd, "%s: '%s' is a file in the workspace; a directory cannot go there",
                       s->image, guest);
    /* (the parser normalizes GUEST_PATH and refuses '..' in it, as for ri run --dir) */
    ri_wasi_dir d = {NULL, NULL};
    if (ri_wasi_dir_parse(s->cmd, guest, &d) != RI_EXIT_OK) return RI_EXIT_USAGE;
    free((char *)d.host);
    d.host = host;
    int rc = ri_wasi_dir_copy_in(s->cmd, s->fs, &d);
    free(d.guest);
    return rc;
}

static int rm(ri_file_source *s, const file_opts *o) {
    if (o->npos < 2) return ri_usage(s->cmd, "missing PATH (what to remove from the workspace)");
    ri_sandbox_error err;
    if (files_remove(s->fs, o->pos[1], o->recursive, &err)) return RI_EXIT_OK;
    file_error(s, &err);
    if (ri_file_error_kind(&err) == RI_FILE_NOT_EMPTY) ri_fail(0, s->cmd, "-r removes a directory with its contents");
    return RI_EXIT_INPUT;
}

static int report_written(const ri_file_source *s, const file_opts *o, const char *what, const char *path,
                          const char *written) {
    if (ri_output_is_json(o->mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "ok");
        ri_jsonw_bool(&w, true);
        ri_jsonw_key(&w, what);
        ri_jsonw_str(&w, path);
        ri_jsonw_key(&w, s->store ? "snapshot" : "image");
        ri_jsonw_str(&w, written);
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        ri_printf_safe(stdout, "%s %s: %s %s\n", what, path, s->store ? "snapshot" : "image", written);
    }
    return RI_EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------------------------- */

typedef struct file_sub {
    const char *name;
    unsigned flags;
    int maxpos; /* IMAGE included */
    int (*run)(ri_file_source *s, const file_opts *o);
    bool writes;
    const char *what; /* for the report of a change */
} file_sub;

static int do_extract(ri_file_source *s, const file_opts *o) {
    if (o->npos < 2) return ri_usage(s->cmd, "missing DEST_DIR (the host directory to extract into)");
    const char *guest = o->npos == 3 ? o->pos[1] : "/";
    const char *dest = o->pos[o->npos - 1];
    return ri_file_extract(s->cmd, s->fs, s->image, guest, dest);
}

static const file_sub subs[] = {
    {"ls", OPT_LONG | OPT_RECURSE, 2, do_ls, false, NULL},
    {"cat", 0, 2, do_cat, false, NULL},
    {"add", OPT_OUT, 3, add, true, "added"},
    {"rm", OPT_OUT | OPT_REMOVE_R, 2, rm, true, "removed"},
    {"extract", 0, 3, do_extract, false, NULL},
};

int ri_cmd_file(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : NULL;
    if (!name) {
        usage(stderr);
        return RI_EXIT_USAGE;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return ri_finish_output("ri file", RI_EXIT_OK);
    }
    const file_sub *sub = NULL;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(name, subs[i].name) == 0) sub = &subs[i];
    if (!sub) return ri_usage("ri file", "unknown subcommand '%s' (ls, cat, add, rm, extract)", name);
    char cmd[32];
    snprintf(cmd, sizeof cmd, "ri file %s", sub->name);
    file_opts o;
    bool help;
    int rc = parse(argc - 1, argv + 1, cmd, sub->flags, sub->maxpos + 1, &o, &help);
    if (rc != RI_EXIT_OK) return rc;
    if (help) {
        usage(stdout);
        return ri_finish_output(cmd, RI_EXIT_OK);
    }
    if (o.npos < 1) return ri_usage(cmd, "missing IMAGE (a WSNP v2 file, or a snapshot's name with --store DIR)");
    ri_file_source s;
    rc = ri_file_source_open(&s, cmd, o.pos[0], o.store);
    if (rc == RI_EXIT_OK) rc = sub->run(&s, &o);
    if (rc == RI_EXIT_OK && sub->writes) {
        const char *written;
        rc = ri_file_source_save(&s, o.out, &written);
        if (rc == RI_EXIT_OK) rc = report_written(&s, &o, sub->what, o.pos[o.npos - 1], written);
    }
    ri_file_source_close(&s);
    return ri_finish_output(cmd, rc);
}
