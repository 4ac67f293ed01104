/*
 * The MicroPython driver over @micropython/micropython-webassembly-pyscript's build
 * (docs/LANGUAGES.md), driven as its glue's runPython does: mp_js_init(pystack, heap),
 * proxy_c_init(), then per run the code copied into memory from malloc and
 * mp_js_do_exec(code, len, out), whose 12-byte `out` says what came back: kind -1 is an
 * uncaught exception, with the text "<type>\x04<traceback>" at a malloc'd address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

#define PYSTACK 2048          /* the glue's defaults */
#define KIND_EXCEPTION (-1)

static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The interpreter is initialised once (state[0]: the 12-byte result record, allocated then and
 * so at the same address in every fork). A run executes a small program that holds the
 * user's code as a bytes literal, runs it as module __main__ under the name main.py, prints
 * an uncaught exception as `python` does (without the runner's own frames), and ends by
 * raising SystemExit with the exit code when it is not 0; finish turns that into the
 * process's end. Nothing is freed: every run starts from the initialised image again. */

#define PY_HEAP_BYTES (4u << 20) /* the glue gives 1 MiB; a server sandbox has 16 MiB by default */

static bool py_recognise(const ri_module *m, char *why, size_t cap) {
    static const char *const needed[] = {"mp_js_init", "mp_js_do_exec", "proxy_c_init", "malloc",
                                         "emscripten_stack_init", "__wasm_call_ctors"};
    return lang_has_exports(m, needed, sizeof needed / sizeof needed[0], "MicroPython's web build", why, cap);
}

static bool py_initialise(ri_sandbox *sb, int64_t state[LANG_STATE_WORDS], ri_sandbox_error *err) {
    ri_val init[2] = {ri_val_i32(PYSTACK), ri_val_i32((int32_t)PY_HEAP_BYTES)};
    ri_val twelve = ri_val_i32(12);
    int64_t out = 0;
    if (!lang_init_runtime(sb, err) || !lang_call(sb, "mp_js_init", init, 2, NULL, err) ||
        !lang_call(sb, "proxy_c_init", NULL, 0, NULL, err) || !lang_call(sb, "malloc", &twelve, 1, &out, err))
        return false;
    if (out == 0) return lang_fail(err, "MicroPython's malloc returned NULL");
    state[0] = out;
    return true;
}

static const char py_head[] =
    "import sys\n"
    "def __ri_main(src):\n"
    "    try:\n"
    "        exec(compile(src.decode(), 'main.py', 'exec'), {'__name__': '__main__'})\n"
    "    except SystemExit as e:\n"
    "        c = e.args[0] if e.args else 0\n"
    "        if c is None:\n"
    "            return 0\n"
    "        if isinstance(c, int):\n"
    "            return c\n"
    "        print(c, file=sys.stderr)\n"
    "        return 1\n"
    "    except BaseException as e:\n"
    "        import io\n"
    "        text = io.StringIO()\n"
    "        sys.print_exception(e, text)\n"
    "        lines = text.getvalue().split('\\n')\n"
    "        sys.stderr.write('\\n'.join(l for l in lines if '\"<stdin>\"' not in l))\n"
    "        return 1\n"
    "    return 0\n"
    "__ri_code = __ri_main(b'";
static const char py_tail[] =
    "')\n"
    "if __ri_code:\n"
    "    raise SystemExit(__ri_code)\n";

static ri_sandbox_result py_run(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], const char *code, size_t len) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    size_t head = sizeof py_head - 1, tail = sizeof py_tail - 1;
    if (len > (INT32_MAX - head - tail) / 4) {
        lang_fail(&r.error, "the program is too large");
        return r;
    }
    char *program = malloc(head + 4 * len + tail + 1);
    if (!program) {
        lang_fail(&r.error, "out of memory for the program");
        return r;
    }
    size_t n = 0;
    memcpy(program, py_head, head), n += head;
    for (size_t i = 0; i < len; i++) { /* a bytes literal: printable ASCII as it is, the rest \xNN */
        unsigned char c = (unsigned char)code[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') program[n++] = (char)c;
        else n += (size_t)snprintf(program + n, 5, "\\x%02x", c);
    }
    memcpy(program + n, py_tail, tail), n += tail;
    program[n] = '\0';
    int64_t at = 0;
    ri_val size = ri_val_i32((int32_t)(n + 1));
    bool ok = lang_call(sb, "malloc", &size, 1, &at, &r.error) && at != 0 &&
              ri_sandbox_memory_write(sb, (uint64_t)at, program, n + 1, &r.error);
    free(program);
    if (!ok) {
        if (!r.error.message[0]) lang_fail(&r.error, "the program does not fit MicroPython's heap");
        return r;
    }
    ri_val exec[3] = {ri_val_i32((int32_t)at), ri_val_i32((int32_t)n), ri_val_i32((int32_t)state[0])};
    return ri_sandbox_wasi_call(sb, "mp_js_do_exec", exec, 3);
}

/* The completed exec: an exception in the record is the runner's SystemExit(code). */
static void py_finish(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], ri_sandbox_result *r) {
    if (!r->ok || r->exited) return;
    uint8_t out[12];
    ri_sandbox_error err;
    uint32_t code = 0;
    if (!ri_sandbox_memory_read(sb, (uint64_t)state[0], out, sizeof out, &err)) {
        r->ok = false;
        r->error = err;
        return;
    }
    if ((int32_t)le32(out) == KIND_EXCEPTION) {
        char text[256] = "";
        uint32_t n = le32(out + 4), at = le32(out + 8);
        uint32_t take = n < sizeof text - 1 ? n : (uint32_t)sizeof text - 1;
        /* "SystemExit\x04Traceback ...\nSystemExit: N\n": N is the last number */
        code = 1;
        if (ri_sandbox_memory_read(sb, at + (n - take), text, take, &err)) {
            text[take] = '\0';
            const char *last = strstr(text, "SystemExit: ");
            if (last) code = (uint32_t)strtoul(last + 12, NULL, 10);
            if (code == 0) code = 1;
        }
    }
    r->exited = true;
    r->exit_code = code;
    if (code != 0) {
        r->ok = false;
        memset(&r->error, 0, sizeof r->error);
        r->error.code = RI_SANDBOX_EXIT;
        snprintf(r->error.message, sizeof r->error.message, "The WASI process exited with code %u", code);
    }
}

const lang_ops lang_python = {RI_LANG_PYTHON, "python", true, py_recognise, py_initialise, py_run, py_finish, NULL};
