/* Ruby: CRuby built for WASI as a reactor with its standard library packed inside
 * (ruby.wasm's ruby+stdlib.wasm, docs/LANGUAGES.md). Its exports follow the component
 * model's canonical ABI of wit-bindgen: strings and lists as (address, length) in memory
 * the module allocates with cabi_realloc, a tuple result through a return area whose
 * address is the result.
 *
 * A run evaluates a small Ruby program that evaluates the user's code (as a string
 * literal: no file appears in the workspace) at the top level under the name main.rb,
 * prints an uncaught exception as `ruby` does, flushes, and ends the process with exit!
 * (WASI proc_exit): 0, the code of `exit n`, or 1 after an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

#define ALLOC "cabi_realloc"
#define INIT "ruby-init: func(args: list<string>) -> ()"
#define EVAL "rb-eval-string-protect: func(str: string) -> tuple<handle<rb-abi-value>, s32>"

static bool has_export(const ri_module *m, const char *name, uint32_t nparams, uint32_t nresults) {
    for (uint32_t i = 0; i < ri_module_export_count(m); i++) {
        ri_export_info ex = ri_module_export(m, i);
        if (ex.type.kind == RI_EXTERN_FUNC && strlen(name) == ex.name_len && memcmp(ex.name, name, ex.name_len) == 0)
            return ex.type.of.func.nparams == nparams && ex.type.of.func.nresults == nresults;
    }
    return false;
}

static bool recognise(const ri_module *m, char *why, size_t cap) {
    static const struct {
        const char *name;
        uint32_t nparams, nresults;
    } needed[] = {{ALLOC, 4, 1}, {INIT, 2, 0}, {EVAL, 2, 1}, {"_initialize", 0, 0}};
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
        if (!has_export(m, needed[i].name, needed[i].nparams, needed[i].nresults)) {
            snprintf(why, cap, "Ruby's ruby.wasm exports \"%s\"; this module does not (or not with its type)",
                     needed[i].name);
            return false;
        }
    return true;
}

/* What the first error of every run would otherwise load (error_highlight and the Prism
 * parser: about 750 million instructions), loaded once into the initialised image. */
static const char warm_up_code[] =
    "begin; raise ArgumentError, 'warm'; rescue => e; e.full_message(highlight: false); end\n"
    "begin; eval('def (', TOPLEVEL_BINDING, 'warm.rb'); rescue SyntaxError => e; e.full_message(highlight: false); end\n"
    "nil\n";

static bool warm_up(ri_sandbox *sb, ri_sandbox_error *err) {
    uint32_t at = lang_guest_bytes(sb, ALLOC, warm_up_code, sizeof warm_up_code - 1, 1, err);
    if (!at) return false;
    ri_val args[2] = {ri_val_i32((int32_t)at), ri_val_i32((int32_t)(sizeof warm_up_code - 1))};
    return lang_call(sb, EVAL, args, 2, NULL, err);
}

/* ruby-init(args): the arguments as ruby.wasm's own host passes them (C strings with their
 * NUL), the script "-e_=0" standing in for a program. */
static bool initialise(ri_sandbox *sb, int64_t state[LANG_STATE_WORDS], ri_sandbox_error *err) {
    (void)state;
    static const char *const args[] = {"ruby.wasm", "-EUTF-8", "-e_=0"};
    enum { NARGS = sizeof args / sizeof args[0] };
    uint32_t list[2 * NARGS];
    for (size_t i = 0; i < NARGS; i++) {
        size_t n = strlen(args[i]) + 1;
        list[2 * i] = lang_guest_bytes(sb, ALLOC, args[i], n, 1, err);
        list[2 * i + 1] = (uint32_t)n;
        if (!list[2 * i]) return false;
    }
    uint32_t at = lang_guest_bytes(sb, ALLOC, list, sizeof list, 4, err); /* (little-endian, as the guest's) */
    if (!at) return false;
    ri_val call_args[2] = {ri_val_i32((int32_t)at), ri_val_i32(NARGS)};
    return lang_call(sb, INIT, call_args, 2, NULL, err) && warm_up(sb, err);
}

/* A Ruby double-quoted literal of any bytes: \\ \" \# escaped, other bytes below 0x20 and
 * 0x7f as \xNN; bytes of 0x80 and above as they are (the literal is UTF-8 text). */
static char *ruby_literal(const char *code, size_t len, size_t *out_len) {
    size_t cap = 2 + 4 * len + 1;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t n = 0;
    s[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)code[i];
        if (c == '\\' || c == '"' || c == '#') {
            s[n++] = '\\';
            s[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(s + n, cap - n, "\\x%02x", c);
        } else {
            s[n++] = (char)c;
        }
    }
    s[n++] = '"';
    s[n] = '\0';
    *out_len = n;
    return s;
}

static const char wrapper_head[] =
    "$stdout.sync = true\n"
    "$stderr.sync = true\n"
    "begin\n"
    "  eval(";
static const char wrapper_tail[] =
    ".force_encoding(Encoding::UTF_8), TOPLEVEL_BINDING, \"main.rb\", 1)\n"
    "rescue SystemExit => e\n"
    "  $stdout.flush; $stderr.flush\n"
    "  exit!(e.status)\n"
    "rescue SyntaxError => e\n"
    "  $stderr.write(\"main.rb: #{e.detailed_message(highlight: false)}\\n\")\n"
    "  $stdout.flush; $stderr.flush\n"
    "  exit!(1)\n"
    "rescue Exception => e\n"
    "  bt = e.backtrace\n"
    "  keep = bt && bt.index { |line| !line.start_with?('main.rb:') }\n"
    "  e.set_backtrace(bt[0...keep]) if keep\n"
    "  $stderr.write(e.full_message(highlight: false))\n"
    "  $stdout.flush; $stderr.flush\n"
    "  exit!(1)\n"
    "end\n"
    "$stdout.flush; $stderr.flush\n"
    "exit!(0)\n";

static ri_sandbox_result run(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], const char *code, size_t len) {
    (void)state;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    size_t lit_len;
    char *lit = ruby_literal(code, len, &lit_len);
    size_t head = sizeof wrapper_head - 1, tail = sizeof wrapper_tail - 1;
    char *program = lit ? malloc(head + lit_len + tail) : NULL;
    if (!program) {
        free(lit);
        snprintf(err.message, sizeof err.message, "out of memory for the code (%zu bytes)", len);
        err.code = RI_SANDBOX_MEMORY_EXCEEDED;
        return lang_failed(&err);
    }
    memcpy(program, wrapper_head, head);
    memcpy(program + head, lit, lit_len);
    memcpy(program + head + lit_len, wrapper_tail, tail);
    size_t n = head + lit_len + tail;
    free(lit);
    uint32_t at = lang_guest_bytes(sb, ALLOC, program, n, 1, &err);
    free(program);
    if (!at) return lang_failed(&err);
    ri_val args[2] = {ri_val_i32((int32_t)at), ri_val_i32((int32_t)n)};
    /* The wrapper always ends the process with exit!; a return means the evaluation itself
     * failed (its state in the return area), which the wrapper's rescue should prevent. */
    ri_sandbox_result r = ri_sandbox_wasi_call(sb, EVAL, args, 2);
    if (r.ok && !r.exited) {
        ri_sandbox_result_free(&r);
        snprintf(err.message, sizeof err.message, "%s", "the Ruby program ended without an exit status");
        err.code = RI_SANDBOX_WASM_TRAP;
        snprintf(err.trap_kind, sizeof err.trap_kind, "%s", "runtime_error");
        return lang_failed(&err);
    }
    return r;
}

const lang_ops lang_ruby = {RI_LANG_RUBY, "ruby", false, recognise, initialise, run, NULL, NULL};
