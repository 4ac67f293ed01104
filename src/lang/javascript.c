/*
 * JavaScript: QuickJS-NG as the npm package quickjs-wasi builds it (a WASI reactor that
 * exports QuickJS's C API as qjs_* functions over heap-allocated JSValues; docs/LANGUAGES.md).
 *
 * Initialisation makes the runtime and context (qjs_init), one host function "ri" (served by
 * the profile, src/emscripten/quickjs_host.c: write, read stdin, exit, random, files) and runs ri's
 * JavaScript runtime with it: console, process, print, readline, require('fs') for stdin and the workspace's files, a
 * Math.random seeded from the sandbox's PRNG. Its completion value is the function `settle`
 * the driver calls later. A run evaluates the code as the global script main.js with top-level
 * await (qjs_eval, JS_EVAL_FLAG_ASYNC: the call that is the run's); then finish hands its
 * result to settle (a thrown error is printed, the status becomes 1), runs the pending
 * promise jobs one call each (each may pause: the run is then paused in that call), and ends
 * the process through settle() with the status.
 *
 * The guest block at state[0] (allocated at initialisation, so in every fork and snapshot):
 * phase u32 (0 before finish took the eval's result, 1 while promise jobs run, 2 in the
 * ending call), an argv slot u32, the gas of the run's earlier calls u64 (the eval's and
 * the jobs': the result that ends the run counts them all, as a single call would).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"
#include "util/le.h"

#define JS_EVAL_FLAG_ASYNC (1 << 7)
#define BLOCK_BYTES 16

static const char js_runtime[] =
    "(function (host) {\n"
    "'use strict';\n"
    "delete globalThis.__ri_host;\n"
    "const call = (...a) => { a.push(undefined); return host.apply(undefined, a); };\n"
    "const write = (fd, s) => {\n"
    "  for (let at = 0; at < s.length;) {\n"
    "    let end = Math.min(s.length, at + 8000);\n"
    "    const last = s.charCodeAt(end - 1);\n"
    "    if (end < s.length && last >= 0xd800 && last < 0xdc00) end--;\n"
    "    const n = end - at, a = [1, fd, n];\n"
    "    for (let i = at; i < end; i += 2) a.push(s.charCodeAt(i) | (i + 1 < end ? s.charCodeAt(i + 1) << 16 : 0));\n"
    "    call(...a);\n"
    "    at = end;\n"
    "  }\n"
    "};\n"
    "const quote = (s) => \"'\" + s.replace(/\\\\/g, '\\\\\\\\').replace(/'/g, \"\\\\'\").replace(/\\n/g, '\\\\n') + \"'\";\n"
    "const keyText = (k) => typeof k === 'symbol' ? '[' + k.toString() + ']' : /^[A-Za-z_$][\\w$]*$/.test(k) ? k : quote(k);\n"
    "const inspect = (v, depth, seen, top) => {\n"
    "  switch (typeof v) {\n"
    "  case 'string': return top ? v : quote(v);\n"
    "  case 'number': return Object.is(v, -0) ? '-0' : String(v);\n"
    "  case 'bigint': return v + 'n';\n"
    "  case 'symbol': return v.toString();\n"
    "  case 'undefined': case 'boolean': return String(v);\n"
    "  case 'function': {\n"
    "    const cls = /^class\\b/.test(Function.prototype.toString.call(v));\n"
    "    return '[' + (cls ? 'class ' + (v.name || '(anonymous)') : 'Function' + (v.name ? ': ' + v.name : ' (anonymous)')) + ']';\n"
    "  }\n"
    "  }\n"
    "  if (v === null) return 'null';\n"
    "  if (seen.includes(v)) return '[Circular]';\n"
    "  if (v instanceof Error) return errorText(v);\n"
    "  if (v instanceof Date) return isNaN(v) ? 'Invalid Date' : v.toISOString();\n"
    "  if (v instanceof RegExp) return String(v);\n"
    "  if (v instanceof Promise) return 'Promise { <pending or settled> }';\n"
    "  if (depth > 2) return Array.isArray(v) ? '[Array]' : '[Object]';\n"
    "  seen.push(v);\n"
    "  const sub = (x) => inspect(x, depth + 1, seen, false);\n"
    "  const wrap = (pre, open, items, close) => pre + (items.length ? open + ' ' + items.join(', ') + ' ' + close : open + close);\n"
    "  let out;\n"
    "  if (Array.isArray(v)) out = wrap('', '[', Array.from(v, sub), ']');\n"
    "  else if (v instanceof Map) out = wrap('Map(' + v.size + ') ', '{', Array.from(v, ([k, x]) => sub(k) + ' => ' + sub(x)), '}');\n"
    "  else if (v instanceof Set) out = wrap('Set(' + v.size + ') ', '{', Array.from(v, sub), '}');\n"
    "  else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) out = wrap(v.constructor.name + '(' + v.length + ') ', '[', Array.from(v, sub), ']');\n"
    "  else {\n"
    "    const proto = Object.getPrototypeOf(v);\n"
    "    const name = proto === null ? '[Object: null prototype] ' : proto.constructor && proto.constructor.name !== 'Object' ? proto.constructor.name + ' ' : '';\n"
    "    out = wrap(name, '{', Reflect.ownKeys(v).filter((k) => Object.prototype.propertyIsEnumerable.call(v, k)).map((k) => keyText(k) + ': ' + sub(v[k])), '}');\n"
    "  }\n"
    "  seen.pop();\n"
    "  return out;\n"
    "};\n"
    "const errorText = (e) => {\n"
    "  const head = String(e), stack = typeof e.stack === 'string' ? e.stack.replace(/\\n+$/, '') : '';\n"
    "  return !stack ? head : stack.startsWith(head) ? stack : head + '\\n' + stack;\n"
    "};\n"
    "const format = (args) => args.map((a) => inspect(a, 0, [], true)).join(' ') + '\\n';\n"
    "const out = (...a) => write(1, format(a)), err = (...a) => write(2, format(a));\n"
    "const counts = new Map(), timers = new Map();\n"
    "const hidden = (o, k, v) => Object.defineProperty(o, k, {value: v, writable: true, configurable: true, enumerable: false});\n"
    "hidden(globalThis, 'console', {log: out, info: out, debug: out, error: err, warn: err, trace: err,\n"
    "  dir: (v) => write(1, inspect(v, 0, [], false) + '\\n'),\n"
    "  assert: (ok, ...a) => { if (!ok) err('Assertion failed' + (a.length ? ':' : ''), ...a); },\n"
    "  count: (l = 'default') => { counts.set(l, (counts.get(l) || 0) + 1); out(l + ': ' + counts.get(l)); },\n"
    "  time: (l = 'default') => { timers.set(l, Date.now()); },\n"
    "  timeEnd: (l = 'default') => { out(l + ': ' + (Date.now() - (timers.get(l) || 0)) + 'ms'); timers.delete(l); }});\n"
    "hidden(globalThis, 'print', out);\n"
    "let seed = 0, seeded = false;\n"
    "const next32 = () => {\n"
    "  let t = (seed = (seed + 0x6d2b79f5) | 0);\n"
    "  t = Math.imul(t ^ (t >>> 15), t | 1);\n"
    "  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);\n"
    "  return (t ^ (t >>> 14)) >>> 0;\n"
    "};\n"
    "hidden(Math, 'random', function random() {\n"
    "  if (!seeded) { seed = call(4); seeded = true; }\n"
    "  return ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992;\n"
    "});\n"
    "let inBytes = [], inEnd = false;\n"
    "const fill = () => {\n"
    "  if (inEnd) return false;\n"
    "  let v = call(2);\n"
    "  while (v === -2) v = call(2); /* the process paused for input: it has come */\n"
    "  if (v < 0) { inEnd = true; return false; }\n"
    "  for (let i = 0; i < v >>> 24; i++) inBytes.push((v >>> (8 * i)) & 255);\n"
    "  return true;\n"
    "};\n"
    "const utf8 = (b) => {\n"
    "  let s = '';\n"
    "  for (let i = 0; i < b.length;) {\n"
    "    const c = b[i];\n"
    "    const n = c < 0x80 ? 1 : c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;\n"
    "    let cp = n === 1 ? c : n === 2 ? c & 31 : n === 3 ? c & 15 : c & 7, ok = n > 0 && i + n <= b.length;\n"
    "    for (let k = 1; ok && k < n; k++) { ok = (b[i + k] & 0xc0) === 0x80; cp = cp * 64 + (b[i + k] & 63); }\n"
    "    if (ok && (n === 2 && cp < 0x80 || n === 3 && (cp < 0x800 || cp >= 0xd800 && cp < 0xe000) || n === 4 && (cp < 0x10000 || cp > 0x10ffff))) ok = false;\n"
    "    s += ok ? String.fromCodePoint(cp) : '\\ufffd';\n"
    "    i += ok ? n : 1;\n"
    "  }\n"
    "  return s;\n"
    "};\n"
    "const readAll = () => { while (fill()); const b = inBytes; inBytes = []; return utf8(b); };\n"
    "hidden(globalThis, 'readline', () => {\n"
    "  for (let from = 0;;) {\n"
    "    const nl = inBytes.indexOf(10, from);\n"
    "    if (nl >= 0) { const line = inBytes.splice(0, nl + 1); line.pop(); return utf8(line); }\n"
    "    from = inBytes.length;\n"
    "    if (!fill()) break;\n"
    "  }\n"
    "  if (!inBytes.length) return null;\n"
    "  const line = inBytes; inBytes = []; return utf8(line);\n"
    "});\n"
    "const units = (s) => { const a = [s.length]; for (let i = 0; i < s.length; i += 2) a.push(s.charCodeAt(i) | (i + 1 < s.length ? s.charCodeAt(i + 1) << 16 : 0)); return a; };\n"
    "const ERRS = {2: ['EACCES', 'permission denied'], 20: ['EEXIST', 'file already exists'], 22: ['EFBIG', 'file too large'],\n"
    "  28: ['EINVAL', 'invalid argument'], 31: ['EISDIR', 'illegal operation on a directory'], 32: ['ELOOP', 'too many symbolic links encountered'],\n"
    "  37: ['ENAMETOOLONG', 'name too long'], 44: ['ENOENT', 'no such file or directory'], 48: ['ENOMEM', 'not enough memory'],\n"
    "  51: ['ENOSPC', 'no space left on device'], 54: ['ENOTDIR', 'not a directory'], 55: ['ENOTEMPTY', 'directory not empty'],\n"
    "  76: ['ENOTCAPABLE', 'operation not permitted']};\n"
    "const fsCall = (op, path, syscall, ...rest) => {\n"
    "  const p = String(path), v = call(5, op, ...units(p), ...rest);\n"
    "  if (v >= 0) return v;\n"
    "  const [code, text] = ERRS[-v] || ['E' + -v, 'error'];\n"
    "  const e = new Error(code + ': ' + text + ', ' + syscall + \" '\" + p + \"'\");\n"
    "  e.code = code; e.errno = v; e.syscall = syscall; e.path = p;\n"
    "  throw e;\n"
    "};\n"
    "const toBytes = (d) => {\n"
    "  if (typeof d !== 'string') return Array.from(d instanceof ArrayBuffer ? new Uint8Array(d) : d, (x) => x & 255);\n"
    "  const b = [];\n"
    "  for (const ch of d) {\n"
    "    let c = ch.codePointAt(0);\n"
    "    if (c >= 0xd800 && c < 0xe000) c = 0xfffd;\n"
    "    if (c < 0x80) b.push(c);\n"
    "    else if (c < 0x800) b.push(0xc0 | c >> 6, 0x80 | c & 63);\n"
    "    else if (c < 0x10000) b.push(0xe0 | c >> 12, 0x80 | c >> 6 & 63, 0x80 | c & 63);\n"
    "    else b.push(0xf0 | c >> 18, 0x80 | c >> 12 & 63, 0x80 | c >> 6 & 63, 0x80 | c & 63);\n"
    "  }\n"
    "  return b;\n"
    "};\n"
    "const putBytes = (p, bytes, append) => {\n"
    "  for (let at = 0, first = true; first || at < bytes.length; at += 20000, first = false) {\n"
    "    const chunk = bytes.slice(at, at + 20000), ints = [];\n"
    "    for (let i = 0; i < chunk.length; i += 4) ints.push(chunk[i] | (chunk[i + 1] | 0) << 8 | (chunk[i + 2] | 0) << 16 | (chunk[i + 3] | 0) << 24);\n"
    "    fsCall(first && !append ? 1 : 2, p, 'open', chunk.length, ...ints);\n"
    "  }\n"
    "};\n"
    "const takeBytes = (op, p, syscall) => {\n"
    "  const b = [];\n"
    "  for (;;) {\n"
    "    const v = fsCall(op, p, syscall, b.length), n = v >>> 24;\n"
    "    if (!n) return b;\n"
    "    for (let i = 0; i < n; i++) b.push((v >>> (8 * i)) & 255);\n"
    "  }\n"
    "};\n"
    "const encodingOf = (o) => typeof o === 'string' ? o : o && o.encoding;\n"
    "const isStd = (p, n) => p === n || p === ['/dev/stdin', '/dev/stdout', '/dev/stderr'][n];\n"
    "const fs = {\n"
    "  readFileSync: (p, o) => {\n"
    "    if (isStd(p, 0)) return readAll();\n"
    "    const b = takeBytes(3, p, 'open');\n"
    "    if (encodingOf(o)) return utf8(b);\n"
    "    const buf = Uint8Array.from(b);\n"
    "    hidden(buf, 'toString', () => utf8(b));\n"
    "    return buf;\n"
    "  },\n"
    "  writeFileSync: (p, d) => isStd(p, 1) || isStd(p, 2) ? write(isStd(p, 2) ? 2 : 1, String(d)) : putBytes(p, toBytes(d), false),\n"
    "  appendFileSync: (p, d) => putBytes(p, toBytes(d), true),\n"
    "  writeSync: (fd, s) => { write(fd === 2 ? 2 : 1, String(s)); },\n"
    "  existsSync: (p) => call(5, 4, ...units(String(p))) === 1,\n"
    "  readdirSync: (p) => utf8(takeBytes(8, p, 'scandir')).split('\\n').slice(0, -1),\n"
    "  mkdirSync: (p, o) => { fsCall(5, p, 'mkdir', o && o.recursive ? 1 : 0); },\n"
    "  unlinkSync: (p) => { fsCall(6, p, 'unlink'); },\n"
    "  rmdirSync: (p) => { fsCall(7, p, 'rmdir'); },\n"
    "  rmSync: (p, o) => {\n"
    "    if (o && o.force && !fs.existsSync(p)) return;\n"
    "    if (fsCall(9, p, 'rm') !== 3) return fs.unlinkSync(p);\n"
    "    if (o && o.recursive) for (const n of fs.readdirSync(p)) fs.rmSync(String(p).replace(/\\/+$/, '') + '/' + n, o);\n"
    "    fs.rmdirSync(p);\n"
    "  },\n"
    "  statSync: (p) => {\n"
    "    const t = fsCall(9, p, 'stat'), size = t === 4 ? fsCall(10, p, 'stat') : 0;\n"
    "    return {size, isFile: () => t === 4, isDirectory: () => t === 3, isSymbolicLink: () => t === 7};\n"
    "  },\n"
    "};\n"
    "hidden(globalThis, 'require', (name) => {\n"
    "  if (name === 'fs' || name === 'node:fs') return fs;\n"
    "  const e = new Error(\"Cannot find module '\" + name + \"' (ri's JavaScript has only 'fs')\");\n"
    "  e.code = 'MODULE_NOT_FOUND';\n"
    "  throw e;\n"
    "});\n"
    "let status = 0;\n"
    "const exit = (code) => { call(3, code | 0); };\n"
    "const stream = (fd) => ({write: (s) => { write(fd, String(s)); return true; }, isTTY: false});\n"
    "hidden(globalThis, 'process', {argv: ['ri', 'main.js'], env: {}, platform: 'wasi', exitCode: undefined,\n"
    "  exit: (code) => exit(code === undefined ? (process.exitCode === undefined ? status : process.exitCode) : code),\n"
    "  stdout: stream(1), stderr: stream(2), stdin: {fd: 0}});\n"
    "const report = (e) => { write(2, (e instanceof Error ? errorText(e) : 'Uncaught ' + inspect(e, 0, [], false)) + '\\n'); status = 1; };\n"
    "return function settle(x) {\n"
    "  if (arguments.length === 0) return exit(process.exitCode === undefined ? status : process.exitCode);\n"
    "  if (x instanceof Promise) x.then(undefined, report); else report(x);\n"
    "};\n"
    "})(globalThis.__ri_host);\n";

static bool js_recognise(const ri_module *m, char *why, size_t cap) {
    static const char *const needed[] = {"qjs_init", "qjs_eval", "qjs_new_host_function", "qjs_call",
                                         "qjs_execute_pending_job", "qjs_is_job_pending", "wasm_malloc", "_initialize"};
    return lang_has_exports(m, needed, sizeof needed / sizeof needed[0], "quickjs-wasi's QuickJS", why, cap);
}

/* A NUL-terminated copy of s in guest memory (wasm_malloc). */
static bool guest_string(ri_sandbox *sb, const char *s, size_t len, int64_t *at, ri_sandbox_error *err) {
    static const char nul = 0;
    if (len >= INT32_MAX) return lang_fail(err, "the program is too large");
    ri_val n = ri_val_i32((int32_t)(len + 1));
    if (!lang_call(sb, "wasm_malloc", &n, 1, at, err)) return false;
    if (*at == 0) return lang_fail(err, "the program does not fit QuickJS's heap");
    return ri_sandbox_memory_write(sb, (uint64_t)*at, s, len, err) &&
           ri_sandbox_memory_write(sb, (uint64_t)*at + len, &nul, 1, err);
}

static bool js_initialise(ri_sandbox *sb, int64_t state[LANG_STATE_WORDS], ri_sandbox_error *err) {
    int64_t rc = -1, name = 0, prop = 0, code = 0, file = 0, main_js = 0, fn = 0, global = 0, settle = 0, block = 0,
            failed = 1;
    if (!lang_call(sb, "qjs_init", NULL, 0, &rc, err)) return false;
    if (rc != 0) return lang_fail(err, "qjs_init failed");
    if (!guest_string(sb, "ri", 2, &name, err) || !guest_string(sb, "__ri_host", 9, &prop, err) ||
        !guest_string(sb, js_runtime, sizeof js_runtime - 1, &code, err) || !guest_string(sb, "<ri>", 4, &file, err) ||
        !guest_string(sb, "main.js", 7, &main_js, err))
        return false;
    ri_val nf[3] = {ri_val_i32((int32_t)name), ri_val_i32(2), ri_val_i32(0)};
    if (!lang_call(sb, "qjs_new_host_function", nf, 3, &fn, err) || !lang_call(sb, "qjs_get_global", NULL, 0, &global, err))
        return false;
    ri_val set[3] = {ri_val_i32((int32_t)global), ri_val_i32((int32_t)prop), ri_val_i32((int32_t)fn)};
    if (!lang_call(sb, "qjs_set_prop_string", set, 3, NULL, err)) return false;
    ri_val ev[4] = {ri_val_i32((int32_t)code), ri_val_i32((int32_t)(sizeof js_runtime - 1)), ri_val_i32((int32_t)file),
                    ri_val_i32(0)};
    ri_sandbox_result r = lang_through(sb, ri_sandbox_call(sb, "qjs_eval", ev, 4));
    bool ok = r.ok && r.nresults == 1;
    if (!ok) *err = r.error;
    settle = ok ? (uint32_t)r.results[0].of.i32 : 0;
    ri_sandbox_result_free(&r);
    if (!ok) return false;
    ri_val v = ri_val_i32((int32_t)settle);
    if (!lang_call(sb, "qjs_is_exception", &v, 1, &failed, err)) return false;
    if (failed || settle == 0) return lang_fail(err, "ri's JavaScript runtime does not start in this QuickJS");
    ri_val sixteen = ri_val_i32(BLOCK_BYTES);
    static const uint8_t zeros[BLOCK_BYTES];
    if (!lang_call(sb, "wasm_malloc", &sixteen, 1, &block, err)) return false;
    if (block == 0 || !ri_sandbox_memory_write(sb, (uint64_t)block, zeros, sizeof zeros, err))
        return block ? false : lang_fail(err, "QuickJS's malloc returned NULL");
    state[0] = block;
    state[1] = settle;
    state[2] = main_js;
    return true;
}

static ri_sandbox_result js_run(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], const char *code, size_t len) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    int64_t at = 0;
    if (!guest_string(sb, code, len, &at, &r.error)) return r;
    ri_val ev[4] = {ri_val_i32((int32_t)at), ri_val_i32((int32_t)len), ri_val_i32((int32_t)state[2]),
                    ri_val_i32(JS_EVAL_FLAG_ASYNC)};
    return ri_sandbox_wasi_call(sb, "qjs_eval", ev, 4);
}



/* settle(the eval's result): a short call made to completion. */
static bool call_settle(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], ri_sandbox_error *err) {
    ri_val args[4] = {ri_val_i32((int32_t)state[1]), ri_val_i32((int32_t)state[1]), ri_val_i32(1),
                      ri_val_i32((int32_t)state[0] + 4)};
    ri_sandbox_result r = lang_through(sb, ri_sandbox_call(sb, "qjs_call", args, 4));
    bool ok = r.ok;
    if (!ok) *err = r.error;
    ri_sandbox_result_free(&r);
    return ok;
}

static void replace(ri_sandbox_result *r, ri_sandbox_result next) {
    ri_sandbox_result_free(r);
    *r = next;
}

static void fail_with(ri_sandbox_result *r, const ri_sandbox_error *err) { replace(r, lang_failed(err)); }

/* After the eval, or after a promise job: the next job, or the process's end. */
static void js_finish(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], ri_sandbox_result *r) {
    if (!r->ok || r->exited) return;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    uint8_t block[BLOCK_BYTES];
    if (!ri_sandbox_memory_read(sb, (uint64_t)state[0], block, sizeof block, &err)) return fail_with(r, &err);
    uint64_t job_gas = (uint64_t)ri_le_get32(block + 8) | (uint64_t)ri_le_get32(block + 12) << 32;
    if (ri_le_get32(block) == 2) { /* the ending call (settle()) completed without exiting */
        r->gas_used += job_gas;
        return;
    }
    if (ri_le_get32(block) == 0) { /* the eval's result: a promise, or the exception of a syntax error */
        uint32_t value = r->nresults == 1 ? (uint32_t)r->results[0].of.i32 : 0;
        uint8_t head[8] = {1, 0, 0, 0, (uint8_t)value, (uint8_t)(value >> 8), (uint8_t)(value >> 16), (uint8_t)(value >> 24)};
        int64_t exc = 0;
        ri_val v = ri_val_i32((int32_t)value);
        if (!ri_sandbox_memory_write(sb, (uint64_t)state[0], head, sizeof head, &err) ||
            !lang_call(sb, "qjs_is_exception", &v, 1, &exc, &err))
            return fail_with(r, &err);
        if (exc) { /* the exception itself is the context's */
            int64_t e = 0;
            if (!lang_call(sb, "qjs_get_exception", NULL, 0, &e, &err)) return fail_with(r, &err);
            uint8_t at[4] = {(uint8_t)e, (uint8_t)(e >> 8), (uint8_t)(e >> 16), (uint8_t)(e >> 24)};
            if (!ri_sandbox_memory_write(sb, (uint64_t)state[0] + 4, at, 4, &err)) return fail_with(r, &err);
        }
        if (!call_settle(sb, state, &err)) return fail_with(r, &err);
        job_gas = r->gas_used;
    } else {
        job_gas += r->gas_used;
    }
    const ri_sandbox_config *config = ri_sandbox_get_config(sb);
    uint32_t pause_on = ri_sandbox_pause_on(sb);
    for (;;) {
        int64_t pending = 0;
        if (!lang_call(sb, "qjs_is_job_pending", NULL, 0, &pending, &err)) return fail_with(r, &err);
        if (!pending) break;
        /* the jobs share the run's gas limit, unless the embedder pauses on gas (it decides) */
        if (!(pause_on & RI_SUSPEND_ON_GAS) && config && job_gas > config->max_gas) {
            memset(&err, 0, sizeof err);
            err.code = RI_SANDBOX_GAS_EXHAUSTED;
            err.gas_used = job_gas;
            err.gas_limit = config->max_gas;
            snprintf(err.message, sizeof err.message, "Gas exhausted: the program and its promise jobs used %llu, limit %llu",
                     (unsigned long long)job_gas, (unsigned long long)config->max_gas);
            return fail_with(r, &err);
        }
        uint8_t g[8];
        for (int i = 0; i < 8; i++) g[i] = (uint8_t)(job_gas >> (8 * i));
        if (!ri_sandbox_memory_write(sb, (uint64_t)state[0] + 8, g, 8, &err)) return fail_with(r, &err);
        replace(r, ri_sandbox_wasi_call(sb, "qjs_execute_pending_job", NULL, 0));
        if (r->exited) r->gas_used += job_gas;
        if (!r->ok || r->exited) return; /* paused (finish comes again), failed, or exit() */
        job_gas += r->gas_used;
    }
    /* settle() ends the process with the status (it may pause too: finish comes again) */
    static const uint8_t ending[4] = {2, 0, 0, 0};
    if (!ri_sandbox_memory_write(sb, (uint64_t)state[0], ending, sizeof ending, &err)) return fail_with(r, &err);
    ri_val end[4] = {ri_val_i32((int32_t)state[1]), ri_val_i32((int32_t)state[1]), ri_val_i32(0), ri_val_i32(0)};
    replace(r, ri_sandbox_wasi_call(sb, "qjs_call", end, 4));
    if (r->ok || r->exited) r->gas_used += job_gas; /* the run's: the eval's, the jobs', this call's */
}

const lang_ops lang_javascript = {RI_LANG_JAVASCRIPT, "javascript", true, js_recognise, js_initialise, js_run, js_finish, js_runtime};
