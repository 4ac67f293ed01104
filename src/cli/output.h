/*
 * How ri talks to people: the output mode (JSON or a readable summary), diagnostics on
 * stderr, and text that is safe to show on a terminal.
 */
#ifndef RI_CLI_OUTPUT_H
#define RI_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define RI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define RI_PRINTF(fmt, args)
#endif

typedef enum ri_output_mode { RI_OUTPUT_AUTO, RI_OUTPUT_JSON, RI_OUTPUT_TEXT } ri_output_mode;

/* True for JSON: asked for, or AUTO with stdout not a terminal (a pipe or a file is
 * read by programs). */
bool ri_output_is_json(ri_output_mode mode);

/* Prints "ri CMD: message" on stderr and returns code. */
int ri_fail(int code, const char *cmd, const char *fmt, ...) RI_PRINTF(3, 4);
/* A usage error: the message, a pointer to --help, and RI_EXIT_USAGE. */
int ri_usage(const char *cmd, const char *fmt, ...) RI_PRINTF(2, 3);

/* printf to f, with every control character other than newline and tab, every C1
 * control and every invalid UTF-8 byte shown as \xNN: names and messages that come
 * from a module or a file must not be able to drive the terminal. */
void ri_printf_safe(FILE *f, const char *fmt, ...) RI_PRINTF(2, 3);
/* The same for a byte string that may contain NUL bytes; newlines and tabs are escaped
 * too (it is one field on one line). */
void ri_put_safe(FILE *f, const char *s, size_t n);

/* Flushes stdout; a write error (a full disk, a closed pipe) is reported and turns a
 * successful exit code into RI_EXIT_INPUT. */
int ri_finish_output(const char *cmd, int code);

#endif
