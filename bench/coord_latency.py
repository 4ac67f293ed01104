#!/usr/bin/python3
"""Attach and handoff latency of `ri serve` with ownership on etcd (--coordinator) against the
volume's lease files (the default), two servers on one volume, on this machine.

    /usr/bin/python3 bench/coord_latency.py [--ri build/ri] [--reps 20]

  - attach: connect to SANDBOX_RUNNING for a checkpointed sandbox restored on the other
    server (metadata read, token check, ownership taken, image restored);
  - handoff: a live sandbox with enable_sandbox_handoff on server A, attached on server B:
    connect to SANDBOX_RUNNING on B (A hears the request, checkpoints, releases; B takes it
    and restores).
etcd runs as a 3-member cluster on 127.0.0.1 (tests/coord/etcd_cluster.sh), so every write
is a Raft round on this machine. Timing only here, never in the tests."""
import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))
sys.dont_write_bytecode = True

import harness  # noqa: E402
from harness import Server, attach, checkpoint, create, tempdir, value_of  # noqa: E402

CLUSTER = os.path.join(ROOT, "tests", "coord", "etcd_cluster.sh")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def measure(a, b, reps):
    attach_ms, handoff_ms = [], []
    for _ in range(reps):
        sess = await create(a, module="counter", enable_checkpoint=True)
        await value_of(sess.client, "add", [1])
        await checkpoint(sess.client)
        t0 = time.perf_counter()
        c = await attach(b, sess.id, sess.token)
        await c.until_status("SANDBOX_RUNNING", 20)
        attach_ms.append((time.perf_counter() - t0) * 1000)
        await checkpoint(c)
        await c.close()
    for _ in range(reps):
        sess = await create(a, module="counter", enable_checkpoint=True, enable_sandbox_handoff=True)
        await value_of(sess.client, "add", [1])
        t0 = time.perf_counter()
        c = await attach(b, sess.id, sess.token)
        await c.until_status("SANDBOX_RUNNING", 30)
        handoff_ms.append((time.perf_counter() - t0) * 1000)
        await checkpoint(c, handoff=True)
        await c.close()
        await sess.client.close()
    return attach_ms, handoff_ms


def report(name, xs):
    return f"{name}: p50 {statistics.median(xs):7.1f} ms  p90 {pct(xs, 90):7.1f} ms  max {max(xs):7.1f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ri", default=os.path.join(ROOT, "build", "ri"))
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    ri = os.path.abspath(args.ri)
    if not shutil.which("etcd"):
        print("etcd is not installed: only the volume leases can be measured", file=sys.stderr)
    etcd_dir = tempfile.mkdtemp(prefix="ri-bench-etcd-")
    results = {}
    try:
        modes = [("volume leases", [])]
        if shutil.which("etcd"):
            subprocess.run(["bash", CLUSTER, "start", etcd_dir], check=True, capture_output=True)
            eps = subprocess.run(["bash", CLUSTER, "endpoints", etcd_dir], check=True, capture_output=True,
                                 text=True).stdout.strip()
            modes.append(("etcd (3 members)", ["--coordinator", "etcd://" + eps]))
        for name, extra in modes:
            vol = tempdir()
            a = Server(ri, ckpt=vol, args=extra + ["--server-id", "a"])
            b = Server(ri, ckpt=vol, args=extra + ["--server-id", "b"])
            results[name] = asyncio.run(measure(a, b, args.reps))
            harness.stop_all()
    finally:
        if os.path.exists(os.path.join(etcd_dir, "endpoints")):
            subprocess.run(["bash", CLUSTER, "stop", etcd_dir], capture_output=True)
        shutil.rmtree(etcd_dir, ignore_errors=True)
    print(f"{args.reps} repetitions each, two servers on one volume, loopback")
    for name, (att, hand) in results.items():
        print(f"  {name}")
        print("    " + report("attach (restore elsewhere)", att))
        print("    " + report("handoff of a live sandbox ", hand))


if __name__ == "__main__":
    main()
