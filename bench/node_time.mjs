// node node_time.mjs FILE.wasm [export]    -- like ../shared/bench/node_run.mjs (instantiate with
//   no imports, call the export, print its result as a u32), and also print on stderr the time of
//   the call alone, so Node's number compares with ri-bench-run's and the native timer's.
// node --no-wasm-lazy-compilation node_time.mjs --compile FILE.wasm [repeat]  -- time synchronous
//   compilation (new WebAssembly.Module) instead, for reference next to ri's load+validate+compile.
//   Without that flag V8 compiles each function only when first called, which times nothing.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args[0] === '--compile') {
  const bytes = readFileSync(args[1]);
  const repeat = Number(args[2] ?? 5);
  const times = [];
  for (let i = 0; i < repeat; i++) {
    // V8 caches compiled modules by their bytes; a trailing custom section holding the run's
    // number makes each compile a real one.
    const name = `bench${i}`;
    const extra = Buffer.from([0, name.length + 1, name.length, ...Buffer.from(name)]);
    const unique = Buffer.concat([bytes, extra]);
    const t0 = process.hrtime.bigint();
    new WebAssembly.Module(unique);
    times.push(Number(process.hrtime.bigint() - t0));
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  console.log(`node-compile: runs=${repeat} median_ns=${Math.round(median)}`);
} else {
  const [file, fn = 'run'] = args;
  const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
  const t0 = process.hrtime.bigint();
  const result = instance.exports[fn]();
  const t1 = process.hrtime.bigint();
  console.log(String(result >>> 0));
  console.error(`call_ns=${t1 - t0}`);
}
