// node sandbox_ops.mjs [--scale F] [--ops LIST] MODULE.wasm
//
// Node's side of the sandbox-operations benchmark (issue 4): the operations ri-bench-sandbox
// (sandbox_ops.c) times on the ri sandbox library, done here the way the original TypeScript
// ri-sandbox does them on Node's WebAssembly (../../shared/reference/ri-sandbox-original.md).
// A small, faithful re-implementation of just what each operation does, written for this
// benchmark: create = a WebAssembly.Memory of one page (maximum: the memory limit in pages) and
// a Mulberry32 PRNG; load = magic check, WebAssembly.compile, import validation, instantiate
// with env.memory, env.__get_time, env.__get_random and the host functions, each import call
// costing 1 gas (checked before the call) with the timeout checked after it; execute = the
// guards, the direct calling convention, metrics and the memory check; snapshot = the WSNP v1
// bytes (memory copy and state JSON); restore = every check, then the copy back.
//
// Same operations, iteration counts, warm-up and output lines as sandbox_ops.c (see there):
//   sandbox-bench runtime=node module=PATH scale=F timer_overhead_us=X
//   sandbox-check add=42 fib20=6765 fib20_gas=21 snapshot_1p_bytes=.. snapshot_1p_fnv=.. ...
//   sandbox-op op=NAME runs=N warmup=W median_us=.. p99_us=.. min_us=.. mean_us=..
// The call_* operations are ri's typed-argument calls; Node has only execute and skips them.
import { readFileSync } from 'node:fs';

const EVENT_TIMESTAMP = 1700000000000;
const PAGE = 65536;

// The same table as OPS in sandbox_ops.c.
const OPS = [
  ['create', 20000], ['load', 2000], ['execute_add', 50000], ['execute_fib20', 20000],
  ['call_add', 50000], ['call_fib20', 20000], ['snapshot_1p', 10000], ['restore_1p', 10000],
  ['snapshot_256p', 200], ['restore_256p', 200],
];
const RI_ONLY = new Set(['call_add', 'call_fib20']);

// ---- the sandbox, as the original does it ------------------------------------------------

class SandboxError extends Error {
  constructor(code, fields, message) {
    super(message ?? code);
    this.code = code;
    this.fields = fields;
  }
}
class GasExhaustedSignal extends Error {}
class TimeoutSignal extends Error {}

const BLOCKED = new Set(['wasi_snapshot_preview1', 'wasi_unstable', 'wasi']);
const SYSTEM_IMPORTS = new Set(['memory', '__get_time', '__get_random']);
const MAGIC = [0x00, 0x61, 0x73, 0x6d];
const WSNP_MAGIC = [0x57, 0x53, 0x4e, 0x50];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function createWasmSandbox() {
  let counter = 0;
  const states = new Map();

  function stateOf(instance) {
    const s = states.get(instance.id);
    if (!s) throw new Error(`Unknown sandbox instance: ${instance.id}`);
    return s;
  }

  function metricsOf(s) {
    return Object.freeze({
      memoryUsedBytes: s.memory ? s.memory.buffer.byteLength : 0,
      memoryLimitBytes: s.config.maxMemoryBytes,
      gasUsed: s.gasUsed,
      gasLimit: s.config.maxGas,
      executionMs: s.executionMs,
      executionLimitMs: s.config.maxExecutionMs,
    });
  }

  function mulberry32(seed) {
    return {
      state: seed | 0,
      next() {
        this.state = (this.state + 0x6d2b79f5) | 0;
        let t = this.state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return (t ^ (t >>> 14)) >>> 0;
      },
    };
  }

  function create(config) {
    if (config.eventTimestamp === undefined) throw new Error('eventTimestamp is required');
    const cfg = Object.freeze({
      maxMemoryBytes: config.maxMemoryBytes ?? 16_777_216,
      maxGas: config.maxGas ?? 1_000_000,
      maxExecutionMs: config.maxExecutionMs ?? 50,
      hostFunctions: config.hostFunctions ?? {},
      deterministicSeed: config.deterministicSeed ?? 0,
      eventTimestamp: config.eventTimestamp,
    });
    const id = `sandbox-${counter++}`;
    const memory = new WebAssembly.Memory({ initial: 1, maximum: Math.ceil(cfg.maxMemoryBytes / PAGE) });
    const s = {
      id, config: cfg, status: 'created', memory, prng: mulberry32(cfg.deterministicSeed),
      module: null, instance: null, gasUsed: 0, executionMs: 0, startedAt: 0,
    };
    states.set(id, s);
    return Object.freeze({ id, config: cfg, get status() { return s.status; }, get metrics() { return metricsOf(s); } });
  }

  // Every import call: gas + 1 (checked first, so a refused call has no effect), the timeout,
  // then the work.
  function metered(s, fn) {
    return (...args) => {
      s.gasUsed += 1;
      if (s.gasUsed > s.config.maxGas) throw new GasExhaustedSignal();
      if (performance.now() - s.startedAt > s.config.maxExecutionMs) throw new TimeoutSignal();
      return fn(...args);
    };
  }

  async function load(instance, bytes) {
    const s = stateOf(instance);
    if (s.status === 'destroyed') throw new Error(`Cannot load module into destroyed instance: ${s.id}`);
    if (bytes.length === 0) throw new Error('Failed to load WASM module: Empty WASM bytes — module must not be empty');
    if (bytes.length < 8) throw new Error(`Failed to load WASM module: WASM module too small: ${bytes.length} bytes (minimum 8)`);
    for (let i = 0; i < 4; i++) {
      if (bytes[i] !== MAGIC[i]) throw new Error('Failed to load WASM module: Invalid WASM magic bytes — expected \\0asm header');
    }
    let module;
    try {
      module = await WebAssembly.compile(bytes);
    } catch (e) {
      throw new Error(`Failed to load WASM module: WASM compilation failed: ${e.message}`);
    }
    const hosts = s.config.hostFunctions;
    for (const imp of WebAssembly.Module.imports(module)) {
      if (BLOCKED.has(imp.module)) {
        throw new Error(`Import validation failed: WASM module imports from blocked namespace '${imp.module}' (import: '${imp.name}'). WASI and system interfaces are not allowed in deterministic sandboxes.`);
      }
      if (imp.module !== 'env') {
        throw new Error(`Import validation failed: WASM module imports from undeclared namespace '${imp.module}' (import: '${imp.name}'). Only the 'env' namespace is supported.`);
      }
      if (!SYSTEM_IMPORTS.has(imp.name) && !Object.hasOwn(hosts, imp.name)) {
        throw new Error(`Import validation failed: WASM module imports undeclared function 'env.${imp.name}'. Only declared host functions and system imports (memory, __get_time, __get_random) are allowed.`);
      }
    }
    const env = {
      memory: s.memory,
      __get_time: metered(s, () => s.config.eventTimestamp | 0),
      __get_random: metered(s, () => s.prng.next()),
    };
    for (const [name, h] of Object.entries(hosts)) env[name] = metered(s, h.handler);
    try {
      s.instance = await WebAssembly.instantiate(module, { env });
    } catch (e) {
      throw new Error(`Failed to instantiate WASM module: ${e.message}`);
    }
    s.module = module;
    s.status = 'loaded';
  }

  function fail(code, fields, message) {
    return { ok: false, error: { code, ...fields, message } };
  }

  function execute(instance, action, payload) {
    const s = stateOf(instance);
    if (s.status === 'destroyed') return fail('INSTANCE_DESTROYED', { instanceId: s.id });
    if (s.status !== 'loaded') {
      return fail('WASM_TRAP', { trapKind: 'invalid_state' }, `Cannot execute: instance status is '${s.status}'`);
    }
    if (!s.instance) return fail('WASM_TRAP', { trapKind: 'no_instance' }, 'No WASM instance available — load a module first');
    const fn = s.instance.exports[action];
    if (typeof fn !== 'function') {
      return fail('WASM_TRAP', { trapKind: 'missing_export' }, `WASM module does not export a function named '${action}'`);
    }
    const direct = payload === null || payload === undefined || typeof payload === 'number' ||
      (Array.isArray(payload) && payload.every((v) => typeof v === 'number'));
    if (!direct) throw new Error('the JSON calling convention is not part of this benchmark');
    const args = payload === null || payload === undefined ? [] : Array.isArray(payload) ? payload : [payload];
    const previous = s.status;
    s.status = 'running';
    s.gasUsed = 0;
    s.startedAt = performance.now();
    try {
      const value = fn(...args);
      s.executionMs = performance.now() - s.startedAt;
      const memoryUsed = s.memory.buffer.byteLength;
      if (memoryUsed > s.config.maxMemoryBytes) {
        return fail('MEMORY_EXCEEDED', { memoryUsed, memoryLimit: s.config.maxMemoryBytes });
      }
      return { ok: true, value, metrics: metricsOf(s), gasUsed: s.gasUsed, durationMs: s.executionMs };
    } catch (e) {
      s.executionMs = performance.now() - s.startedAt;
      if (e instanceof GasExhaustedSignal) {
        return fail('GAS_EXHAUSTED', { gasUsed: s.gasUsed, gasLimit: s.config.maxGas });
      }
      if (e instanceof TimeoutSignal) {
        return fail('TIMEOUT', { elapsedMs: s.executionMs, limitMs: s.config.maxExecutionMs });
      }
      return fail('WASM_TRAP', { trapKind: 'runtime_error' }, e.message);
    } finally {
      if (s.status === 'running') s.status = previous;
    }
  }

  function destroy(instance) {
    const s = stateOf(instance);
    if (s.status === 'destroyed') return;
    s.status = 'destroyed';
    s.instance = null;
    s.module = null;
    s.memory = null;
  }

  function snapshot(instance) {
    const s = stateOf(instance);
    const snapErr = (m) => new SandboxError('SNAPSHOT_ERROR', {}, m);
    if (s.status === 'destroyed') throw snapErr('Cannot snapshot a destroyed instance');
    if (s.status === 'created') throw snapErr('Cannot snapshot an instance that has not been loaded');
    if (s.status === 'running') throw snapErr('Cannot snapshot a running instance — suspend first');
    if (!s.memory) throw snapErr('No WASM memory available for snapshot');
    const mem = new Uint8Array(s.memory.buffer);
    const state = encoder.encode(JSON.stringify({
      prngState: { current: s.prng.state }, timestamp: s.config.eventTimestamp, gasUsed: s.gasUsed,
    }));
    const out = new Uint8Array(13 + mem.length + state.length);
    const view = new DataView(out.buffer);
    out.set(WSNP_MAGIC, 0);
    out[4] = 1;
    view.setUint32(5, mem.length, true);
    out.set(mem, 9);
    view.setUint32(9 + mem.length, state.length, true);
    out.set(state, 13 + mem.length);
    return out;
  }

  function restore(instance, snap) {
    const s = stateOf(instance);
    const snapErr = (m) => new SandboxError('SNAPSHOT_ERROR', {}, m);
    if (s.status === 'destroyed') throw snapErr('Cannot restore into a destroyed instance');
    if (s.status === 'created') throw snapErr('Cannot restore into an instance that has not been loaded');
    if (s.status === 'running') throw snapErr('Cannot restore into a running instance — suspend first');
    if (snap.length < 5) throw snapErr('Snapshot too small — missing header');
    for (let i = 0; i < 4; i++) if (snap[i] !== WSNP_MAGIC[i]) throw snapErr('Invalid snapshot — bad magic bytes');
    if (snap[4] !== 1) throw snapErr(`Unsupported snapshot version: ${snap[4]} (expected 1)`);
    const view = new DataView(snap.buffer, snap.byteOffset, snap.byteLength);
    if (snap.length < 9) throw snapErr('Snapshot truncated — missing memory length');
    const memLen = view.getUint32(5, true);
    if (snap.length < 9 + memLen) throw snapErr('Snapshot truncated — memory section incomplete');
    if (snap.length < 13 + memLen) throw snapErr('Snapshot truncated — missing state length');
    const stateLen = view.getUint32(9 + memLen, true);
    if (snap.length < 13 + memLen + stateLen) throw snapErr('Snapshot truncated — state section incomplete');
    let state;
    try {
      state = JSON.parse(decoder.decode(snap.subarray(13 + memLen, 13 + memLen + stateLen)));
    } catch {
      throw snapErr('Invalid snapshot — corrupted state JSON');
    }
    if (typeof state !== 'object' || state === null || typeof state.prngState !== 'object' ||
        state.prngState === null || typeof state.prngState.current !== 'number' ||
        typeof state.timestamp !== 'number' || typeof state.gasUsed !== 'number') {
      throw snapErr('Invalid snapshot — corrupted state JSON');
    }
    if (!s.memory) throw snapErr('No WASM memory available for restore');
    const current = new Uint8Array(s.memory.buffer);
    if (memLen !== current.length) {
      throw snapErr(`Snapshot memory size (${memLen}) does not match instance memory (${current.length})`);
    }
    current.set(snap.subarray(9, 9 + memLen));
    s.prng.state = state.prngState.current | 0;
    s.gasUsed = state.gasUsed;
    s.status = 'loaded';
  }

  // The benchmark's counterpart of ri_sandbox_free: forget a destroyed instance.
  function release(instance) {
    states.delete(instance.id);
  }

  return { create, load, execute, destroy, snapshot, restore, release };
}

// ---- the benchmark ----------------------------------------------------------------------------

function die(msg) {
  process.stderr.write(`sandbox_ops.mjs: ${msg}\n`);
  process.exit(1);
}

function fnv1a(bytes) {
  let h = 2166136261;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

const now = () => process.hrtime.bigint();

function report(op, ns, warmup) {
  const a = Float64Array.from(ns).sort();
  const n = a.length;
  const median = n % 2 ? a[n >> 1] : (a[n / 2 - 1] + a[n / 2]) / 2;
  const rank = Math.min(n, Math.max(1, Math.floor((99 * n + 99) / 100)));
  const mean = a.reduce((x, y) => x + y, 0) / n;
  const us = (v) => (v / 1e3).toFixed(3);
  console.log(`sandbox-op op=${op} runs=${n} warmup=${warmup} median_us=${us(median)} ` +
    `p99_us=${us(a[rank - 1])} min_us=${us(a[0])} mean_us=${us(mean)}`);
}

function timerOverheadUs() {
  const N = 100000;
  let best = Infinity;
  for (let rep = 0; rep < 5; rep++) {
    const t0 = now();
    let t1 = t0;
    for (let i = 0; i < N; i++) t1 = now();
    best = Math.min(best, Number(t1 - t0));
  }
  return best / N / 1e3;
}

// A copy of the module with a trailing custom section naming the iteration, so that every load
// compiles for real: V8 shares compiled modules with equal bytes.
function uniqueBytes(bytes, i) {
  const name = encoder.encode(`bench${i}`);
  const out = new Uint8Array(bytes.length + 3 + name.length);
  out.set(bytes, 0);
  out.set([0, name.length + 1, name.length], bytes.length);
  out.set(name, bytes.length + 3);
  return out;
}

async function main() {
  const argv = process.argv.slice(2);
  let scale = 1;
  let only = null;
  let path = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--scale' && i + 1 < argv.length) scale = Number(argv[++i]);
    else if (argv[i] === '--ops' && i + 1 < argv.length) only = new Set(argv[++i].split(',').filter(Boolean));
    else if (argv[i].startsWith('-')) die(`unknown option ${argv[i]}`);
    else path = argv[i];
  }
  if (!path) die('usage: node sandbox_ops.mjs [--scale F] [--ops LIST] MODULE.wasm');
  if (!(scale > 0) || scale > 1000) die('--scale wants a number in (0, 1000]');
  for (const op of only ?? []) if (!OPS.some(([name]) => name === op)) die(`unknown operation '${op}'`);
  const wasm = new Uint8Array(readFileSync(path));

  let ticks = 0;
  const config = {
    eventTimestamp: EVENT_TIMESTAMP,
    hostFunctions: { tick: { name: 'tick', params: ['i32'], results: [], handler: () => { ticks++; } } },
  };
  const sb = createWasmSandbox();
  const loaded = async () => {
    const inst = sb.create(config);
    await sb.load(inst, wasm);
    return inst;
  };
  const runI32 = (inst, action, payload) => {
    const r = sb.execute(inst, action, payload);
    if (!r.ok) die(`${action}: ${r.error.code}: ${r.error.message ?? ''}`);
    return r;
  };
  const filled = async (pages) => {
    const inst = await loaded();
    if (pages > 1 && runI32(inst, 'grow', [pages - 1]).value !== 1) die('memory.grow failed');
    runI32(inst, 'fill', null);
    if (inst.metrics.memoryUsedBytes !== pages * PAGE) die('memory is not the expected size');
    return inst;
  };
  const prepare = (inst, what) => {
    const snap = sb.snapshot(inst);
    runI32(inst, 'fill', null);
    const changed = sb.snapshot(inst);
    if (fnv1a(changed) === fnv1a(snap)) die(`${what}: fill() did not change the state`);
    sb.restore(inst, snap);
    if (fnv1a(sb.snapshot(inst)) !== fnv1a(snap)) die(`${what}: the snapshot after restore differs`);
    return { inst, snap };
  };

  console.log(`sandbox-bench runtime=node module=${path} scale=${scale} timer_overhead_us=${timerOverheadUs().toFixed(3)}`);
  const exec = await loaded();
  const add = runI32(exec, 'add', [17, 25]).value;
  ticks = 0;
  const fibR = runI32(exec, 'fib', [20]);
  if (ticks !== 21) die('fib(20) called env.tick a wrong number of times');
  const s1 = prepare(await filled(1), 'snapshot of 1 page');
  const s256 = prepare(await filled(256), 'snapshot of 256 pages');
  console.log(`sandbox-check add=${add} fib20=${fibR.value} fib20_gas=${fibR.gasUsed} ` +
    `snapshot_1p_bytes=${s1.snap.length} snapshot_1p_fnv=${fnv1a(s1.snap)} ` +
    `snapshot_256p_bytes=${s256.snap.length} snapshot_256p_fnv=${fnv1a(s256.snap)} restore_roundtrip=ok`);
  if (add !== 42 || fibR.value !== 6765 || fibR.gasUsed !== 21) die('wrong results of add or fib(20)');

  const checkExec = (r, value, gas, what) => {
    if (!r.ok || r.value !== value || r.gasUsed !== gas) die(`${what}: wrong result ${JSON.stringify(r)}`);
  };
  // Each returns the time of one iteration in ns.
  const impl = {
    create: () => {
      const t0 = now();
      const inst = sb.create(config);
      sb.destroy(inst);
      sb.release(inst);
      return Number(now() - t0);
    },
    load: async (i) => {
      const inst = sb.create(config);
      const bytes = uniqueBytes(wasm, i);
      const t0 = now();
      await sb.load(inst, bytes);
      const t = Number(now() - t0);
      sb.destroy(inst);
      sb.release(inst);
      return t;
    },
    execute_add: () => {
      const t0 = now();
      const r = sb.execute(exec, 'add', [17, 25]);
      const t = Number(now() - t0);
      checkExec(r, 42, 0, 'execute add');
      return t;
    },
    execute_fib20: () => {
      const t0 = now();
      const r = sb.execute(exec, 'fib', [20]);
      const t = Number(now() - t0);
      checkExec(r, 6765, 21, 'execute fib');
      return t;
    },
    snapshot_1p: () => snapOnce(s1),
    restore_1p: () => restoreOnce(s1),
    snapshot_256p: () => snapOnce(s256),
    restore_256p: () => restoreOnce(s256),
  };
  function snapOnce(st) {
    const t0 = now();
    const out = sb.snapshot(st.inst);
    const t = Number(now() - t0);
    if (out.length !== st.snap.length) die('snapshot changed size');
    return t;
  }
  function restoreOnce(st) {
    const t0 = now();
    sb.restore(st.inst, st.snap);
    return Number(now() - t0);
  }

  let iteration = 0;
  for (const [op, count] of OPS) {
    if (RI_ONLY.has(op) || (only && !only.has(op))) continue;
    const n = Math.max(1, Math.round(count * scale));
    const warmup = Math.max(1, Math.floor(n / 10));
    const fn = impl[op];
    const times = new Array(n);
    const isAsync = op === 'load';
    for (let i = 0; i < warmup; i++) (isAsync ? await fn(iteration++) : fn(iteration++));
    for (let i = 0; i < n; i++) times[i] = isAsync ? await fn(iteration++) : fn(iteration++);
    report(op, times, warmup);
  }
}

// Keeps the event loop alive while main() awaits the asynchronous loads. Without an active
// handle, Node leaves uv_run whenever only a compile is pending and waits for V8's background
// tasks in NodePlatform::DrainTasks; Node 20 can deadlock there (a concurrent JIT job waits for a
// garbage collection only the main thread can do; the same kind of deadlock as nodejs/node#54918),
// which hung 1 run in 3 of this script. A server running the original always has active handles (its sockets), so this
// is also the more faithful setting.
const keepAlive = setInterval(() => {}, 1 << 30);
try {
  await main();
} finally {
  clearInterval(keepAlive);
}
