/* "Did you mean": the option of a command's help nearest to a mistyped one. The help text
 * is the list of options (every `--name` it mentions), so no command keeps a second list. */
#include "cli/suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/output.h"

#define NAME_MAX_LEN 48

/* Levenshtein distance of a[0..na) and b[0..nb), both at most NAME_MAX_LEN bytes. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    size_t row[NAME_MAX_LEN + 1];
    for (size_t j = 0; j <= nb; j++) row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

static bool option_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

/* Whether NAME[0..n) is nearer to GIVEN[0..ng) than *best edits and near enough to be a
 * typo (at most 2 edits, or a sixth of the name more); then it is the new best. */
static bool nearer(const char *given, size_t ng, const char *name, size_t n, size_t *best) {
    if (n < 2 || n > NAME_MAX_LEN) return false;
    size_t d = edit_distance(given, ng, name, n);
    if (d == 0 || d > 2 + n / 6 || d >= *best) return false;
    *best = d;
    return true;
}

bool ri_suggest_option(const char *help, const char *given, char *out, size_t cap) {
    size_t ng = strcspn(given, "=");
    if (ng < 3 || ng > NAME_MAX_LEN || cap == 0) return false;
    size_t best = (size_t)-1;
    const char *p = help;
    while ((p = strstr(p, "--")) != NULL) {
        const char *name = p;
        p += 2;
        while (option_char(*p)) p++;
        if (name > help && option_char(name[-1])) continue;
        if (nearer(given, ng, name, (size_t)(p - name), &best)) snprintf(out, cap, "%.*s", (int)(p - name), name);
    }
    return best != (size_t)-1;
}

const char *ri_suggest_word(const char *given, const char *const *words, size_t n) {
    size_t ng = strlen(given), best = (size_t)-1;
    const char *found = NULL;
    if (ng > NAME_MAX_LEN) return NULL;
    for (size_t i = 0; i < n; i++)
        if (nearer(given, ng, words[i], strlen(words[i]), &best)) found = words[i];
    return found;
}

int ri_unknown_option(const char *cmd, const char *given, void (*usage)(FILE *f)) {
    char *help = NULL;
    size_t len = 0;
    char near[NAME_MAX_LEN + 1];
    FILE *f = usage ? open_memstream(&help, &len) : NULL;
    bool found = false;
    if (f) {
        usage(f);
        found = fclose(f) == 0 && help && ri_suggest_option(help, given, near, sizeof near);
    }
    free(help);
    if (found) return ri_usage(cmd, "unknown option '%s' (did you mean %s?)", given, near);
    return ri_usage(cmd, "unknown option '%s'", given);
}
