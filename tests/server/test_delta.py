"""Full and delta checkpoints (docs/SERVER.md "Full and delta checkpoints"): after a full
image, a checkpoint with little changed writes a delta (section PRNT naming the full image
by SHA-256 and length; far smaller), which a second server restores exactly; many deltas
all name the same full image until a large change writes a new full one; pruning keeps the
full image a kept delta needs; a damaged or missing parent is a RESTORE_ERROR + 4000 that
changes no file; a server SIGKILLed during a delta checkpoint leaves a restorable state."""
import asyncio
import hashlib
import json
import os
import re
import signal
import struct

from harness import (Server, attach, attach_running, check, check_eq, checkpoint, create, main, settled, statuses,
                     test, value_of)

IMG_RE = re.compile(r"^checkpoint_(\d{13})\.img$")
PAGES = 64                       # a 4 MiB sandbox
SMALL = (PAGES * 65536 // 100) & ~3  # 1% of its memory
MIB = 1 << 20
TAIL = 16 + 48 + 20              # PRNT header + content, then the CSUM trailer


def ckdir(s, sid):
    return os.path.join(s.ckpt, sid, "checkpoints")


def latest(s, sid):
    with open(os.path.join(ckdir(s, sid), "latest")) as f:
        return f.read().strip()


def images(s, sid):
    return sorted((f for f in os.listdir(ckdir(s, sid)) if IMG_RE.match(f)), key=lambda n: (len(n), n))


def read(s, sid, name):
    with open(os.path.join(ckdir(s, sid), name), "rb") as f:
        return f.read()


def parent_of(data):
    """(sha256 hex, length) a delta names in PRNT, or None for a full image."""
    if len(data) <= TAIL or data[-TAIL:-TAIL + 4] != b"PRNT":
        return None
    c = data[-TAIL + 16:-20]
    return c[:32].hex(), struct.unpack("<Q", c[32:40])[0]


def metadata(s, sid):
    with open(os.path.join(s.ckpt, sid, "metadata.json")) as f:
        return json.load(f)


async def big_sandbox(s):
    sess = await create(s, module="big", enable_checkpoint=True, sandbox={"max_memory_bytes": 16 * MIB})
    check_eq(await value_of(sess.client, "setup", [PAGES, 7], timeout=60), PAGES, "setup")
    return sess


async def change_and_checkpoint(s, sess, nbytes, seed):
    """Attach (restore), overwrite the first nbytes, checkpoint: the sum and the new image."""
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    await value_of(c, "touch", [nbytes, seed], timeout=60)
    want = await value_of(c, "sum", timeout=60)
    await checkpoint(c)
    return want, latest(s, sess.id)


@test(120)
async def delta_after_a_small_change_restores_on_another_server(ri):
    s = Server(ri)
    sess = await big_sandbox(s)
    await checkpoint(sess.client)
    full = latest(s, sess.id)
    full_bytes = read(s, sess.id, full)
    check(parent_of(full_bytes) is None, "the first checkpoint is not a full image")
    meta = metadata(s, sess.id).get("full_image") or {}
    check_eq((meta.get("file"), meta.get("sha256"), meta.get("bytes")),
             (full, hashlib.sha256(full_bytes).hexdigest(), len(full_bytes)), "metadata.json full_image")

    want, name = await change_and_checkpoint(s, sess, SMALL, 1234)
    check(name != full, "latest still names the full image")
    data = read(s, sess.id, name)
    check_eq(parent_of(data), (hashlib.sha256(full_bytes).hexdigest(), len(full_bytes)),
             "the delta's parent (PRNT)")
    check(len(data) * 8 < len(full_bytes), f"delta of {len(data)} bytes next to a full image of {len(full_bytes)}")
    check_eq(images(s, sess.id), sorted([full, name], key=lambda n: (len(n), n)), "images on disk")

    # A second server on the same volume restores parent + delta: the exact state.
    s.stop()
    s2 = Server(ri, ckpt=s.ckpt)
    c = await attach_running(s2, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "sum", timeout=60), want, "sum after restoring the delta on another server")
    # and the state goes on from there (a delta on the same parent again)
    await value_of(c, "touch", [SMALL // 2, 99], timeout=60)
    want2 = await value_of(c, "sum", timeout=60)
    await checkpoint(c)
    check_eq(parent_of(read(s2, sess.id, latest(s2, sess.id))),
             (hashlib.sha256(full_bytes).hexdigest(), len(full_bytes)), "second delta's parent")
    c = await attach_running(s2, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "sum", timeout=60), want2, "sum after the second delta")


@test(180)
async def many_deltas_then_a_full_image(ri):
    s = Server(ri, args=["--keep-checkpoints", "20"])
    sess = await big_sandbox(s)
    await checkpoint(sess.client)
    full = latest(s, sess.id)
    full_sha = hashlib.sha256(read(s, sess.id, full)).hexdigest()
    for i in range(4):
        _, name = await change_and_checkpoint(s, sess, SMALL * (i + 1), 100 + i)
        p = parent_of(read(s, sess.id, name))
        check(p is not None and p[0] == full_sha, f"delta {i} is not built on the full image: {p}")
    # Half the memory changed: more than a quarter, so a full image again.
    want, big = await change_and_checkpoint(s, sess, PAGES * 65536 // 2, 555)
    big_bytes = read(s, sess.id, big)
    check(parent_of(big_bytes) is None, "a checkpoint after a large change is not a full image")
    check_eq(metadata(s, sess.id)["full_image"]["file"], big, "metadata names the new full image")
    _, name = await change_and_checkpoint(s, sess, SMALL, 777)
    check_eq(parent_of(read(s, sess.id, name)), (hashlib.sha256(big_bytes).hexdigest(), len(big_bytes)),
             "the next delta's parent is the new full image")
    want, name = await change_and_checkpoint(s, sess, SMALL, 778)
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "sum", timeout=60), want, "state after many deltas and a full image")


@test(180)
async def pruning_keeps_the_parent(ri):
    s = Server(ri, args=["--keep-checkpoints", "2"])
    sess = await big_sandbox(s)
    await checkpoint(sess.client)
    full = latest(s, sess.id)
    names = []
    for i in range(4):
        want, name = await change_and_checkpoint(s, sess, SMALL, 10 + i)
        names.append(name)
        check(full in images(s, sess.id), f"the full image was pruned after delta {i}")
    kept = sorted([full] + names[-2:], key=lambda n: (len(n), n))
    check_eq(await settled(lambda: images(s, sess.id), kept), kept, "images kept: the two newest and their parent")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "sum", timeout=60), want, "state after pruning")
    await checkpoint(c)  # nothing changed: one more delta; the two newest stay
    # A large change: the new full image, then a delta on it; the old full image goes.
    _, big = await change_and_checkpoint(s, sess, PAGES * 65536, 42)
    _, name = await change_and_checkpoint(s, sess, SMALL, 43)
    kept = sorted([big, name], key=lambda n: (len(n), n))
    check_eq(await settled(lambda: images(s, sess.id), kept), kept, "images after a new full image")


@test(120)
async def parent_found_by_hash_without_metadata(ri):
    # metadata.json without full_image (an older server, or lost): the parent is found by
    # the SHA-256 PRNT names, and the next checkpoint is still a delta on it.
    s = Server(ri)
    sess = await big_sandbox(s)
    await checkpoint(sess.client)
    full = latest(s, sess.id)
    sha = hashlib.sha256(read(s, sess.id, full)).hexdigest()
    await change_and_checkpoint(s, sess, SMALL, 3)
    path = os.path.join(s.ckpt, sess.id, "metadata.json")
    meta = metadata(s, sess.id)
    del meta["full_image"]
    with open(path, "w") as f:
        json.dump(meta, f)
    want, name = await change_and_checkpoint(s, sess, SMALL, 4)
    check_eq(parent_of(read(s, sess.id, name))[0], sha, "parent of the delta after a restore by hash")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "sum", timeout=60), want, "state")


@test(120)
async def hibernated_and_woken_sandbox_writes_a_full_image(ri):
    # Restored sandboxes (page tracking on) pushed out by --memory-budget: once woken, the
    # memory has no baseline, so the next checkpoint is a full image, and it restores.
    s = Server(ri, args=["--memory-budget", str(3 << 20)])
    sessions = []
    for i in range(8):
        sess = await create(s, module="big", enable_checkpoint=True, sandbox={"max_memory_bytes": 16 * MIB})
        await value_of(sess.client, "setup", [16, 300 + i])
        await checkpoint(sess.client)
        sessions.append(sess)
    clients = [await attach_running(s, x.id, x.token, restoring=True) for x in sessions]
    for c in clients:
        await value_of(c, "touch", [4096, 9])
    hib = os.path.join(s.ckpt, "_hibernate")
    for _ in range(40):
        names = [f for _, _, fs in os.walk(hib) for f in fs if f.endswith(".img")]
        if names:
            break
        await asyncio.sleep(0.25)
    check(names, "nothing hibernated under the budget")
    k = next(i for i, x in enumerate(sessions) if any(x.id in n for n in names))
    c = clients[k]
    await value_of(c, "touch", [8192, 10])  # wakes it
    want = await value_of(c, "sum")
    await checkpoint(c)
    name = latest(s, sessions[k].id)
    check(parent_of(read(s, sessions[k].id, name)) is None, "a woken sandbox wrote a delta")
    c = await attach_running(s, sessions[k].id, sessions[k].token, restoring=True)
    check_eq(await value_of(c, "sum"), want, "state after a checkpoint of a woken sandbox")


async def broken_parent_case(ri, damage, what):
    s = Server(ri)
    sess = await big_sandbox(s)
    await checkpoint(sess.client)
    full = latest(s, sess.id)
    await change_and_checkpoint(s, sess, SMALL, 5)
    damage(os.path.join(ckdir(s, sess.id), full))
    before = {f: read(s, sess.id, f) for f in images(s, sess.id)}
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(30)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_RESTORING", "SANDBOX_RESTORE_ERROR", "error"], f"attach with {what}")
    check("delta" in got[-1].get("message", ""), f"message: {got[-1].get('message')}")
    check_eq(c.close_code, 4000, "close code")
    check_eq({f: read(s, sess.id, f) for f in images(s, sess.id)}, before, "files after the failed restore")
    check(s.status_ok(), "server down after a broken parent")


def flip(path):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        for i in range(len(data) // 2, len(data) // 2 + 16):
            data[i] ^= 0x5A
        f.seek(0)
        f.write(data)


@test(120)
async def corrupt_parent_is_a_restore_error(ri):
    await broken_parent_case(ri, flip, "a corrupt parent")


@test(120)
async def missing_parent_is_a_restore_error(ri):
    await broken_parent_case(ri, os.unlink, "a missing parent")


@test(240)
async def sigkill_during_delta_checkpoints(ri):
    # The server dies at some point of a delta checkpoint (after 0 to 40 ms): whatever
    # `latest` names restores, to the state before or after that checkpoint.
    s = Server(ri, args=["--lease-seconds", "1"])
    sess = await big_sandbox(s)
    await checkpoint(sess.client)
    vol = s.ckpt
    before, _ = await change_and_checkpoint(s, sess, SMALL, 1)
    for i, delay in enumerate([0.0, 0.002, 0.005, 0.01, 0.02, 0.04]):
        c = await attach_running(s, sess.id, sess.token, restoring=True)
        await value_of(c, "touch", [SMALL, 200 + i], timeout=60)
        after = await value_of(c, "sum", timeout=60)
        await c.send({"action": "checkpoint"})
        await asyncio.sleep(delay)
        s.signal(signal.SIGKILL)
        s.wait()
        s = Server(ri, ckpt=vol, args=["--lease-seconds", "1"])
        for _ in range(20):  # the dead server's lease runs out
            c = await attach(s, sess.id, sess.token)
            got = await c.until(lambda f: f.get("status") in ("SANDBOX_RUNNING", "SANDBOX_IN_USE",
                                                              "SANDBOX_RESTORE_ERROR", "SANDBOX_NOT_FOUND"), 30)
            if statuses(got)[-1] != "SANDBOX_IN_USE":
                break
            await c.close()
            await asyncio.sleep(0.5)
        check_eq(statuses(got)[-1], "SANDBOX_RUNNING", f"restore after SIGKILL {i}")
        now = await value_of(c, "sum", timeout=60)
        check(now in (before, after), f"state after SIGKILL {i} is neither before nor after")
        before = now
        await checkpoint(c)  # the next round restores again


if __name__ == "__main__":
    main()
