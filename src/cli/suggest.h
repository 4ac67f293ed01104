/* Suggestions for mistyped options (suggest.c). */
#ifndef RI_CLI_SUGGEST_H
#define RI_CLI_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The `--option` of HELP nearest to GIVEN (up to its '='), when one is near enough to be
 * a typo; written to OUT. */
bool ri_suggest_option(const char *help, const char *given, char *out, size_t cap);

/* The word of WORDS nearest to GIVEN when one is near enough to be a typo, else NULL. */
const char *ri_suggest_word(const char *given, const char *const *words, size_t n);

/* Reports GIVEN as an unknown option of CMD, suggesting the nearest option USAGE's text
 * names; returns the usage exit status. */
int ri_unknown_option(const char *cmd, const char *given, void (*usage)(FILE *f));

#endif
