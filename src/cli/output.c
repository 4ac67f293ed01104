/* Output mode, diagnostics and terminal-safe text (see output.h). */
#include "cli/output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/utf8.h"

/* Every command's --help ends with this (cli.h). */
const char ri_exit_codes_help[] =
    "exit status:\n"
    "  0  success\n"
    "  1  the execution failed: a trap, gas exhausted, timeout, memory exceeded, a host\n"
    "     function error, a snapshot the sandbox refused, a failed determinism check\n"
    "  2  usage error: bad options, missing or extra arguments, a PAYLOAD that is not\n"
    "     JSON, a configuration the sandbox cannot honour\n"
    "  3  input error: a module or snapshot that cannot be read or is invalid, an output\n"
    "     file that cannot be written\n"
    "  4  internal error (out of memory, a library failure)\n";

bool ri_output_is_json(ri_output_mode mode) {
    if (mode == RI_OUTPUT_JSON) return true;
    if (mode == RI_OUTPUT_TEXT) return false;
    return !isatty(STDOUT_FILENO);
}

/* Writes s[0..n) escaping what a terminal would interpret. */
static void put_escaped(FILE *f, const char *s, size_t n, bool keep_newlines) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = ri_utf8_decode(p + i, n - i, &cp);
        bool plain = len > 0 && cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp <= 0x9F);
        if (keep_newlines && len == 1 && (cp == '\n' || cp == '\t')) plain = true;
        if (plain) {
            fwrite(p + i, 1, len, f);
            i += len;
        } else {
            /* An invalid byte or a control character: show it, one byte at a time. */
            size_t bytes = len > 0 ? len : 1;
            for (size_t k = 0; k < bytes; k++) fprintf(f, "\\x%02X", p[i + k]);
            i += bytes;
        }
    }
}

void ri_put_safe(FILE *f, const char *s, size_t n) { put_escaped(f, s, n, false); }

static void vprint_safe(FILE *f, const char *fmt, va_list ap) {
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    if (n < 0) {
        /* Out of memory for a message: say something rather than nothing. */
        fputs("(out of memory formatting a message)\n", f);
        return;
    }
    put_escaped(f, text, (size_t)n, true);
    free(text);
}

void ri_printf_safe(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint_safe(f, fmt, ap);
    va_end(ap);
}

int ri_fail(int code, const char *cmd, const char *fmt, ...) {
    fflush(stdout); /* keep stdout and stderr in order on a shared terminal */
    fprintf(stderr, "%s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vprint_safe(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int ri_usage(const char *cmd, const char *fmt, ...) {
    fflush(stdout);
    fprintf(stderr, "%s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vprint_safe(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", cmd);
    return RI_EXIT_USAGE;
}

int ri_finish_output(const char *cmd, int code) {
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        fprintf(stderr, "%s: error writing standard output: %s\n", cmd,
                e ? strerror(e) : "write error");
        return code == RI_EXIT_OK ? RI_EXIT_INPUT : code;
    }
    return code;
}
