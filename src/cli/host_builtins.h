/*
 * The host functions `ri run --host NAME` can give a module (config.hostFunctions): a
 * command line cannot pass C callbacks, so ri offers a few fixed ones. They write only
 * to stderr, never to stdout, so JSON output stays clean.
 */
#ifndef RI_CLI_HOST_BUILTINS_H
#define RI_CLI_HOST_BUILTINS_H

#include "ri/sandbox.h"

/* The built-in named name, or NULL. */
const ri_host_function *ri_host_builtin(const char *name);

/* One line per built-in: name, signature, what it does (for --help). */
extern const char ri_host_builtins_help[];

#endif
