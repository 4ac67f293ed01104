/* Command-line scanning: options anywhere, strict numbers (see args.h). */
#include "cli/args.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

void ri_args_init(ri_args *a, int argc, char **argv) {
    a->argc = argc;
    a->argv = argv;
    a->next = argc > 0 ? 1 : 0;
    a->options_ended = false;
}

/* A leading '-' followed by a digit or '.' is a number, so PAYLOAD may be negative. */
static bool looks_like_option(const char *s) {
    if (s[0] != '-' || s[1] == '\0') return false;
    if (s[1] >= '0' && s[1] <= '9') return false;
    if (s[1] == '.') return false;
    return true;
}

ri_arg ri_args_next(ri_args *a) {
    ri_arg arg = {RI_ARG_END, NULL, "", NULL};
    while (a->next < a->argc) {
        const char *s = a->argv[a->next++];
        if (!a->options_ended && strcmp(s, "--") == 0) {
            a->options_ended = true;
            continue;
        }
        arg.text = s;
        if (a->options_ended || !looks_like_option(s)) {
            arg.kind = RI_ARG_POSITIONAL;
            return arg;
        }
        arg.kind = RI_ARG_OPTION;
        const char *eq = strchr(s, '=');
        size_t n = eq ? (size_t)(eq - s) : strlen(s);
        /* A name too long for the buffer matches no option, which is what it deserves. */
        if (n < sizeof arg.name) {
            memcpy(arg.name, s, n);
            arg.name[n] = '\0';
        }
        arg.value = eq ? eq + 1 : NULL;
        return arg;
    }
    return arg;
}

const char *ri_args_value(ri_args *a, const ri_arg *opt) {
    if (opt->value) return opt->value;
    if (a->next < a->argc) return a->argv[a->next++];
    return NULL;
}

bool ri_arg_is(const ri_arg *opt, const char *name) {
    return opt->kind == RI_ARG_OPTION && strcmp(opt->name, name) == 0;
}

/* Digits of s[0..len) into *out (<= max). */
static bool parse_digits(const char *s, size_t len, uint64_t max, uint64_t *out, const char **why) {
    if (len == 0) {
        *why = "no digits";
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            *why = "not a decimal number";
            return false;
        }
        unsigned d = (unsigned)(s[i] - '0');
        if (d > max || v > (max - d) / 10) {
            *why = "out of range";
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool ri_parse_u64(const char *s, uint64_t max, uint64_t *out, const char **why) {
    return parse_digits(s, strlen(s), max, out, why);
}

bool ri_parse_i64(const char *s, int64_t *out, const char **why) {
    bool neg = s[0] == '-';
    uint64_t mag;
    /* The magnitude of INT64_MIN is INT64_MAX + 1. */
    uint64_t max = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    if (!parse_digits(s + neg, strlen(s + neg), max, &mag, why)) return false;
    if (neg)
        *out = mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag;
    else
        *out = (int64_t)mag;
    return true;
}

bool ri_parse_bytes(const char *s, uint64_t *out, const char **why) {
    static const struct { const char *suffix; unsigned shift; } units[] = {
        {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"K", 10}, {"M", 20}, {"G", 30},
    };
    size_t len = strlen(s);
    size_t digits = 0;
    while (digits < len && s[digits] >= '0' && s[digits] <= '9') digits++;
    unsigned shift = 0;
    if (digits < len) {
        const char *suffix = s + digits;
        bool known = false;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            if (strcmp(suffix, units[i].suffix) == 0) {
                shift = units[i].shift;
                known = true;
                break;
            }
        }
        if (!known) {
            *why = "not a byte count (digits, optionally followed by KiB, MiB or GiB)";
            return false;
        }
    }
    uint64_t v;
    if (!parse_digits(s, digits, UINT64_MAX >> shift, &v, why)) return false;
    *out = v << shift;
    return true;
}

int ri_arg_output_mode(const char *cmd, const ri_arg *opt, ri_output_mode *mode, int *rc) {
    if (!ri_arg_is(opt, "--json") && !ri_arg_is(opt, "--text")) return 0;
    if (opt->value) return *rc = ri_usage(cmd, "option %s takes no value", opt->name), -1;
    ri_output_mode m = ri_arg_is(opt, "--json") ? RI_OUTPUT_JSON : RI_OUTPUT_TEXT;
    if (*mode != RI_OUTPUT_AUTO && *mode != m) return *rc = ri_usage(cmd, "--json and --text exclude each other"), -1;
    *mode = m;
    return 1;
}

int ri_arg_timeout(const char *cmd, ri_args *a, const ri_arg *opt, uint32_t *ms) {
    const char *v = ri_args_value(a, opt), *why = NULL;
    uint64_t n;
    if (!v) return ri_usage(cmd, "option %s needs a value", opt->name);
    if (strcmp(v, "none") == 0) {
        *ms = RI_CLI_NO_TIMEOUT;
        return RI_EXIT_OK;
    }
    if (!ri_parse_u64(v, (uint64_t)RI_CLI_NO_TIMEOUT - 1, &n, &why))
        return ri_usage(cmd, "%s: '%s' is %s (expected milliseconds, or none)", opt->name, v, why);
    *ms = (uint32_t)n;
    return RI_EXIT_OK;
}
