#!/usr/bin/env python3
"""`make bench` (issue 3): builds the benchmark programs of ../shared/bench to wasm32 and to
native code, runs them on native code, ri (metering off and on), Node's WebAssembly and wabt's
wasm-interp in one run, checks every checksum, and prints median times, ratios to native and
to Node and their geometric means, plus load+validate+compile speed on a large generated module.
Then (issue 4) times the sandbox library's operations (ri-bench-sandbox) against the same
operations on Node (sandbox_ops.mjs) and prints their ratios. Then (issue 6) times the snapshot
store (ri-bench-store): save and restore of a 16 MiB sandbox, the space of 100 snapshots against
plain WSNP files, list with 10,000 snapshots. Then (issue 5) times snapshots, rollback, fork
and diff of 16, 256 and 4096 pages against memcpy of the same bytes (ri-bench-snapshot).
`--only engine|sandbox|store|snapshot` runs one part. Writes
a JSON results file and a bar chart (gnuplot) under bench/results/.

Python standard library only. See bench/README.md for how to read the output."""

import argparse
import datetime
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROGRAMS = ["fib", "sieve", "matmul", "sha256", "nbody", "qsort"]
# The untuned set (bench/heldout/*.c): programs no fusion or variant was shaped after (their
# sizes are in their sources, their expected results are the native build's), so a speed-up
# on the six above that does not show here did not generalise.
UNTUNED = ["vm", "lz", "bigint", "json", "mandel", "strsearch", "crc", "hash"]
HELDOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "heldout")
# Column order of the table. "ri-off" loads the module unmetered (ri_module_config.unmetered:
# no gas charges in the code); "ri-on" is metered, with a large finite budget. See ri_run.c.
RUNTIMES = ["native", "ri-off", "ri-on", "node", "wasm-interp"]
WASM_FLAGS = ["--target=wasm32", "-O2", "-nostdlib", "-Wl,--no-entry", "-Wl,-z,stack-size=1048576"]

# Issue 3's targets, checked at the end of the table.
TARGET_RI_NATIVE = 7.5
TARGET_RI_NODE = 3.2   # was 3.5; now without kernel-specific fusions
TARGET_METERING = 1.05
TARGET_LOAD_NS_PER_BYTE = 50.0   # was 100
TARGET_CODE_RATIO = 3.0
# Speed that generalises: the untuned set's geometric mean and its worst program, ri (metering
# on) / Node.
TARGET_UNTUNED_NODE = 3.0
TARGET_UNTUNED_WORST_NODE = 6.0

# Issue 4: the sandbox operations (sandbox_ops.c and sandbox_ops.mjs print one line per
# operation; the call_* ones are ri's typed-argument calls, with Node's execute as reference).
SANDBOX_OPS = ["create", "load", "execute_add", "execute_fib20", "call_add", "call_fib20",
               "snapshot_1p", "restore_1p", "snapshot_256p", "restore_256p"]
SANDBOX_LABELS = {
    "create": "create",
    "load": "load",
    "execute_add": "execute add(17,25)",
    "execute_fib20": "execute fib(20)",
    "call_add": "  typed call add",
    "call_fib20": "  typed call fib(20)",
    "snapshot_1p": "snapshot 1 page",
    "restore_1p": "restore 1 page",
    "snapshot_256p": "snapshot 256 pages",
    "restore_256p": "restore 256 pages",
}
# Node's operation each ri operation compares with.
SANDBOX_NODE_OP = {"call_add": "execute_add", "call_fib20": "execute_fib20"}
# Seed 001's performance targets in microseconds (create < 5 ms, load < 50 ms, execute < 50 ms,
# snapshot and restore < 10 ms), checked against ri's p99.
SANDBOX_TARGET_US = {"create": 5000, "load": 50000, "execute_add": 50000, "execute_fib20": 50000,
                     "call_add": 50000, "call_fib20": 50000, "snapshot_1p": 10000,
                     "restore_1p": 10000, "snapshot_256p": 10000, "restore_256p": 10000}


class BenchError(Exception):
    """A problem that stops the whole run (missing tool, build failure, bad input)."""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- inputs ---------------------------------------------------------------------------

def parse_sizes(path):
    """sizes.mk lines `DEFS_fib = -DFIB_N=38` -> {"fib": ["-DFIB_N=38"]}."""
    defs = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*DEFS_(\w+)\s*=\s*(.*?)\s*$", line)
            if m:
                defs[m.group(1)] = shlex.split(m.group(2))
    missing = [p for p in PROGRAMS if p not in defs]
    if missing:
        raise BenchError(f"{path}: no DEFS_ line for {', '.join(missing)}")
    return defs


def parse_checksums(path):
    """The README's table is the one place the expected checksums are written down:
    rows like `| fib.c | ... | 39088169 |`."""
    sums = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[0].endswith(".c") and cells[-1].isdigit():
                sums[cells[0][:-2]] = int(cells[-1])
    missing = [p for p in PROGRAMS if p not in sums]
    if missing:
        raise BenchError(f"{path}: no checksum row for {', '.join(missing)}")
    return sums


# ---- building ---------------------------------------------------------------------------

def build_step(out, inputs, cmd, what):
    """Runs cmd unless out is newer than every input and was made by the same command
    (kept in out.cmd), so a second `make bench` does not rebuild."""
    stamp = out + ".cmd"
    line = shlex.join(cmd)
    if os.path.exists(out) and os.path.exists(stamp):
        with open(stamp) as f:
            same = f.read() == line
        if same and all(os.path.getmtime(i) <= os.path.getmtime(out) for i in inputs):
            return
    log(f"  build {what}")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError(f"building {what} failed:\n$ {line}\n{r.stdout}{r.stderr}")
    with open(stamp, "w") as f:
        f.write(line)


def build_programs(args, defs):
    src = os.path.join(args.shared, "src")
    header = os.path.join(src, "bench.h")
    timer_c = os.path.join(HERE, "native_timer.c")
    timer_o = os.path.join(args.build_dir, "native_timer.o")
    build_step(timer_o, [timer_c],
               [args.gcc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-c", timer_c, "-o", timer_o],
               "native_timer.o")
    built = {}
    for p in args.programs:
        c = os.path.join(src, p + ".c")
        wasm = os.path.join(args.build_dir, p + ".wasm")
        native = os.path.join(args.build_dir, p + ".native")
        build_step(wasm, [c, header], [args.clang, *WASM_FLAGS, *defs[p], "-o", wasm, c], p + ".wasm")
        build_step(native, [c, header, timer_o],
                   [args.gcc, "-O2", *defs[p], "-o", native, c, timer_o, "-lm"], p + ".native")
        built[p] = {"wasm": wasm, "native": native}
    return built


def build_untuned(args):
    """The untuned set: each program built like the six (wasm32 -O2, native gcc -O2 with the
    timer) and its expected result taken from one native run."""
    header = os.path.join(args.shared, "src", "bench.h")
    timer_o = os.path.join(args.build_dir, "native_timer.o")
    inc = "-I" + os.path.join(args.shared, "src")
    built, expected = {}, {}
    for p in args.untuned:
        c = os.path.join(HELDOUT, p + ".c")
        wasm = os.path.join(args.build_dir, "untuned-" + p + ".wasm")
        native = os.path.join(args.build_dir, "untuned-" + p + ".native")
        build_step(wasm, [c, header], [args.clang, *WASM_FLAGS, inc, "-o", wasm, c], p + ".wasm (untuned)")
        build_step(native, [c, header, timer_o], [args.gcc, "-O2", inc, "-o", native, c, timer_o, "-lm"],
                   p + ".native (untuned)")
        r = run_one([native], args.timeout, True)
        if r["status"] != "ok":
            raise BenchError(f"the native build of {p} (untuned) failed: {r.get('detail')}")
        built[p] = {"wasm": wasm, "native": native}
        expected[p] = r["result"]
    return built, expected


def source_digest(path):
    """What identifies an untuned program's size in the results files: its source's hash."""
    import hashlib
    with open(path, "rb") as f:
        return ["sha256:" + hashlib.sha256(f.read()).hexdigest()[:16]]


def generate_large_c(path, nfuncs, seed=20240503):
    """Writes a deterministic C file with nfuncs varied functions (loops, switches, direct
    and indirect calls, memory, i64 and f64 arithmetic), all reachable from run() through
    a function-pointer table, so the module is big and realistic and its checksum can be
    checked too. Only unsigned arithmetic and in-range conversions: no undefined behaviour,
    so native and wasm agree."""
    rng = random.Random(seed)

    def k32():
        return f"0x{rng.getrandbits(32):08x}u"

    def stmt(i, calls_left):
        kind = rng.randrange(11 if calls_left and i > 0 else 10)
        r = rng.randrange(1, 32)
        if kind == 0:
            return f"x = x * {k32()} + y;"
        if kind == 1:
            return f"y ^= (x >> {r}) | (x << {32 - r});"
        if kind == 2:
            return (f"for (u32 i = 0; i < (x & 7u) + 1u; i++) {{ y += mem[(x + i) & 4095u]; "
                    f"x = x * 31u + i; }}")
        if kind == 3:
            cases = " ".join(f"case {c}: {rng.choice(['x', 'y'])} {rng.choice(['+=', '^=', '-='])} {k32()}; break;"
                             for c in range(rng.randrange(3, 9)))
            return f"switch ((x >> {r}) & 7u) {{ {cases} default: x = ~x; }}"
        if kind == 4:
            return f"if (x > y) {{ x -= y; }} else {{ y = y - x + {k32()}; }}"
        if kind == 5:
            return f"mem[(y ^ {k32()}) & 4095u] = x;"
        if kind == 6:
            return ("{ double t = (double)(x & 0xffffu) * 1.25 + (double)(y & 0xffu) * 0.5; "
                    "y += (u32)t; }")
        if kind == 7:
            return "x += (y / ((x & 255u) | 1u)) + (y % 7u);"
        if kind == 8:
            return f"{{ u64 w = (u64)x * (u64)y + {k32()}; x ^= (u32)(w >> 32); y += (u32)w; }}"
        if kind == 9:
            return "while (y & 1u) { y >>= 1; x += 3u; }"
        j = rng.randrange(max(0, i - 50), i)
        return f"if (d) x += f{j}(x, y, d - 1u);"

    lines = [
        "/* Generated by bench/bench.py: a large module for load+validate+compile timing. */",
        '#include "bench.h"',
        "typedef u32 (*fn_t)(u32, u32, u32);",
        "static u32 mem[4096];",
    ]
    for i in range(nfuncs):
        calls = 2
        body = []
        for _ in range(rng.randrange(6, 15)):
            s = stmt(i, calls)
            if s.startswith("if (d)"):
                calls -= 1
            body.append("  " + s)
        lines.append(f"__attribute__((noinline)) static u32 f{i}(u32 a, u32 b, u32 d) {{")
        lines.append(f"  u32 x = a ^ {k32()}, y = b + {k32()};")
        lines.extend(body)
        lines.append("  return x ^ y;")
        lines.append("}")
    lines.append("static const fn_t table[] = {")
    lines.extend(f"  f{i}," for i in range(nfuncs))
    lines.append("};")
    lines.append("EXPORT(\"run\") u32 run(void) {")
    lines.append("  for (u32 i = 0; i < 4096u; i++) mem[i] = i * 2654435761u;")
    lines.append("  u32 s = 0;")
    lines.append(f"  for (u32 i = 0; i < {nfuncs}u; i++) s = s * 31u + table[i](s, i, 2u);")
    lines.append("  return s;")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    # Rewrite only on change, so the builds below stay cached.
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def build_large(args):
    c = os.path.join(args.build_dir, f"large{args.large_funcs}.c")
    generate_large_c(c, args.large_funcs)
    header = os.path.join(args.shared, "src", "bench.h")
    wasm = os.path.join(args.build_dir, "large.wasm")
    native = os.path.join(args.build_dir, "large.native")
    inc = "-I" + os.path.join(args.shared, "src")
    build_step(wasm, [c, header], [args.clang, *WASM_FLAGS, inc, "-o", wasm, c],
               f"large.wasm ({args.large_funcs} functions)")
    build_step(native, [c, header, os.path.join(args.build_dir, "native_timer.o")],
               [args.gcc, "-O1", inc, "-o", native, c, os.path.join(args.build_dir, "native_timer.o")],
               "large.native")
    return {"wasm": wasm, "native": native}


# ---- running ------------------------------------------------------------------------------

def describe_exit(rc):
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


def tail(text, n=6):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def run_one(cmd, timeout, in_process):
    """Runs one measurement. Returns a dict: status ("ok", "crash", "timeout", "error"),
    result (u32 or None), time_ns (the in-process call time if the runner reports one,
    else the process's wall time), wall_ns, and detail on failure."""
    t0 = time.perf_counter_ns()
    try:
        # Its own process group, so a hung run is stopped with everything it started.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except OSError as e:
        return {"status": "error", "result": None, "detail": f"cannot run {cmd[0]}: {e}"}
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"status": "timeout", "result": None, "detail": f"no answer within {timeout:.0f} s"}
    wall = time.perf_counter_ns() - t0
    r = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    out = r.stdout + "\n" + r.stderr
    if r.returncode != 0:
        status = "crash" if r.returncode < 0 else "error"
        return {"status": status, "result": None, "wall_ns": wall,
                "detail": f"{describe_exit(r.returncode)}: {tail(out)}"}
    result = None
    m = re.search(r"run\(\) => i32:(-?\d+)", r.stdout)  # wasm-interp's form
    if m:
        result = int(m.group(1)) & 0xFFFFFFFF
    else:
        first = r.stdout.strip().splitlines()[:1]
        if first and re.fullmatch(r"-?\d+", first[0].strip()):
            result = int(first[0]) & 0xFFFFFFFF
    if result is None:
        return {"status": "error", "result": None, "wall_ns": wall,
                "detail": f"no result in the output: {tail(out)}"}
    t = wall
    if in_process:
        m = re.search(r"(?:call_ns|median_ns)=(\d+)", r.stderr)
        if not m:
            return {"status": "error", "result": result, "wall_ns": wall,
                    "detail": f"no timing line in the output: {tail(out)}"}
        t = int(m.group(1))
    res = {"status": "ok", "result": result, "time_ns": t, "wall_ns": wall}
    m = re.search(r"gas_used=(\d+)", r.stderr)
    if m:
        res["gas_used"] = int(m.group(1))
    return res


def commands(args, wasm, native):
    return {
        "native": ([native], True),
        "ri-off": ([args.ri, "--no-metering", "--repeat", "1", wasm, "run"], True),
        "ri-on": ([args.ri, "--repeat", "1", wasm, "run"], True),
        "node": ([args.node, os.path.join(HERE, "node_time.mjs"), wasm, "run"], True),
        # wasm-interp has no timer of its own; its start-up is negligible next to its run.
        "wasm-interp": ([args.wasm_interp, "--run-all-exports", wasm], False),
    }


class Cell:
    """The measurements of one runtime on one program."""

    def __init__(self, expected):
        self.expected = expected
        self.times = []
        self.walls = []
        self.status = "ok"
        self.detail = ""
        self.gas_used = None
        self.reps_wanted = None

    def add(self, r):
        if r["status"] == "ok" and r["result"] != self.expected:
            r = dict(r, status="wrong",
                     detail=f"returned {r['result']}, expected {self.expected}")
        if r["status"] != "ok":
            self.status, self.detail = r["status"], r["detail"]
            return False
        self.times.append(r["time_ns"])
        self.walls.append(r["wall_ns"])
        if "gas_used" in r:
            self.gas_used = r["gas_used"]
        return True

    def skip(self, why):
        self.status, self.detail = "skipped", why

    @property
    def ok(self):
        return self.status == "ok" and bool(self.times)

    @property
    def median(self):
        return statistics.median(self.times) if self.ok else None

    def to_json(self):
        return {"status": self.status, "detail": self.detail, "runs": len(self.times),
                "median_ns": self.median, "times_ns": self.times, "process_wall_ns": self.walls,
                "gas_used": self.gas_used}


def measure_program(args, name, files, expected, interp_factor):
    """Runs every runtime on one program. Repetitions are interleaved (round 1 runs each
    runtime once, then round 2, ...) so a change of machine load hits all runtimes alike.
    A runtime whose first run is slow gets fewer repetitions (fitting --cell-budget)."""
    cmds = commands(args, files["wasm"], files["native"])
    cells = {rt: Cell(expected) for rt in args.runtimes}
    fast = [rt for rt in args.runtimes if rt != "wasm-interp"]
    for rnd in range(args.reps):
        for rt in fast:
            c = cells[rt]
            if not c.ok and rnd > 0:
                continue
            if c.reps_wanted is not None and rnd >= c.reps_wanted:
                continue
            cmd, in_proc = cmds[rt]
            if not c.add(run_one(cmd, args.timeout, in_proc)):
                continue
            if rnd == 0:
                first = c.times[0] / 1e9
                c.reps_wanted = max(1, min(args.reps, int(args.cell_budget / max(first, 1e-9))))
    if "wasm-interp" in cells:
        c = cells["wasm-interp"]
        nat = cells.get("native")
        predicted = nat.median / 1e9 * interp_factor if nat is not None and nat.ok else None
        if predicted is not None and predicted > args.interp_limit:
            c.skip(f"would take about {predicted:.0f} s (native x {interp_factor:.0f}), "
                   f"over the {args.interp_limit:.0f} s limit")
        else:
            cmd, in_proc = cmds["wasm-interp"]
            timeout = args.interp_limit * 1.5
            r = run_one(cmd, timeout, in_proc)
            if r["status"] == "timeout":
                c.skip(f"stopped after {timeout:.0f} s")
            else:
                c.add(r)
    return cells


def run_large(args, files):
    """Load timing on the large module, plus a correctness check of its result."""
    info = {"wasm": files["wasm"], "module_bytes": os.path.getsize(files["wasm"])}
    nat = run_one([files["native"]], args.timeout, True)
    info["native_result"] = nat.get("result")
    if "ri-on" in args.runtimes or "ri-off" in args.runtimes:
        r = subprocess.run([args.ri, "--load-only", "--repeat", str(args.load_reps), files["wasm"]],
                           capture_output=True, text=True, timeout=args.timeout)
        m = re.search(r"code_bytes=(\d+) median_ns=(\d+).*ns_per_code_byte=([\d.]+)", r.stdout)
        if r.returncode != 0 or not m:
            info["ri_load_error"] = f"{describe_exit(r.returncode)}: {tail(r.stdout + r.stderr)}"
        else:
            info["code_bytes"] = int(m.group(1))
            info["ri_load_median_ns"] = int(m.group(2))
            info["ri_ns_per_code_byte"] = float(m.group(3))
        m = re.search(r"internal_code_bytes=(\d+) internal_code_ratio=([\d.]+)", r.stdout)
        if m:
            info["internal_code_bytes"] = int(m.group(1))
            info["internal_code_ratio"] = float(m.group(2))
        # The large module also makes a broad correctness check of the engine.
        run = run_one([args.ri, "--repeat", "1", files["wasm"], "run"], args.timeout, True)
        info["ri_result"] = run.get("result")
        info["ri_status"] = run["status"] if run["status"] != "ok" or run["result"] == nat.get("result") \
            else "ok"
        if run["status"] != "ok":
            info["ri_detail"] = run["detail"]
        elif run["result"] != nat.get("result"):
            info["ri_status"] = "wrong"
            info["ri_detail"] = f"returned {run['result']}, native returned {nat.get('result')}"
    if "node" in args.runtimes:
        r = subprocess.run([args.node, "--no-wasm-lazy-compilation", os.path.join(HERE, "node_time.mjs"),
                            "--compile", files["wasm"],
                            str(args.load_reps)], capture_output=True, text=True, timeout=args.timeout)
        m = re.search(r"median_ns=(\d+)", r.stdout)
        if m and "code_bytes" in info:
            info["node_compile_median_ns"] = int(m.group(1))
            info["node_ns_per_code_byte"] = int(m.group(1)) / info["code_bytes"]
        run = run_one([args.node, os.path.join(HERE, "node_time.mjs"), files["wasm"], "run"],
                      args.timeout, True)
        info["node_result"] = run.get("result")
    return info


# ---- reporting ----------------------------------------------------------------------------

def geomean(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def ratios(cells_by_prog, num, den):
    """{program: cells[num].median / cells[den].median or None}."""
    out = {}
    for p, cells in cells_by_prog.items():
        a, b = cells.get(num), cells.get(den)
        out[p] = a.median / b.median if a is not None and b is not None and a.ok and b.ok else None
    return out


def fmt_cell(cell, value, spec):
    if cell is None:
        return "-"
    if not cell.ok:
        return {"wrong": "WRONG", "crash": "CRASH", "timeout": "TIMEOUT", "error": "ERROR",
                "skipped": "skip"}.get(cell.status, cell.status)
    return format(value, spec) if value is not None else "-"


def print_table(title, header, rows, width=12):
    print(f"\n{title}")
    print(f"{'program':<10}" + "".join(f"{h:>{width}}" for h in header))
    for name, cells in rows:
        print(f"{name:<10}" + "".join(f"{c:>{width}}" for c in cells))


def summarise(args, cells_by_prog, set_name="the six programs"):
    progs = list(cells_by_prog)
    rts = args.runtimes
    summary = {"ratio_to_native": {}, "ratio_to_node": {}, "geomean_to_native": {}, "geomean_to_node": {}}
    if not progs:  # this set not run (--programs "" or --untuned "")
        return summary

    rows = []
    for p in progs:
        cells = cells_by_prog[p]
        rows.append((p, [fmt_cell(cells[rt], cells[rt].median / 1e6 if cells[rt].ok else None, ".1f")
                         for rt in rts]))
    reps = ", ".join(f"{rt} {max(len(cells_by_prog[p][rt].times) for p in progs)}" for rt in rts)
    print_table(f"{set_name[0].upper() + set_name[1:]}: median time of run() in ms (runs per program: {reps})",
                rts, rows)

    def ratio_table(title, den, key_r, key_g):
        cols = [rt for rt in rts if rt != den]
        rows = []
        per = {rt: ratios(cells_by_prog, rt, den) for rt in cols}
        for p in progs:
            rows.append((p, [fmt_cell(cells_by_prog[p][rt], per[rt][p], ".2f")
                             if cells_by_prog[p][den].ok else "-" for rt in cols]))
        gm_row = []
        for rt in cols:
            vals = [v for v in per[rt].values() if v is not None]
            g = geomean(vals)
            summary[key_r][rt] = per[rt]
            summary[key_g][rt] = {"geomean": g, "programs": len(vals)}
            if g is None:
                gm_row.append("-")
            else:
                gm_row.append(f"{g:.2f}" + ("" if len(vals) == len(progs) else f" ({len(vals)})"))
        rows.append(("geomean", gm_row))
        print_table(title, cols, rows)

    if "native" in rts:
        ratio_table(f"{set_name[0].upper() + set_name[1:]}: time relative to native gcc -O2 (lower is better)", "native",
                    "ratio_to_native", "geomean_to_native")
    if "node" in rts:
        ratio_table(f"{set_name[0].upper() + set_name[1:]}: time relative to Node's WebAssembly (lower is better)", "node",
                    "ratio_to_node", "geomean_to_node")
    meter = ratios(cells_by_prog, "ri-on", "ri-off") if {"ri-on", "ri-off"} <= set(rts) else {}
    gm = geomean(list(meter.values()))
    summary["metering_cost"] = {"per_program": meter, "geomean": gm}
    if meter:
        print("\nMetering cost, ri-on / ri-off: " +
              ", ".join(f"{p} {v:.3f}" if v is not None else f"{p} -" for p, v in meter.items()) +
              (f"; geomean {gm:.3f}" if gm is not None else ""))
    gas = {p: c["ri-on"].gas_used for p, c in cells_by_prog.items() if "ri-on" in c and c["ri-on"].ok}
    if gas:
        print("Gas used per run (ri-on): " + ", ".join(f"{p} {g:,}" for p, g in gas.items()))
        summary["gas_used"] = gas
    return summary


def print_failures(cells_by_prog):
    failures = []
    for p, cells in cells_by_prog.items():
        for rt, c in cells.items():
            if c.status != "ok":
                failures.append((p, rt, c.status, c.detail))
    if failures:
        print("\nNot measured:")
        for p, rt, st, d in failures:
            print(f"  {p} on {rt}: {st}: {d}")
    return [f for f in failures if f[2] != "skipped"]


def print_large(info):
    if not info:
        return
    code = f", code section {info['code_bytes']:,} bytes" if "code_bytes" in info else ""
    print(f"\nLoad+validate+compile of {os.path.basename(info['wasm'])} "
          f"({info['module_bytes']:,} bytes{code}):")
    if "ri_ns_per_code_byte" in info:
        v = info["ri_ns_per_code_byte"]
        print(f"  ri:   {v:.1f} ns per byte of code ({info['ri_load_median_ns'] / 1e6:.1f} ms), "
              f"target <= {TARGET_LOAD_NS_PER_BYTE:.0f}: {'met' if v <= TARGET_LOAD_NS_PER_BYTE else 'NOT met'}")
    elif "ri_load_error" in info:
        print(f"  ri:   load failed: {info['ri_load_error']}")
    if "node_ns_per_code_byte" in info:
        print(f"  node: {info['node_ns_per_code_byte']:.1f} ns per byte of code "
              "(new WebAssembly.Module, eager; V8's Liftoff baseline compiler on parallel threads; for reference)")
    if "internal_code_ratio" in info:
        v = info["internal_code_ratio"]
        print(f"  internal code size / code section: {v:.2f} ({info['internal_code_bytes']:,} bytes; "
              f"target <= {TARGET_CODE_RATIO:g}: {'met' if v <= TARGET_CODE_RATIO else 'NOT met'})")
    if "ri_status" in info:
        print(f"  result of run(): native {info.get('native_result')}, ri {info.get('ri_result')} "
              f"({info['ri_status']}{': ' + info['ri_detail'] if info.get('ri_detail') else ''})"
              + (f", node {info.get('node_result')}" if "node_result" in info else ""))


def print_targets(summary, large, untuned=None):
    print("\nTargets:")
    rows = []
    g = summary["geomean_to_native"].get("ri-on", {}).get("geomean")
    rows.append(("ri (metering on) / native, geomean", g, TARGET_RI_NATIVE))
    g = summary["geomean_to_node"].get("ri-on", {}).get("geomean")
    rows.append(("the six: ri (metering on) / Node, geomean", g, TARGET_RI_NODE))
    rows.append(("metering on / off, geomean", summary.get("metering_cost", {}).get("geomean"),
                 TARGET_METERING))
    rows.append(("load+validate+compile, ns per code byte", (large or {}).get("ri_ns_per_code_byte"),
                 TARGET_LOAD_NS_PER_BYTE))
    rows.append(("internal code / code section", (large or {}).get("internal_code_ratio"), TARGET_CODE_RATIO))
    if untuned:
        g = untuned["geomean_to_node"].get("ri-on", {}).get("geomean")
        rows.append(("untuned set: ri (metering on) / Node, geomean", g, TARGET_UNTUNED_NODE))
        per = [v for v in untuned["ratio_to_node"].get("ri-on", {}).values() if v is not None]
        rows.append(("untuned set: worst program, ri / Node", max(per) if per else None, TARGET_UNTUNED_WORST_NODE))
    for label, v, t in rows:
        if v is None:
            print(f"  {label:<50} {'n/a':>8}   (target <= {t:g})")
        else:
            print(f"  {label:<50} {v:>8.2f}   (target <= {t:g}) {'met' if v <= t else 'NOT met'}")
    targets = {label: {"value": v, "target": t, "met": (v <= t) if v is not None else None}
               for label, v, t in rows}
    return targets


def previous_best(results_dir, sizes, section="summary", sizes_key="sizes"):
    """The best (lowest) ri-on/native ratio per program over earlier results files made with
    the same program sizes. The ratio, not the time, so a busier or faster machine on
    another day moves it less."""
    best = {}
    try:
        names = sorted(n for n in os.listdir(results_dir) if n.startswith("bench-") and n.endswith(".json"))
    except OSError:
        return best
    for n in names:
        try:
            with open(os.path.join(results_dir, n)) as f:
                old = json.load(f)
        except (OSError, ValueError):
            continue
        if old.get("config", {}).get(sizes_key) is None:
            continue
        per = (old.get(section) or {}).get("ratio_to_native", {}).get("ri-on", {})
        for p, v in per.items():
            if v is not None and old["config"][sizes_key].get(p) == sizes.get(p):
                if p not in best or v < best[p][0]:
                    best[p] = (v, old.get("date"))
    return best


# Why a program may be over 1.5x its best earlier ratio on purpose (a fusion removed because it
# did not pay on the untuned set, ...): printed beside the flag. Empty: none is expected.
REGRESSION_REASONS = {
    # The kernel-shaped fusion families were removed (bench/README.md, "What each fusion family
    # gives"): they gained only on the kernel they were shaped after, nothing on the untuned set
    # or the language interpreters.
    "matmul": "float-memory fusions removed (a += x * y into memory: 2.05x on matmul only)",
    "sha256": "sha2 fusions removed (SHA-2's choice, majority, rotate-xor chains: 1.34x on sha256 only)",
    "nbody": "float-pair fusions removed (f64 arithmetic chains: 1.37x on nbody only)",
}


def print_regressions(summary, best, set_name="the six"):
    """No program slower than 1.5x its own previous best without a written reason."""
    now = summary["ratio_to_native"].get("ri-on", {})
    rows = []
    for p, v in now.items():
        if v is None or p not in best:
            continue
        b, date = best[p]
        rows.append({"program": p, "ratio": v, "best": b, "best_date": date, "factor": v / b,
                     "regressed": v / b > 1.5})
    if rows:
        print(f"\n{set_name}: ri (metering on) / native against the best earlier run in the results folder "
              "(a factor over 1.5 needs a written reason):")
        for r in rows:
            why = REGRESSION_REASONS.get(r["program"])
            flag = ("  REGRESSION" + (f" (reason: {why})" if why else " (no reason written)")) if r["regressed"] else ""
            print(f"  {r['program']:<9} {r['ratio']:7.2f} now, best {r['best']:7.2f} ({r['best_date']}): "
                  f"x{r['factor']:.2f}{flag}")
    return rows


# ---- the snapshot store (issue 6) ---------------------------------------------------------------

# Issue 6's targets: a save with 1% of the pages changed costs under 10% of a first save; 100
# snapshots of a slowly changing sandbox take under 5% of the space of 100 plain WSNP v1 files.
STORE_TARGET_SAVE_RATIO = 0.10
STORE_TARGET_SPACE_RATIO = 0.05
STORE_LABELS = {
    "first_save": "first save (16 MiB, 256 random pages)",
    "save_1pct": "save, 1% of pages changed",
    "restore_1pct_warm": "restore, 1% differ (page cache warm)",
    "restore_cold": "restore, cold (every page read + verified)",
}


def measure_store(args):
    """Runs ri-bench-store once: store-op lines (latencies), store-size (space), store-fill."""
    cmd = [args.ri_store, "--reps", str(args.store_reps), "--list-count", str(args.store_list_count)]
    info = {"status": "ok", "detail": "", "command": cmd, "ops": {}, "size": None, "fill": None}
    log(f"Snapshot store: {' '.join(cmd)}")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=max(args.timeout, 1800.0),
                           start_new_session=True)
    except subprocess.TimeoutExpired:
        info["status"], info["detail"] = "error", "no answer in time"
        return info
    except OSError as e:
        info["status"], info["detail"] = "error", f"cannot run {cmd[0]}: {e}"
        return info
    checked = False
    for line in r.stdout.splitlines():
        kv = parse_kv(line)
        if line.startswith("store-op "):
            info["ops"][kv["op"]] = {"runs": int(kv["runs"]),
                                     **{k: float(kv[k]) for k in ("median_ms", "min_ms", "max_ms")}}
        elif line.startswith("store-size "):
            info["size"] = {k: int(v) for k, v in kv.items()}
        elif line.startswith("store-fill "):
            info["fill"] = {"snapshots": int(kv["snapshots"]), "total_ms": float(kv["total_ms"]),
                            "per_snapshot_ms": float(kv["per_snapshot_ms"])}
        elif line.startswith("store-check ") and kv.get("roundtrip") == "ok":
            checked = True
    if r.returncode != 0:
        info["status"], info["detail"] = "error", f"{describe_exit(r.returncode)}: {tail(r.stdout + r.stderr)}"
        return info
    if not checked:
        info["status"], info["detail"] = "wrong", "the restored state was not checked equal to the saved one"
        return info
    ops, size = info["ops"], info["size"]
    if "first_save" in ops and "save_1pct" in ops:
        info["save_ratio"] = ops["save_1pct"]["median_ms"] / ops["first_save"]["median_ms"]
    if size and size.get("v1_bytes"):
        info["space_ratio"] = size["store_bytes"] / size["v1_bytes"]
        info["space_ratio_disk"] = size["store_disk_bytes"] / size["v1_bytes"]
    return info


def print_store(info):
    if info is None:
        return
    print("\nSnapshot store (issue 6): ri-bench-store")
    if info["status"] == "error":
        print(f"  not measured: {info['detail']}")
        return
    ops = info["ops"]
    print(f"{'operation':<46}{'runs':>6}{'median ms':>11}{'min ms':>9}{'max ms':>9}")
    for op, v in ops.items():
        label = STORE_LABELS.get(op, op.replace("_", " "))
        print(f"{label:<46}{v['runs']:>6}{v['median_ms']:>11.2f}{v['min_ms']:>9.2f}{v['max_ms']:>9.2f}")
    fill = info.get("fill")
    if fill:
        print(f"  (the {fill['snapshots']:,} snapshots for the list took {fill['per_snapshot_ms']:.2f} ms each to save)")
    size = info.get("size")
    if size:
        mib = 1024 * 1024
        print(f"  space of {size['snapshots']} snapshots (1% of pages changed between them): store "
              f"{size['store_bytes'] / mib:.1f} MiB ({size['store_disk_bytes'] / mib:.1f} MiB on disk, "
              f"{size['blobs']} blobs), plain WSNP v1 files {size['v1_bytes'] / mib:.1f} MiB, "
              f"WSNP v2 files {size['v2_bytes'] / mib:.1f} MiB")
    verdicts = []
    if "save_ratio" in info:
        ok = info["save_ratio"] < STORE_TARGET_SAVE_RATIO
        verdicts.append(f"1%-changed save / first save = {info['save_ratio'] * 100:.1f}% "
                        f"(target < {STORE_TARGET_SAVE_RATIO * 100:.0f}%: {'met' if ok else 'NOT met'})")
    if "space_ratio" in info:
        ok = info["space_ratio"] < STORE_TARGET_SPACE_RATIO
        verdicts.append(f"store / plain v1 files = {info['space_ratio'] * 100:.2f}% "
                        f"({info['space_ratio_disk'] * 100:.2f}% counting disk blocks; target < "
                        f"{STORE_TARGET_SPACE_RATIO * 100:.0f}%: {'met' if ok else 'NOT met'})")
    for v in verdicts:
        print("  " + v)
    if info["status"] != "ok":
        print(f"  WRONG: {info['detail']}")
    else:
        print("  checked: a restored state is byte for byte the saved one")


# ---- snapshots, rollback and fork (issue 5) ---------------------------------------------------

def measure_snapshot(args):
    """Runs ri-bench-snapshot once. It measures memcpy in the same run and prints its own table
    and target verdicts; the snapbench-* lines are kept for the results file."""
    cmd = [args.ri_snapshot, "--reps", str(args.snapshot_reps)]
    info = {"status": "ok", "detail": "", "command": cmd, "ops": {}, "sizes": {}, "targets": {}, "table": []}
    log(f"Snapshots and fork: {' '.join(cmd)}")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=max(args.timeout, 1800.0),
                           start_new_session=True)
    except subprocess.TimeoutExpired:
        info["status"], info["detail"] = "error", "no answer in time"
        return info
    except OSError as e:
        info["status"], info["detail"] = "error", f"cannot run {cmd[0]}: {e}"
        return info
    checks = 0
    for line in r.stdout.splitlines():
        if line.startswith("snapbench-op "):
            kv = parse_kv(line)
            info["ops"].setdefault(kv["op"], {})[kv["pages"]] = {
                k: float(kv[k]) for k in ("median_us", "min_us", "max_us")}
        elif line.startswith("snapbench-size "):
            kv = parse_kv(line)
            info["sizes"][kv["pages"]] = {k: int(v) for k, v in kv.items() if k != "pages"}
        elif line.startswith("snapbench-target "):
            name = line[len("snapbench-target name="):line.rfind(" met=")]
            kv = parse_kv("target" + line[line.rfind(" met="):])
            info["targets"][name] = {"met": kv["met"] == "1", "value": float(kv["value"])}
        elif line.startswith("snapbench-check ") and "rollback=ok" in line:
            checks += 1
        elif not line.startswith("snapbench-"):
            info["table"].append(line)
    if r.returncode != 0:
        info["status"], info["detail"] = "error", f"{describe_exit(r.returncode)}: {tail(r.stdout + r.stderr)}"
    elif checks != 3:
        info["status"], info["detail"] = "wrong", "a rollback did not give back the snapshot's bytes"
    return info


def print_snapshot(info):
    if info is None:
        return
    print("\nSnapshots, rollback and fork (issue 5): ri-bench-snapshot")
    if info["status"] == "error":
        print(f"  not measured: {info['detail']}")
        return
    for line in info["table"]:
        if line.strip():
            print(line)
    if info["status"] != "ok":
        print(f"  WRONG: {info['detail']}")
    else:
        print("  checked: after each size's runs, a rollback gives back the snapshot's exact bytes")


# ---- sandbox operations (issue 4) -------------------------------------------------------------

def parse_kv(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def run_sandbox_tool(cmd, timeout):
    """Runs ri-bench-sandbox or sandbox_ops.mjs once. Returns (check dict, {op: line dict},
    error text or None)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        return None, {}, f"no answer within {timeout:.0f} s"
    except OSError as e:
        return None, {}, f"cannot run {cmd[0]}: {e}"
    check, ops = None, {}
    for line in r.stdout.splitlines():
        if line.startswith("sandbox-check "):
            check = parse_kv(line)
        elif line.startswith("sandbox-op "):
            kv = parse_kv(line)
            ops[kv["op"]] = {"runs": int(kv["runs"]), "warmup": int(kv["warmup"]),
                             **{k: float(kv[k]) for k in ("median_us", "p99_us", "min_us", "mean_us")}}
        elif line.startswith("sandbox-bench "):
            kv = parse_kv(line)
            if "timer_overhead_us" in kv:
                ops["_timer_overhead_us"] = float(kv["timer_overhead_us"])
    if r.returncode != 0:
        return check, ops, f"{describe_exit(r.returncode)}: {tail(r.stdout + r.stderr)}"
    if check is None:
        return check, ops, f"no sandbox-check line in the output: {tail(r.stdout + r.stderr)}"
    return check, ops, None


def measure_sandbox(args):
    """--sandbox-rounds rounds, each running ri-bench-sandbox and then sandbox_ops.mjs (so a
    change in machine load hits both); per operation the median of the rounds' medians and of
    their p99s. Both must agree on the results and write the same snapshot bytes."""
    sides = {"ri": [args.ri_sandbox, "--scale", str(args.sandbox_scale), args.sandbox_wasm]}
    if "node" in args.runtimes:
        sides["node"] = [args.node, os.path.join(HERE, "sandbox_ops.mjs"), "--scale", str(args.sandbox_scale),
                         args.sandbox_wasm]
    info = {"status": "ok", "detail": "", "module": args.sandbox_wasm, "scale": args.sandbox_scale,
            "rounds": args.sandbox_rounds, "checks": {}, "timer_overhead_us": {},
            "per_round": {side: [] for side in sides}, "ops": {}}
    # One run takes seconds (Node about 5 s at scale 1); a hung one is stopped well before --timeout.
    timeout = min(args.timeout, 120.0 * max(1.0, args.sandbox_scale))
    for rnd in range(args.sandbox_rounds):
        for side, cmd in sides.items():
            log(f"Sandbox operations on {side}, round {rnd + 1} of {args.sandbox_rounds}")
            check, ops, err = run_sandbox_tool(cmd, timeout)
            if err:
                info["status"], info["detail"] = "error", f"{side}: {err}"
                return info
            info["timer_overhead_us"][side] = ops.pop("_timer_overhead_us", None)
            info["checks"][side] = check
            info["per_round"][side].append(ops)
    ri_check = info["checks"]["ri"]
    want = {"add": "42", "fib20": "6765", "fib20_gas": "21", "restore_roundtrip": "ok"}
    wrong = [f"{k}={ri_check.get(k)} (expected {v})" for k, v in want.items() if ri_check.get(k) != v]
    if wrong:
        info["status"], info["detail"] = "wrong", "ri: " + ", ".join(wrong)
    elif "node" in info["checks"] and info["checks"]["node"] != ri_check:
        diff = [f"{k}: ri {ri_check.get(k)}, node {info['checks']['node'].get(k)}"
                for k in sorted(set(ri_check) | set(info["checks"]["node"]))
                if ri_check.get(k) != info["checks"]["node"].get(k)]
        info["status"], info["detail"] = "wrong", "ri and node disagree: " + "; ".join(diff)
    for op in SANDBOX_OPS:
        row = {}
        for side, rounds in info["per_round"].items():
            name = SANDBOX_NODE_OP.get(op, op) if side == "node" else op
            got = [r[name] for r in rounds if name in r]
            if got:
                row[side] = {"median_us": statistics.median(g["median_us"] for g in got),
                             "p99_us": statistics.median(g["p99_us"] for g in got),
                             "runs": got[0]["runs"], "rounds": len(got)}
        if "ri" in row and "node" in row:
            row["ratio_ri_node"] = row["ri"]["median_us"] / row["node"]["median_us"]
            if op in SANDBOX_NODE_OP:
                row["node_op"] = SANDBOX_NODE_OP[op]
        if "ri" in row:
            row["target_us"] = SANDBOX_TARGET_US[op]
            row["ri_p99_within_target"] = row["ri"]["p99_us"] < SANDBOX_TARGET_US[op]
        if row:
            info["ops"][op] = row
    differ = [op for op, v in info["ops"].items() if op not in SANDBOX_NODE_OP and "ri" in v and "node" in v
              and v["ri"]["runs"] != v["node"]["runs"]]
    if differ and info["status"] == "ok":
        info["status"], info["detail"] = "wrong", ("ri and node ran different iteration counts for "
                                                   + ", ".join(differ) + " (their OPS tables differ)")
    direct = [v["ratio_ri_node"] for op, v in info["ops"].items()
              if "ratio_ri_node" in v and op not in SANDBOX_NODE_OP]
    info["geomean_ri_node"] = geomean(direct)
    return info


def print_sandbox(info):
    if info is None:
        return
    against = ("against sandbox_ops.mjs on Node" if "node" in info["per_round"]
               else "(Node not run: not in --runtimes)")
    print(f"\nSandbox operations (issue 4): ri-bench-sandbox {against}, {info['rounds']} round(s) each")
    if info["status"] == "error":
        print(f"  not measured: {info['detail']}")
        return
    def us(v):
        return f"{v:.1f}" if v >= 100 else f"{v:.2f}"
    print(f"{'operation':<22}{'iterations':>11}{'ri median':>11}{'ri p99':>10}"
          f"{'node median':>13}{'node p99':>10}{'ri/node':>9}")
    for op in SANDBOX_OPS:
        row = info["ops"].get(op)
        if not row:
            continue
        ri, node = row.get("ri"), row.get("node")
        cells = [f"{ri['runs'] if ri else '-':>11}",
                 f"{us(ri['median_us']) if ri else '-':>11}", f"{us(ri['p99_us']) if ri else '-':>10}",
                 f"{us(node['median_us']) if node else '-':>13}", f"{us(node['p99_us']) if node else '-':>10}",
                 f"{row['ratio_ri_node']:>9.2f}" if "ratio_ri_node" in row else f"{'-':>9}"]
        print(f"{SANDBOX_LABELS[op]:<22}" + "".join(cells))
    g = info.get("geomean_ri_node")
    if g is not None:
        print(f"{'geomean':<22}{'':>11}{'':>11}{'':>10}{'':>13}{'':>10}{g:>9.2f}")
    print("  times in microseconds: each operation timed alone, median and p99 over the iterations "
          "(the median of the rounds' values);")
    print("  'typed call' rows are ri_sandbox_call (no JSON payload), compared with Node's execute and "
          "left out of the geomean. "
          f"Timer overhead per reading: "
          + ", ".join(f"{k} {v:.3f}" for k, v in info["timer_overhead_us"].items() if v is not None) + " us")
    over = [SANDBOX_LABELS[op].strip() for op, v in info["ops"].items() if v.get("ri_p99_within_target") is False]
    print("  seed 001's targets (create < 5 ms, load < 50 ms, execute < 50 ms, snapshot and restore "
          "< 10 ms), ri p99: " + ("all met" if not over else "NOT met by " + ", ".join(over)))
    if info["status"] != "ok":
        print(f"  WRONG: {info['detail']}")
    else:
        c = info["checks"]["ri"]
        print(f"  checked: add 42, fib(20) 6765 for 21 gas, snapshots of {int(c['snapshot_1p_bytes']):,} "
              f"and {int(c['snapshot_256p_bytes']):,} bytes" +
              (", byte-identical on ri and Node" if "node" in info["checks"] else ""))


# ---- results file and chart -----------------------------------------------------------------

def tool_version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        text = (r.stdout or r.stderr).strip()
        return text.splitlines()[0] if text else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def machine_facts():
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"MemTotal:\s+(\d+) kB", f.read())
            mem = int(m.group(1)) * 1024 if m else None
    except OSError:
        pass
    return {"nproc": tool_version(["nproc"]), "cpu_model": cpu, "mem_bytes": mem,
            "kernel": " ".join(os.uname()[i] for i in (0, 2, 4)),
            "loadavg_at_start": os.getloadavg()}


def git_facts():
    # Read-only git queries: which engine was measured.
    head = tool_version(["git", "-C", ROOT, "rev-parse", "HEAD"])
    dirty = tool_version(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
    return {"commit": head, "dirty": bool(dirty)}


def draw_chart(args, summary, png, stamp):
    """A clustered bar chart of the ratios to native (log scale: the runtimes span three
    orders of magnitude), one group per program plus the geometric mean."""
    cols = [rt for rt in args.runtimes if rt != "native"]
    per = summary["ratio_to_native"]
    gms = summary["geomean_to_native"]
    dat = os.path.join(args.build_dir, "chart.dat")
    with open(dat, "w") as f:
        for p in args.programs:
            f.write(p + " " + " ".join(
                f"{per[rt][p]:.4f}" if per.get(rt, {}).get(p) is not None else "?" for rt in cols) + "\n")
        # A geometric mean over fewer programs than the others would mislead in a picture.
        f.write("geomean " + " ".join(
            f"{gms[rt]['geomean']:.4f}"
            if gms.get(rt, {}).get("geomean") is not None and gms[rt]["programs"] == len(args.programs)
            else "?" for rt in cols) + "\n")
    script = f"""
set terminal pngcairo size 1100,600 font "sans,10"
set output "{png}"
set title "ri-sandbox benchmarks, {stamp}: time relative to native gcc -O2 (lower is better)"
set datafile missing "?"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [0.5:*]
set ytics (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
set grid ytics
set key top left
set ylabel "time / native"
set arrow from graph 0, first {TARGET_RI_NATIVE} to graph 1, first {TARGET_RI_NATIVE} nohead dt 2 lc rgb "red" front
set label "issue 3 target, ri metering on: {TARGET_RI_NATIVE}" at graph 0.01, first {TARGET_RI_NATIVE * 1.12} tc rgb "red" front
n = {len(cols)}
names = "{" ".join(cols)}"
# Each bar's value above it; bar j of group g sits at g + (j - (n-1)/2) / (n + gap).
plot for [i=2:n+1] "{dat}" using i:xtic(1) title word(names, i - 1), \
     for [i=2:n+1] "{dat}" using ($0 + (i - 2 - (n - 1) / 2.0) / (n + 1)):(column(i) * 1.08):(sprintf("%.1f", column(i))) \
         with labels font "sans,8" notitle
"""
    r = subprocess.run([args.gnuplot], input=script, capture_output=True, text=True)
    if r.returncode != 0:
        log(f"gnuplot failed, no chart: {tail(r.stderr)}")
        return False
    return True


# ---- main -----------------------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ri", default=os.path.join(ROOT, "build", "ri-bench-run"),
                    help="the ri-bench-run program (default: build/ri-bench-run)")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "bench"),
                    help="the shared bench folder with sizes.mk and src/")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench"),
                    help="where the programs are built (default: build/bench)")
    ap.add_argument("--results", default=os.path.join(HERE, "results"),
                    help="where the JSON results and the chart go (default: bench/results)")
    ap.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated subset")
    ap.add_argument("--untuned", default=",".join(UNTUNED),
                    help="comma-separated subset of the untuned set (bench/heldout); empty: none")
    ap.add_argument("--runtimes", default=",".join(RUNTIMES), help="comma-separated subset")
    ap.add_argument("--reps", type=int, default=5, help="runs per program and runtime (default 5)")
    ap.add_argument("--cell-budget", type=float, default=25.0,
                    help="seconds one runtime may spend on one program; a slower runtime gets "
                         "fewer runs (default 25)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds before one run counts as hung (default 300)")
    ap.add_argument("--interp-limit", type=float, default=60.0,
                    help="wasm-interp runs once; a program it would take longer than this "
                         "(predicted from native time) is skipped (default 60)")
    ap.add_argument("--interp-factor", type=float, default=180.0,
                    help="initial guess of wasm-interp's slowdown over native (default 180); "
                         "replaced by the worst ratio seen once one program ran")
    ap.add_argument("--large-funcs", type=int, default=2500,
                    help="functions in the generated large module for load timing (default 2500)")
    ap.add_argument("--load-reps", type=int, default=5, help="loads of the large module (default 5)")
    ap.add_argument("--no-large", action="store_true", help="skip the large-module load timing")
    ap.add_argument("--only", choices=["engine", "sandbox", "store", "snapshot"],
                    help="run only the engine programs (with the large module), only the sandbox "
                         "operations, only the snapshot store, or only snapshots/rollback/fork "
                         "(default: all)")
    ap.add_argument("--ri-snapshot", default=os.path.join(ROOT, "build", "ri-bench-snapshot"),
                    help="the ri-bench-snapshot program (default: build/ri-bench-snapshot)")
    ap.add_argument("--snapshot-reps", type=int, default=9,
                    help="runs of each snapshot/fork measurement, median reported (default 9)")
    ap.add_argument("--ri-store", default=os.path.join(ROOT, "build", "ri-bench-store"),
                    help="the ri-bench-store program (default: build/ri-bench-store)")
    ap.add_argument("--store-reps", type=int, default=5,
                    help="repetitions of each store latency and list measurement (default 5)")
    ap.add_argument("--store-list-count", type=int, default=10000,
                    help="snapshots in the store for the list timing (default 10000)")
    ap.add_argument("--ri-sandbox", default=os.path.join(ROOT, "build", "ri-bench-sandbox"),
                    help="the ri-bench-sandbox program (default: build/ri-bench-sandbox)")
    ap.add_argument("--sandbox-wasm",
                    help="its module (default: bench/sandbox/sandbox_ops.wasm next to --ri-sandbox)")
    ap.add_argument("--sandbox-scale", type=float, default=1.0,
                    help="multiplies the sandbox operations' iteration counts (default 1)")
    ap.add_argument("--sandbox-rounds", type=int, default=5,
                    help="runs of each side of the sandbox operations, interleaved (default 5)")
    ap.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    ap.add_argument("--clang", default="clang-19")
    ap.add_argument("--gcc", default="gcc")
    ap.add_argument("--node", default="node")
    ap.add_argument("--wasm-interp", default="wasm-interp")
    ap.add_argument("--gnuplot", default="gnuplot")
    # `make bench BENCH_ARGS=...` passes options through the environment.
    argv = sys.argv[1:] + shlex.split(os.environ.get("BENCH_ARGS", ""))
    args = ap.parse_args(argv)
    args.programs = [p for p in args.programs.split(",") if p]
    args.untuned = [p for p in args.untuned.split(",") if p]
    bad_untuned = [p for p in args.untuned if p not in UNTUNED]
    if bad_untuned:
        ap.error(f"unknown untuned program: {', '.join(bad_untuned)} (untuned: {', '.join(UNTUNED)})")
    args.runtimes = [r for r in args.runtimes.split(",") if r]
    bad = [p for p in args.programs if p not in PROGRAMS] + [r for r in args.runtimes if r not in RUNTIMES]
    if bad:
        ap.error(f"unknown program or runtime: {', '.join(bad)} "
                 f"(programs: {', '.join(PROGRAMS)}; runtimes: {', '.join(RUNTIMES)})")
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.sandbox_rounds < 1:
        ap.error("--sandbox-rounds must be at least 1")
    if not 0 < args.sandbox_scale <= 1000:
        ap.error("--sandbox-scale must be in (0, 1000]")
    if args.store_reps < 1 or args.store_list_count < 1:
        ap.error("--store-reps and --store-list-count must be at least 1")
    args.engine = args.only in (None, "engine")
    args.sandbox = args.only in (None, "sandbox")
    args.store = args.only in (None, "store")
    args.snapshot = args.only in (None, "snapshot")
    if not 1 <= args.snapshot_reps <= 64:
        ap.error("--snapshot-reps must be between 1 and 64")
    if args.sandbox_wasm is None:
        args.sandbox_wasm = os.path.join(os.path.dirname(os.path.abspath(args.ri_sandbox)),
                                         "bench", "sandbox", "sandbox_ops.wasm")
    # The ratio tables need their reference column.
    args.runtimes = [r for r in RUNTIMES if r in args.runtimes]
    return args


def check_tools(args):
    need = {"clang-19": args.clang, "gcc": args.gcc} if args.engine else {}
    if "node" in args.runtimes:
        need["node"] = args.node
    if "wasm-interp" in args.runtimes:
        need["wasm-interp"] = args.wasm_interp
    for what, prog in need.items():
        path = shutil.which(prog)
        if not path:
            raise BenchError(f"{what} not found (looked for '{prog}'); see bench/README.md")
    if args.sandbox:
        if not (os.path.isfile(args.ri_sandbox) and os.access(args.ri_sandbox, os.X_OK)):
            raise BenchError(f"{args.ri_sandbox} is not built; run `make` first, pass --ri-sandbox PATH "
                             "or --only engine")
        if not os.path.isfile(args.sandbox_wasm):
            raise BenchError(f"{args.sandbox_wasm} is missing (built with ri-bench-sandbox); "
                             "pass --sandbox-wasm PATH")
        args.ri_sandbox = os.path.abspath(args.ri_sandbox)
        args.sandbox_wasm = os.path.abspath(args.sandbox_wasm)
    if args.store:
        if not (os.path.isfile(args.ri_store) and os.access(args.ri_store, os.X_OK)):
            raise BenchError(f"{args.ri_store} is not built; run `make` first, pass --ri-store PATH "
                             "or --only engine|sandbox")
        args.ri_store = os.path.abspath(args.ri_store)
    if args.snapshot:
        if not (os.path.isfile(args.ri_snapshot) and os.access(args.ri_snapshot, os.X_OK)):
            raise BenchError(f"{args.ri_snapshot} is not built; run `make` first, pass --ri-snapshot PATH "
                             "or --only engine|sandbox|store")
        args.ri_snapshot = os.path.abspath(args.ri_snapshot)
    if args.engine and any(r.startswith("ri") for r in args.runtimes):
        if not (os.path.isfile(args.ri) and os.access(args.ri, os.X_OK)):
            raise BenchError(f"{args.ri} is not built; run `make` first or pass --ri PATH")
        args.ri = os.path.abspath(args.ri)
    if args.engine and not args.no_chart and not shutil.which(args.gnuplot):
        log(f"gnuplot not found ('{args.gnuplot}'): no chart (apt-get install gnuplot-nox)")
        args.no_chart = True


def main():
    args = parse_args()
    started = time.time()
    now = datetime.datetime.now().astimezone()
    stamp = now.strftime("%Y%m%d-%H%M%S")
    defs, sums, built, large_files = {}, {}, {}, None
    untuned_built, untuned_expected = {}, {}
    try:
        check_tools(args)
        if args.engine:
            defs = parse_sizes(os.path.join(args.shared, "sizes.mk"))
            sums = parse_checksums(os.path.join(args.shared, "README.md"))
            os.makedirs(args.build_dir, exist_ok=True)
            log(f"Building into {args.build_dir}")
            built = build_programs(args, defs)
            untuned_built, untuned_expected = build_untuned(args)
            large_files = None if args.no_large else build_large(args)
    except BenchError as e:
        log(f"bench: {e}")
        return 2

    cells_by_prog = {}
    interp_factor = args.interp_factor
    for p in args.programs if args.engine else []:
        log(f"Running {p} ({', '.join(args.runtimes)})")
        cells = measure_program(args, p, built[p], sums[p], interp_factor)
        cells_by_prog[p] = cells
        wi, nat = cells.get("wasm-interp"), cells.get("native")
        if wi is not None and nat is not None and wi.ok and nat.ok:
            # Later predictions use what wasm-interp really did here (the worst so far).
            seen = wi.median / nat.median
            interp_factor = seen if interp_factor == args.interp_factor else max(interp_factor, seen)
    untuned_cells = {}
    for p in args.untuned if args.engine else []:
        log(f"Running {p} (untuned; {', '.join(args.runtimes)})")
        untuned_cells[p] = measure_program(args, p, untuned_built[p], untuned_expected[p], interp_factor)
    large = None
    if large_files:
        log("Timing load+validate+compile of the large module")
        large = run_large(args, large_files)
    sandbox = measure_sandbox(args) if args.sandbox else None
    store = measure_store(args) if args.store else None
    snapshot = measure_snapshot(args) if args.snapshot else None

    print(f"\nri-sandbox benchmarks, {now.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    facts = machine_facts()
    print(f"machine: {facts['cpu_model']}, {facts['nproc']} CPUs, load average at start "
          f"{facts['loadavg_at_start'][0]:.2f}")
    summary, failures, targets, regressions, untuned_summary = {}, [], {}, [], None
    if args.engine:
        print("times: the run() call alone, timed inside each process (wasm-interp: whole process)")
        summary = summarise(args, cells_by_prog)
        untuned_summary = summarise(args, untuned_cells, "the untuned set") if untuned_cells else None
        failures = print_failures(cells_by_prog) + print_failures(untuned_cells)
        print_large(large)
        targets = print_targets(summary, large, untuned_summary)
        regressions = print_regressions(summary, previous_best(args.results, {p: defs[p] for p in args.programs}))
        untuned_sizes = {p: source_digest(os.path.join(HELDOUT, p + ".c")) for p in args.untuned}
        regressions += print_regressions(untuned_summary or {"ratio_to_native": {}},
                                         previous_best(args.results, untuned_sizes, "untuned_summary",
                                                       "untuned_sizes"), "the untuned set")
    print_sandbox(sandbox)
    print_store(store)
    print_snapshot(snapshot)

    os.makedirs(args.results, exist_ok=True)
    base = os.path.join(args.results, f"bench-{stamp}")
    png = base + ".png"
    charted = False
    # The chart shows the six programs: none measured, nothing to draw.
    if args.engine and not args.no_chart and "native" in args.runtimes and args.programs:
        charted = draw_chart(args, summary, png, now.strftime("%Y-%m-%d %H:%M"))
    results = {
        "date": now.isoformat(timespec="seconds"),
        "machine": facts,
        "versions": {
            "gcc": tool_version([args.gcc, "--version"]),
            "clang": tool_version([args.clang, "--version"]),
            "node": tool_version([args.node, "--version"]),
            "wasm-interp": tool_version([args.wasm_interp, "--version"]),
            "gnuplot": tool_version([args.gnuplot, "--version"]),
            "python": sys.version.split()[0],
            "ri": git_facts(),
        },
        "config": {"reps": args.reps, "cell_budget_s": args.cell_budget, "timeout_s": args.timeout,
                   "interp_limit_s": args.interp_limit, "large_funcs": args.large_funcs,
                   "programs": args.programs if args.engine else [], "runtimes": args.runtimes,
                   "sections": [n for n, on in (("engine", args.engine), ("sandbox", args.sandbox),
                                                ("store", args.store), ("snapshot", args.snapshot)) if on],
                   "sizes": {p: defs[p] for p in args.programs} if args.engine else {},
                   "untuned_sizes": ({p: source_digest(os.path.join(HELDOUT, p + ".c")) for p in args.untuned}
                                     if args.engine else {}),
                   "timing": "run() call timed in-process; wasm-interp: process wall time"},
        "programs": {p: {"expected": sums[p], "runtimes": {rt: c.to_json() for rt, c in cells.items()}}
                     for p, cells in cells_by_prog.items()},
        "summary": summary,
        "untuned": {p: {"expected": untuned_expected[p], "runtimes": {rt: c.to_json() for rt, c in cells.items()}}
                    for p, cells in untuned_cells.items()},
        "untuned_summary": untuned_summary,
        "large_module": large,
        "targets": targets,
        "against_previous_best": regressions,
        "sandbox_ops": sandbox,
        "snapshot_store": store,
        "snapshots_fork": snapshot,
        "chart": os.path.basename(png) if charted else None,
        "duration_s": round(time.time() - started, 1),
    }
    with open(base + ".json", "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"\nResults: {base}.json" + (f"\nChart:   {png}" if charted else ""))
    print(f"Total time: {time.time() - started:.0f} s")
    bad_large = large is not None and large.get("ri_status") not in (None, "ok")
    bad_sandbox = sandbox is not None and sandbox["status"] != "ok"
    bad_store = store is not None and store["status"] != "ok"
    bad_snapshot = snapshot is not None and snapshot["status"] != "ok"
    if failures or bad_large or bad_sandbox or bad_store or bad_snapshot:
        print("\nFAILED: some runtime crashed or returned a wrong result (see above)")
        return 1
    return 0


# ---- issue 7: `--only server` runs bench/server_bench.py (the sandbox server over loopback
# WebSockets; its options pass through, e.g. --ri build/ri --idle 1000). It needs Debian's
# python3-websockets, hence /usr/bin/python3.
_main_without_server = main


def _server_after_the_rest(argv):
    """A full run (no --only) ends with the server's benchmarks, on the `ri` built next to
    the --ri runner, their figures in bench/results/server-DATE.json."""
    ri_run = None
    for i, a in enumerate(argv):
        if a.startswith("--ri="):
            ri_run = a.split("=", 1)[1]
        elif a == "--ri" and i + 1 < len(argv):
            ri_run = argv[i + 1]
    ri = os.path.join(os.path.dirname(os.path.abspath(ri_run)), "ri") if ri_run else None
    cmd = ["/usr/bin/python3", os.path.join(HERE, "server_bench.py")]
    if ri and os.path.exists(ri):
        cmd += ["--ri", ri]
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    cmd += ["--json", os.path.join(HERE, "results", time.strftime("server-%Y%m%d-%H%M%S.json"))]
    print("\nServer (issue 7): " + " ".join(cmd), flush=True)
    return subprocess.call(cmd)


def main():  # noqa: F811 (wraps the main above)
    argv = sys.argv[1:] + shlex.split(os.environ.get("BENCH_ARGS", ""))
    for i, a in enumerate(argv):
        if a == "--only=server" or (a == "--only" and argv[i + 1:i + 2] == ["server"]):
            rest = argv[:i] + argv[i + (1 if "=" in a else 2):]
            return subprocess.call(["/usr/bin/python3", os.path.join(HERE, "server_bench.py")] + rest)
    rc = _main_without_server()
    if not any(a == "--only" or a.startswith("--only=") for a in argv):
        rc = _server_after_the_rest(argv) or rc
    return rc


if __name__ == "__main__":
    sys.exit(main())
