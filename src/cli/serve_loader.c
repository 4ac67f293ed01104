/*
 * `ri serve` lives in a module of its own (ri-serve.so), loaded only by that command: the
 * server's libraries (libwebsockets, libssl, libcurl and theirs, about thirty) would
 * otherwise be loaded and relocated at every start of every command, which cost `ri run`
 * more than the rest of its start-up. The module sits beside the `ri` binary (a build
 * tree) or in LIBDIR/ri (an installed tree, RI_SERVE_MODULE_REL from the binary's folder).
 */
#ifdef RI_HAVE_SERVER
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"

#ifndef RI_SERVE_MODULE_REL
#define RI_SERVE_MODULE_REL "../lib/ri"
#endif
#define RI_SERVE_MODULE_NAME "ri-serve.so"

typedef int (*serve_main_fn)(int argc, char **argv);

/* The folder of the running binary, with its trailing slash; false if unknown. */
static bool binary_dir(char *out, size_t cap) {
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0 || (size_t)n >= cap - 1) return false;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash) return false;
    slash[1] = '\0';
    return true;
}

int ri_cmd_serve(int argc, char **argv) {
    char dir[PATH_MAX];
    if (!binary_dir(dir, sizeof dir)) {
        fprintf(stderr, "ri serve: cannot find the folder of the ri binary (/proc/self/exe)\n");
        return RI_EXIT_INTERNAL;
    }
    const char *const places[] = {"", RI_SERVE_MODULE_REL "/"};
    char path[PATH_MAX + 64];
    char first_error[512] = "";
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        int w = snprintf(path, sizeof path, "%s%s%s", dir, places[i], RI_SERVE_MODULE_NAME);
        if (w < 0 || (size_t)w >= sizeof path) continue;
        if (access(path, F_OK) != 0) continue;
        void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!module) {
            const char *e = dlerror();
            if (!first_error[0]) snprintf(first_error, sizeof first_error, "%.400s", e ? e : "dlopen failed");
            continue;
        }
        serve_main_fn serve_main;
        /* POSIX's way to turn dlsym's object pointer into a function pointer. */
        *(void **)&serve_main = dlsym(module, "ri_serve_main");
        if (!serve_main) {
            fprintf(stderr, "ri serve: %s has no ri_serve_main (a module from another version?)\n", path);
            return RI_EXIT_INTERNAL;
        }
        return serve_main(argc, argv); /* the module stays loaded until exit */
    }
    if (first_error[0])
        fprintf(stderr, "ri serve: cannot load the server module: %s\n", first_error);
    else
        fprintf(stderr, "ri serve: the server module %s is not installed (looked in %s and %s%s)\n",
                RI_SERVE_MODULE_NAME, dir, dir, RI_SERVE_MODULE_REL);
    return RI_EXIT_INTERNAL;
}
#else
typedef int ri_serve_loader_unavailable;
#endif
