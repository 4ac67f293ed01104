#!/usr/bin/env python3
"""What each fusion family of the compiler gives, measured on the benchmark programs.

For every program (the six and the untuned set, as `make bench` built them in build/bench) and
every fusion family (ri_fusion, ri/engine.h), runs the program with all families on and with that
family off, interleaved, REPS times each, and prints the ratio of the fastest runs: above 1, the
family pays on that program. Then a table per family: geometric mean and best over the six and
over the untuned set (programs no fusion was shaped after). Results must agree between the two
compilations (the family changes speed only).

Times are the child's user CPU time, not wall time: on a shared machine the time a run waits
preempted is left out (caches and a sibling hyperthread still make ±5-10% noise per cell).

    bench/fusion_families.py [--reps N] [--families a,b] [--programs p,q] [--json OUT]
"""
import argparse
import glob
import json
import math
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FAMILIES = ["immediate", "compare-branch", "counter-branch", "load-branch", "address", "memory-pair", "int-pair",
            "int-imm-pair", "float-pair", "float-memory", "sha2", "accumulator", "all"]


def run(ri, wasm, off):
    cmd = [ri, wasm, "run"] + (["--fusions-off", off] if off else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    if r.returncode != 0:
        raise SystemExit(f"fusion_families: {' '.join(cmd)} failed: {r.stderr.strip()[-500:]}")
    return after - before, r.stdout.strip()


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ri", default=os.path.join(ROOT, "build", "ri-bench-run"))
    ap.add_argument("--modules", default=os.path.join(ROOT, "build", "bench"),
                    help="where make bench built the programs (*.wasm)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--programs", default="", help="comma-separated names (default: every *.wasm)")
    ap.add_argument("--json", help="write the ratios here")
    args = ap.parse_args()
    wasms = sorted(glob.glob(os.path.join(args.modules, "*.wasm")))
    if args.programs:
        wanted = set(args.programs.split(","))
        wasms = [w for w in wasms if os.path.basename(w)[:-5] in wanted]
    if not wasms:
        print(f"fusion_families: no programs in {args.modules} (run make bench first)", file=sys.stderr)
        return 2
    families = [f for f in args.families.split(",") if f]
    ratios = {}
    for wasm in wasms:
        name = os.path.basename(wasm)[:-5]
        ratios[name] = {}
        for fam in families:
            on, off = [], []
            for _ in range(args.reps):
                t_on, r_on = run(args.ri, wasm, None)
                t_off, r_off = run(args.ri, wasm, fam)
                if r_on != r_off:
                    raise SystemExit(f"fusion_families: {name} returns {r_on} fused, {r_off} with {fam} off")
                on.append(t_on)
                off.append(t_off)
            ratios[name][fam] = min(off) / min(on)
            print(f"{name:20s} {fam:15s} {ratios[name][fam]:.3f}", flush=True)
    untuned = [p for p in ratios if p.startswith("untuned-")]
    six = [p for p in ratios if p not in untuned]
    print("\nfamily off / all on (above 1: the family pays)")
    print(f"{'family':15s} {'six geomean':>12s} {'six best':>18s} {'untuned geomean':>16s} {'untuned best':>22s}")
    for fam in families:
        s = [(ratios[p][fam], p) for p in six]
        u = [(ratios[p][fam], p[len('untuned-'):]) for p in untuned]
        best_s = max(s) if s else (float("nan"), "")
        best_u = max(u) if u else (float("nan"), "")
        print(f"{fam:15s} {geomean([x for x, _ in s]):12.3f} {best_s[0]:8.3f} {best_s[1]:>9s} "
              f"{geomean([x for x, _ in u]):16.3f} {best_u[0]:8.3f} {best_u[1]:>13s}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(ratios, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
