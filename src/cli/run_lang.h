/*
 * `ri run --lang LANGUAGE (-c CODE | FILE)`: code as text through an interpreter built to
 * WebAssembly (docs/LANGUAGES.md).
 */
#ifndef RI_CLI_RUN_LANG_H
#define RI_CLI_RUN_LANG_H

#include <stdbool.h>

/* Whether the arguments of `ri run` ask for a language (a --lang option before "--"). */
bool ri_run_wants_lang(int argc, char **argv);
/* The whole command; returns ri's exit status. */
int ri_run_lang(int argc, char **argv);

#endif
