#!/usr/bin/python3
"""Differential testing of ri against V8 (Node's WebAssembly) on random modules.

Modules come from binaryen's translate-to-fuzz (`wasm-opt -ttf`, with `--denan`) for the
MVP and for the WebAssembly 2.0 features the engine supports. Each module runs in
ri_difftest (the engine's C API) and in v8_run.mjs (Node), both printing one line per event
(call, logged value, result, trap); the two transcripts must be equal. A module that
differs is saved, reduced with wasm-reduce, and written to the found folder with V8's
transcript (NAME.wasm, NAME.wat, NAME.expected): `--replay` then checks ri against every
such reproducer. See tests/fuzz-diff/README.md.

  fuzz_diff.py --ri BUILD/ri_difftest [-n N] [--seed S] [--features mvp|2.0|simd|both|all]
  fuzz_diff.py --ri BUILD/ri_difftest --replay DIR      (reproducers; no node needed)
  fuzz_diff.py --ri BUILD/ri_difftest --check M.wasm    (wasm-reduce's test command)
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import untype_refs

HERE = os.path.dirname(os.path.abspath(__file__))
V8_RUN = os.path.join(HERE, 'v8_run.mjs')
NODE = shutil.which('node') or '/usr/bin/node'

# The feature sets. Binaryen 108's default is not the MVP; name everything explicitly.
# (No SIMD, threads, tail calls, exceptions, GC: the engine refuses them.)
FEATURES = {
    'mvp': ['--mvp-features'],
    '2.0': ['--mvp-features', '--enable-mutable-globals', '--enable-sign-ext',
            '--enable-nontrapping-float-to-int', '--enable-multivalue',
            '--enable-bulk-memory', '--enable-reference-types'],
}
# SIMD: the 2.0 features and fixed-width SIMD (v128 values reach the log imports through
# extract_lane and the like; an export with a v128 in its type cannot be called from JS, where
# it throws a TypeError before it runs, which the ri side reports alike).
FEATURES['simd'] = FEATURES['2.0'] + ['--enable-simd']
FEATURE_SETS = {'both': ['mvp', '2.0'], 'all': ['mvp', '2.0', 'simd']}
SEED_BYTES = (512, 24 * 1024)  # size range of the random input that -ttf turns into a module
BATCH_TIMEOUT = 300            # seconds for one node or ri process over one batch


def run(cmd, timeout):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def split_transcripts(text):
    """'module PATH' ... 'end' blocks -> {path: [lines]} (a block cut short has no 'end')."""
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith('module '):
            cur = out.setdefault(line[7:], [])
        elif cur is not None:
            cur.append(line)
    return out


def run_v8(paths):
    try:
        p = run([NODE, V8_RUN] + paths, BATCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {}
    return split_transcripts(p.stdout.decode())


def run_ri(ri, paths, fuel):
    """Runs ri_difftest over paths; a crash marks its module and the rest is run again."""
    result, todo = {}, list(paths)
    while todo:
        try:
            p = run([ri, '--fuel', str(fuel)] + todo, BATCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            for path in todo:
                result[path] = ['ri-timeout']
            break
        got = split_transcripts(p.stdout.decode(errors='replace'))
        result.update(got)
        if p.returncode == 0:
            break
        # The last module started is the one that crashed.
        crashed = [path for path in todo if path in got][-1:] or todo[:1]
        result[crashed[0]] = got.get(crashed[0], []) + ['ri-crash exit %d' % p.returncode]
        todo = todo[todo.index(crashed[0]) + 1:]
    return result


def classify(v8, ri):
    """'pass', 'fail', or 'skip:<why>' for one module's two transcripts."""
    if v8 is None or not v8 or v8[-1] != 'end':
        return 'skip:node-timeout'
    if ri is None:
        return 'fail'
    if 'fuel-exhausted' in ri:
        return 'skip:fuel-exhausted'
    if v8 == ['compile-error', 'end']:
        # Binaryen 108 sometimes emits typed function references with only reference-types
        # enabled; V8 rejects such a module, and ri must reject it too.
        return 'skip:invalid-module' if ri == v8 else 'fail'
    if v8 == ri:
        return 'pass'
    return 'pass-nan' if nan_tolerant_equal(v8, ri) else 'fail'


def value_bits(token):
    """(bits, width) of one printed value ('i32:-5', 'f64:3ff0000000000000'); None otherwise."""
    kind, _, text = token.partition(':')
    try:
        if kind in ('i32', 'i64'):
            width = 32 if kind == 'i32' else 64
            return int(text) & ((1 << width) - 1), width
        if kind in ('f32', 'f64') and text != 'nan':
            return int(text, 16), 32 if kind == 'f32' else 64
    except ValueError:
        pass
    return None


def is_nan_bits(bits, width):
    exp, frac = (0xff << 23, (1 << 23) - 1) if width == 32 else (0x7ff << 52, (1 << 52) - 1)
    return bits & exp == exp and bits & frac != 0


def nan_lanes_only(a, b):
    """Whether two printed values differ only where both hold a NaN: the value as a whole,
    or each of its 32-bit halves. A NaN computed by a SIMD lane (f32x4.max, ...) has a sign
    and payload the spec leaves open, and --denan cannot reach into a v128, so such bits
    reach results and logs through extract_lane and reinterpretations."""
    x, y = value_bits(a), value_bits(b)
    if x is None or y is None or x[1] != y[1] or a.partition(':')[0] != b.partition(':')[0]:
        return False
    (p, width), (q, _) = x, y
    if is_nan_bits(p, width) and is_nan_bits(q, width):
        return True
    halves = [(p >> s & 0xffffffff, q >> s & 0xffffffff) for s in range(0, width, 32)]
    return all(h == k or (is_nan_bits(h, 32) and is_nan_bits(k, 32)) for h, k in halves)


def nan_tolerant_equal(v8, ri):
    """The transcripts agree, up to NaN bits the spec leaves open (nan_lanes_only)."""
    if v8 is None or ri is None or len(v8) != len(ri):
        return False
    for a, b in zip(v8, ri):
        if a == b:
            continue
        ta, tb = a.split(' '), b.split(' ')
        if len(ta) != len(tb) or ta[0] != tb[0] or \
                not all(x == y or nan_lanes_only(x, y) for x, y in zip(ta, tb)):
            return False
    return True


def self_test():
    """The NaN-tolerant comparison on known cases: what it must accept and what it must not."""
    cases = [
        ('f32:ffc00000', 'f32:7fc00000', True),                # a NaN of either sign
        ('f64:fff8000000000001', 'f64:7ff8000000000000', True),  # f64 NaNs, other payloads
        ('f64:ffc00000ffc00000', 'f64:7fc000007fc00000', True),  # two f32 NaN lanes in an f64
        ('i32:-4194304', 'i32:2143289344', True),              # an f32 NaN lane extracted as i32
        ('f32:ffc00000', 'f32:7f800000', False),               # NaN against infinity
        ('f64:ffc0000012345678', 'f64:7fc0000012345679', False),  # a non-NaN half differs
        ('i32:1', 'i32:2', False),
        ('f32:ffc00000', 'i32:-4194304', False),               # other types
    ]
    bad = [(a, b, want) for a, b, want in cases if nan_lanes_only(a, b) != want]
    lines = [(['call f', 'result f32:ffc00000 i32:1', 'end'], ['call f', 'result f32:7fc00000 i32:1', 'end'], True),
             (['call f', 'result f32:ffc00000 i32:1', 'end'], ['call f', 'result f32:7fc00000 i32:2', 'end'], False),
             (['call f', 'log f32:ffc00000', 'end'], ['call f', 'result f32:7fc00000', 'end'], False),
             (['call f', 'end'], ['call f', 'trap', 'end'], False)]
    bad += [(v, r, want) for v, r, want in lines if nan_tolerant_equal(v, r) != want]
    for a, b, want in bad:
        print('FAIL: %r against %r should %s' % (a, b, 'agree' if want else 'differ'))
    print('%d passed, %d failed' % (len(cases) + len(lines) - len(bad), len(bad)))
    return 1 if bad else 0


def first_difference(v8, ri):
    for k in range(max(len(v8), len(ri))):
        a = v8[k] if k < len(v8) else '<nothing>'
        b = ri[k] if k < len(ri) else '<nothing>'
        if a != b:
            context = [line for line in v8[:k] if line.startswith('call ')][-1:]
            return '%sexpected (V8): %s\n  got (ri): %s' % (
                ('  in ' + context[0] + '\n  ') if context else '  ', a, b)
    return '  (no difference)'


def normalize(path, features):
    """For 2.0, rewrites binaryen 108's non-standard reference types in place
    (untype_refs.py): typed references always, externref-as-anyref when the module is
    otherwise invalid (wabt's wasm-validate says). Returns whether externref was folded.
    (wasm-reduce's passes bring them back, so --check normalizes each candidate too.)"""
    if features == 'mvp':
        return False
    with open(path, 'rb') as f:
        original = f.read()
    fixed = untype_refs.untype(original)
    if fixed != original:
        write_atomic(path, fixed)
    if run(['wasm-validate', path], 60).returncode == 0:
        return False
    write_atomic(path, untype_refs.untype(original, fold_extern=True))
    return True


def generate(args, seed_path, out_path, features):
    """Makes a module (None if binaryen failed, else whether externref was folded)."""
    denan = ['--denan'] if args.denan else []
    p = run(['wasm-opt', seed_path, '-ttf'] + denan + FEATURES[features] + ['-o', out_path], 120)
    if p.returncode != 0:
        return None
    return normalize(out_path, features)


def to_wat(wasm, features):
    for cmd in (['wasm2wat', '--enable-all', wasm], ['wasm-opt', wasm, '--print'] + FEATURES[features]):
        try:
            p = run(cmd, 60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if p.returncode == 0:
            return p.stdout.decode()
    return ';; (could not print this module)\n'


def write_atomic(path, data):
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def reduce_and_save(args, name, wasm, features, work):
    """Reduces wasm with wasm-reduce (keeping "V8 and ri differ") and saves the reproducer."""
    os.makedirs(args.found, exist_ok=True)
    reduced = os.path.join(work, name + '.reduced.wasm')
    if args.reduce:
        test = os.path.join(work, name + '.test.wasm')
        check = '%s %s --ri %s --fuel %d --features %s --check %s' % (
            sys.executable, os.path.abspath(__file__), os.path.abspath(args.ri), args.fuel, features, test)
        flags = FEATURES[features]
        # -b: where wasm-reduce finds wasm-opt (it does not search PATH).
        bindir = os.path.dirname(shutil.which('wasm-opt') or '/usr/bin/wasm-opt') + '/'
        cmd = ['wasm-reduce', wasm, '--command=' + check, '-t', test, '-w', reduced, '-b', bindir,
               '--timeout', '30', '-ef', ' '.join(flags)] + flags
        try:
            run(cmd, args.reduce_timeout)
        except subprocess.TimeoutExpired:
            print('  wasm-reduce timed out; keeping its best so far', file=sys.stderr)
    if not os.path.exists(reduced) or check_file(args, reduced, features) != 'different':
        shutil.copyfile(wasm, reduced)
    v8 = run_v8([reduced]).get(reduced, [])
    ri = run_ri(args.ri, [reduced], args.fuel).get(reduced, [])
    base = os.path.join(args.found, name)
    with open(reduced, 'rb') as f:
        write_atomic(base + '.wasm', f.read())
    write_atomic(base + '.wat', to_wat(reduced, features))
    write_atomic(base + '.expected', '\n'.join(v8) + '\n')
    print('  reduced to %d bytes: %s.wasm\n%s' % (os.path.getsize(reduced), base, first_difference(v8, ri)))


def check_file(args, wasm, features):
    normalize(wasm, features)
    v8 = run_v8([wasm]).get(wasm)
    ri = run_ri(args.ri, [wasm], args.fuel).get(wasm)
    verdict = classify(v8, ri)
    # A reduction must keep a real difference, not drift into an invalid module.
    return 'different' if verdict == 'fail' and v8 != ['compile-error', 'end'] else 'same'


def campaign(args):
    work = tempfile.mkdtemp(prefix='ri-fuzz-diff-')
    sets = FEATURE_SETS.get(args.features, [args.features])
    counts = {'pass': 0, 'fail': 0}
    skips = {}
    failures = []
    started = time.monotonic()
    gen_time = run_time = 0.0
    folds = 0
    nan_only = 0
    try:
        last = args.start + args.n
        for first in range(args.start, last, args.batch):
            batch = []
            t0 = time.monotonic()
            for i in range(first, min(first + args.batch, last)):
                rng = random.Random('%d-%d' % (args.seed, i))
                features = sets[i % len(sets)]
                seed_path = os.path.join(work, 'seed-%d.bin' % i)
                wasm = os.path.join(work, 's%d-%d-%s.wasm' % (args.seed, i, features.replace('.', '')))
                with open(seed_path, 'wb') as f:
                    f.write(rng.randbytes(rng.randint(*SEED_BYTES)))
                folded = generate(args, seed_path, wasm, features)
                if folded is None:
                    skips['generator-failed'] = skips.get('generator-failed', 0) + 1
                else:
                    batch.append((i, wasm, features))
                    folds += folded
                os.unlink(seed_path)
            t1 = time.monotonic()
            paths = [w for _, w, _ in batch]
            v8 = run_v8(paths)
            ri = run_ri(args.ri, paths, args.fuel)
            t2 = time.monotonic()
            gen_time += t1 - t0
            run_time += t2 - t1
            for i, wasm, features in batch:
                verdict = classify(v8.get(wasm), ri.get(wasm))
                if verdict.startswith('skip:'):
                    skips[verdict[5:]] = skips.get(verdict[5:], 0) + 1
                    os.unlink(wasm)
                    continue
                if verdict == 'pass-nan':
                    nan_only += 1
                    verdict = 'pass'
                counts[verdict] += 1
                if verdict == 'pass':
                    os.unlink(wasm)
                    continue
                name = os.path.basename(wasm)[:-5]
                print('DIFFERENCE in module %d (%s features): %s\n%s' % (
                    i, features, name, first_difference(v8.get(wasm, []), ri.get(wasm, []))))
                failures.append(name)
                if args.found and len(failures) <= args.max_reduce:
                    reduce_and_save(args, name, wasm, features, work)
                else:
                    print('  not reduced (--max-reduce %d); again: --seed %d --start %d -n 1' % (
                        args.max_reduce, args.seed, i))
            done = min(first + args.batch, last) - args.start
            if args.progress:
                print('.. %d/%d modules, %d failed' % (done, args.n, counts['fail']), flush=True)
    finally:
        if args.keep:
            print('work folder kept: ' + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    total = time.monotonic() - started
    t = os.times()
    cpu = t.user + t.system + t.children_user + t.children_system
    ran = counts['pass'] + counts['fail'] + sum(skips.values())
    skipped = ', '.join('%d %s' % (v, k) for k, v in sorted(skips.items())) or 'none'
    per = 1000.0 / max(ran, 1)
    print('fuzz-diff: campaign seed %d, features %s: %d modules in %.1f s, %.1f s of CPU '
          '(per module: %.1f ms, generation %.1f, ri+V8 %.1f; CPU %.1f ms)' % (
              args.seed, args.features, ran, total, cpu, per * total, per * gen_time,
              per * run_time, per * cpu))
    print('skipped: %s; 2.0 modules with externref folded into funcref: %d' % (skipped, folds))
    print('passed with NaN bits that differ only where the spec leaves them open (SIMD lanes): %d'
          % nan_only)
    print('%d passed, %d failed' % (counts['pass'], counts['fail']))
    return 1 if counts['fail'] else 0


def replay(args):
    """Runs ri on every reproducer NAME.wasm in the folder and compares with NAME.expected."""
    names = sorted(f[:-5] for f in os.listdir(args.replay) if f.endswith('.wasm'))
    paths = [os.path.join(args.replay, n + '.wasm') for n in names]
    ri = run_ri(args.ri, paths, args.fuel) if paths else {}
    v8 = run_v8(paths) if (paths and args.with_node) else {}
    passed = failed = 0
    for name, path in zip(names, paths):
        with open(os.path.join(args.replay, name + '.expected')) as f:
            expected = f.read().splitlines()
        problems = []
        if ri.get(path) != expected and not nan_tolerant_equal(expected, ri.get(path)):
            problems.append('ri differs from the recorded V8 transcript:\n' +
                            first_difference(expected, ri.get(path, [])))
        if args.with_node and v8.get(path) != expected and not nan_tolerant_equal(expected, v8.get(path)):
            problems.append('V8 no longer gives the recorded transcript:\n' +
                            first_difference(expected, v8.get(path, [])))
        if problems:
            failed += 1
            print('FAIL %s: %s' % (name, '\n'.join(problems)))
        else:
            passed += 1
    print('replay of %s: %d passed, %d failed' % (args.replay, passed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--ri', help='the ri_difftest program (required but for --self-test)')
    ap.add_argument('-n', type=int, default=300, help='modules to generate (default 300)')
    ap.add_argument('--seed', type=int, default=1, help='campaign seed: the same seed, the same modules')
    ap.add_argument('--start', type=int, default=0, help='index of the first module (to run one again)')
    ap.add_argument('--features', choices=['mvp', '2.0', 'simd', 'both', 'all'], default='all',
                    help='feature set of the modules (both: alternate)')
    ap.add_argument('--batch', type=int, default=100, help='modules per node/ri process')
    ap.add_argument('--no-denan', dest='denan', action='store_false',
                    help="no --denan: NaN bits may then reach integers (spec-allowed differences to triage)")
    ap.add_argument('--fuel', type=int, default=10000000000,
                    help='gas for each export call in ri (bulk memory operations charge a unit per byte)')
    ap.add_argument('--found', default=None, help='where reduced reproducers go (none: not reduced)')
    ap.add_argument('--no-reduce', dest='reduce', action='store_false',
                    help='save the failing module itself, unreduced')
    ap.add_argument('--reduce-timeout', type=int, default=600, help='seconds for one wasm-reduce')
    ap.add_argument('--max-reduce', type=int, default=3,
                    help='reduce and save the first K differences only (the others are listed)')
    ap.add_argument('--keep', action='store_true', help='keep the work folder')
    ap.add_argument('--progress', action='store_true', help='a line after each batch')
    ap.add_argument('--replay', help='replay the reproducers of this folder')
    ap.add_argument('--with-node', action='store_true', help='replay: check V8 against the transcripts too')
    ap.add_argument('--self-test', action='store_true', help='check the NaN-tolerant comparison, then exit')
    ap.add_argument('--check', help="wasm-reduce's command: print 'different' or 'same' for one module")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.ri:
        ap.error('--ri is required')
    if args.check:
        print(check_file(args, args.check, 'mvp' if args.features == 'mvp' else '2.0'))
        return 0
    if args.replay:
        return replay(args)
    return campaign(args)


if __name__ == '__main__':
    sys.exit(main())
