// Runs binaryen translate-to-fuzz modules in Node's WebAssembly (V8) and prints one line
// per event, in the format ri_difftest prints (see tests/fuzz-diff/README.md):
//   module PATH | link-error | instantiate-trap | call NAME | log TYPE VALUE |
//   result VALUE... | trap | end
// Usage: node v8_run.mjs MODULE.wasm...   (one process for many modules: startup is the cost)
import { readFileSync } from 'node:fs';

// ---- a minimal reader of the sections that give each export's function type --------------
// (JS does not reflect wasm types, and the harness must pass typed zeros, as binaryen's
// C++ fuzz harness does: JS `undefined` would become NaN for floats and throw for i64.)
function parseTypes(bytes) {
  let pos = 8;
  const u8 = () => bytes[pos++];
  const leb = () => {
    let result = 0, shift = 0, b;
    do { b = bytes[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return result;
  };
  const name = () => { const n = leb(); const s = bytes.subarray(pos, pos + n); pos += n; return Buffer.from(s).toString('utf8'); };
  const limits = () => { const flags = u8(); leb(); if (flags & 1) leb(); };
  const types = [], funcs = [], exports = [];
  while (pos < bytes.length) {
    const id = u8(), size = leb(), end = pos + size;
    if (id === 1) {
      for (let n = leb(); n > 0; n--) {
        if (u8() !== 0x60) throw new Error('unexpected type form');
        const params = [], results = [];
        for (let k = leb(); k > 0; k--) params.push(u8());
        for (let k = leb(); k > 0; k--) results.push(u8());
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = leb(); n > 0; n--) {
        name(); name();
        const kind = u8();
        if (kind === 0) funcs.push(types[leb()]);
        else if (kind === 1) { u8(); limits(); }
        else if (kind === 2) limits();
        else if (kind === 3) { u8(); u8(); }
        else throw new Error('unexpected import kind');
      }
    } else if (id === 3) {
      for (let n = leb(); n > 0; n--) funcs.push(types[leb()]);
    } else if (id === 7) {
      for (let n = leb(); n > 0; n--) {
        const nm = name(), kind = u8(), index = leb();
        exports.push({ name: nm, kind, type: kind === 0 ? funcs[index] : null });
      }
    }
    pos = end;
  }
  return exports;
}

// ---- value formatting (the same as ri_difftest's) -----------------------------------------
const I32 = 0x7f, I64 = 0x7e, F32 = 0x7d, F64 = 0x7c, FUNCREF = 0x70, EXTERNREF = 0x6f;
const f32buf = new Float32Array(1), f32bits = new Uint32Array(f32buf.buffer);
const f64buf = new Float64Array(1), f64bits = new BigUint64Array(f64buf.buffer);

// NaNs print as "nan": their sign and payload may differ where the spec allows it (and a
// NaN passed through JS may be canonicalised), so only NaN-ness is compared.
function fmt(type, v) {
  switch (type) {
    case I32: return 'i32:' + (v | 0);
    case I64: return 'i64:' + BigInt.asIntN(64, BigInt(v));
    case F32: if (Number.isNaN(v)) return 'f32:nan'; f32buf[0] = v; return 'f32:' + f32bits[0].toString(16);
    case F64: if (Number.isNaN(v)) return 'f64:nan'; f64buf[0] = v; return 'f64:' + f64bits[0].toString(16);
    case FUNCREF: case EXTERNREF: return (type === FUNCREF ? 'funcref:' : 'externref:') + (v === null ? 'null' : 'nonnull');
    default: return 'type' + type + ':?';
  }
}

function zero(type) {
  switch (type) {
    case I64: return 0n;
    case FUNCREF: case EXTERNREF: return null;
    default: return 0;
  }
}

const out = [];
const emit = (line) => out.push(line);
const logger = (type) => (v) => emit('log ' + fmt(type, v));
const imports = {
  'fuzzing-support': {
    'log-i32': logger(I32), 'log-i64': logger(I64),
    'log-f32': logger(F32), 'log-f64': logger(F64),
    // A v128 cannot pass to JS: the call throws a TypeError before this runs (a trap).
    'log-v128': () => { throw new Error('log-v128 called with a v128'); },
  },
};

function runModule(path) {
  emit('module ' + path);
  const bytes = readFileSync(path);
  let instance;
  try {
    instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), imports);
  } catch (e) {
    emit(e instanceof WebAssembly.CompileError ? 'compile-error'
      : e instanceof WebAssembly.RuntimeError ? 'instantiate-trap' : 'link-error');
    emit('end');
    return;
  }
  for (const ex of parseTypes(bytes)) {
    if (ex.kind !== 0) continue;
    emit('call ' + ex.name);
    const { params, results } = ex.type;
    try {
      const r = instance.exports[ex.name](...params.map(zero));
      if (results.length === 1) emit('result ' + fmt(results[0], r));
      else if (results.length > 1) emit('result ' + results.map((t, i) => fmt(t, r[i])).join(' '));
    } catch (e) {
      emit('trap');
    }
  }
  emit('end');
}

for (const path of process.argv.slice(2)) {
  runModule(path);
  process.stdout.write(out.join('\n') + '\n');
  out.length = 0;
}
