#!/usr/bin/env python3
"""Operation coverage (ctest label opcov; needs a build configured with -DRI_OP_COVERAGE=ON).

Runs the spec suite's scripts (metered with NaN canonicalisation, without it, and unmetered)
and the engine's unit tests that run the tests/wat programs, in the coverage build, each
process writing its dispatch counts per operation (src/engine/opcov.h); then fails if an
operation was never dispatched, unless tests/opcov/unreached.txt lists it with its reason.

    opcov.py BUILD_DIR TESTSUITE_DIR [--report]
"""
import glob
import os
import subprocess
import sys
import tempfile

# The unit tests that run tests/wat programs on the engine (fast, engine only).
UNIT_TESTS = ["test_exec", "test_fusion", "test_acc", "test_float_branch", "test_load_branch",
              "test_operands", "test_suspend", "test_table_gas", "test_index_load", "test_emsc_invoke", "test_pair",
              "test_multi_memory", "test_tail_call", "test_exceptions", "test_simd_suspend", "test_try_table",
              "test_simd_fast", "test_opcol"]


def read_allowed(path):
    allowed = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)
            name = line[0].strip()
            if name:
                allowed[name] = line[1].strip() if len(line) > 1 else ""
    return allowed


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, suite = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    report = "--report" in sys.argv
    here = os.path.dirname(os.path.abspath(__file__))
    allowed = read_allowed(os.path.join(here, "unreached.txt"))
    scripts = sorted(glob.glob(os.path.join(suite, "core", "*.wast")))
    scripts += sorted(glob.glob(os.path.join(suite, "simd", "*.wast")))  # the SIMD family
    if not scripts:
        print(f"opcov: no spec scripts in {suite}/core", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ri-opcov-") as out:
        env = dict(os.environ, RI_OP_COVERAGE_DIR=out)
        runs = [[os.path.join(build, "ri-spec"), *mode, *scripts]
                for mode in ([], ["--no-canonicalize"], ["--unmetered"])]
        runs += [[os.path.join(build, "unit", t)] for t in UNIT_TESTS]
        for cmd in runs:
            if not os.path.exists(cmd[0]):
                print(f"opcov: {cmd[0]} is not built", file=sys.stderr)
                return 2
            r = subprocess.run(cmd, env=env, cwd=build, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                print(f"opcov: {' '.join(cmd[:2])} ... failed ({r.returncode}):\n{r.stderr[-2000:]}", file=sys.stderr)
                return 1
        counts = {}
        order = []
        for path in glob.glob(os.path.join(out, "opcov.*")):
            with open(path) as f:
                for line in f:
                    name, n = line.split()
                    if name not in counts:
                        order.append(name)
                        counts[name] = 0
                    counts[name] += int(n)
    if not counts:
        print("opcov: no counts written: is this build configured with -DRI_OP_COVERAGE=ON?", file=sys.stderr)
        return 2
    unreached = [n for n in order if counts[n] == 0]
    missing = [n for n in unreached if n not in allowed]
    reached_listed = [n for n in allowed if counts.get(n, 0) > 0]
    unknown = [n for n in allowed if n not in counts]
    print(f"opcov: {len(order) - len(unreached)} of {len(order)} operations reached; "
          f"{len(unreached) - len(missing)} unreached and listed in unreached.txt")
    if report:
        for n in order:
            print(f"{counts[n]:>14} {n}")
    for n in reached_listed:
        print(f"opcov: note: {n} is reached now: remove it from unreached.txt")
    for n in unknown:
        print(f"opcov: unreached.txt names {n}, which is no operation", file=sys.stderr)
    for n in missing:
        print(f"opcov: never dispatched: {n}", file=sys.stderr)
    return 1 if missing or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
