/*
 * Command-line scanning for the ri subcommands: GNU-style options (--name VALUE or
 * --name=VALUE, anywhere among the positionals, "--" ends them) and strict numbers.
 */
#ifndef RI_CLI_ARGS_H
#define RI_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/output.h"

typedef enum ri_arg_kind { RI_ARG_END, RI_ARG_POSITIONAL, RI_ARG_OPTION } ri_arg_kind;

typedef struct ri_args {
    int argc;
    char **argv;
    int next;                 /* index of the next argument to scan */
    bool options_ended;       /* "--" seen: everything after is positional */
} ri_args;

typedef struct ri_arg {
    ri_arg_kind kind;
    const char *text;         /* the argument as written */
    char name[40];            /* an option's name up to '=' ("--seed"); "" if too long */
    const char *value;        /* the inline value after '=', or NULL */
} ri_arg;

/* argv[0] is the subcommand's name and is skipped. */
void ri_args_init(ri_args *a, int argc, char **argv);

/* The next argument. "-5", "-.5" and "-" are positionals (a negative number is a
 * payload, not an option). */
ri_arg ri_args_next(ri_args *a);

/* The value of an option that takes one: its inline value, else the next argument
 * (whatever it looks like). NULL when there is none. */
const char *ri_args_value(ri_args *a, const ri_arg *opt);

bool ri_arg_is(const ri_arg *opt, const char *name);

/* --timeout MS|none: milliseconds, or RI_CLI_NO_TIMEOUT for none. A usage error is printed
 * and its exit status returned. */
int ri_arg_timeout(const char *cmd, ri_args *a, const ri_arg *opt, uint32_t *ms);

/* The output-mode options every command takes: --json or --text, each without a value,
 * not both. 1: it was one of them (*mode set); 0: it was not; -1: misused (the usage
 * error is printed and *rc holds the exit code). */
int ri_arg_output_mode(const char *cmd, const ri_arg *opt, ri_output_mode *mode, int *rc);

/* Strict decimal parsers: digits only (and a leading '-' for ri_parse_i64), no spaces,
 * no empty string, no overflow. On failure *why says what was wrong. */
bool ri_parse_u64(const char *s, uint64_t max, uint64_t *out, const char **why);
bool ri_parse_i64(const char *s, int64_t *out, const char **why);
/* A byte count: digits with an optional binary suffix KiB, MiB or GiB (or K, M, G). */
bool ri_parse_bytes(const char *s, uint64_t *out, const char **why);

#endif
