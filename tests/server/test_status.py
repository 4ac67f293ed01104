"""The original's status sequences, frame by frame (cloud-run-sandbox: its integration tests
tests/integration/test_websocket_server.py and src/sandbox/manager.py, handle.py): a checkpoint
deletes the live copy (DELETING, DELETED before CHECKPOINTED); a restore whose checkpoint
directory is gone while the metadata stays is RESTORE_ERROR + 4000, an unknown sandbox
NOT_FOUND + 1011; create with handoff takes the lock before the id, handoff without
checkpointing is refused; the owner's side of a handoff; an unknown filesystem snapshot."""
import hashlib
import json
import os
import shutil
import time

from harness import (CHECKPOINT_STATUSES, HANDOFF_CHECKPOINT_STATUSES, Client, Server, attach,
                     attach_running, check, check_eq, create, init_message, main, tempdir, test,
                     value_of)


def kinds(frames):
    """Statuses by name, other events by their event name (sandbox_id, error, ...)."""
    return [f.get("status") or f.get("event") for f in frames]


def tree(path):
    """{relative path: sha256} of every file under path, lease files left out (they come and go)."""
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            if f.startswith("lease"):
                continue
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def live_sandboxes(server):
    code, body = server.http_get("/metrics")
    for line in body.splitlines():
        if line.startswith("ri_server_sandboxes_live "):
            return float(line.split()[1])
    return None


@test()
async def checkpoint_deletes_the_live_copy(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [3])
    await sess.client.send({"action": "checkpoint"})
    got = await sess.client.until_closed(20)
    check_eq(kinds(got), CHECKPOINT_STATUSES, "checkpoint frames (no lock without handoff)")
    check_eq(sess.client.close_code, 1000, "close code after the checkpoint")
    check_eq(live_sandboxes(s), 0.0, "live sandboxes after the checkpoint")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 3, "state after the restore")


@test()
async def checkpoint_with_handoff_releases_the_lock(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True, enable_sandbox_handoff=True)
    await sess.client.send({"action": "checkpoint"})
    got = await sess.client.until_closed(20)
    check_eq(kinds(got), HANDOFF_CHECKPOINT_STATUSES, "checkpoint frames of a sandbox with handoff")
    check_eq(sess.client.close_code, 1000, "close code after the checkpoint")
    check(not os.path.exists(os.path.join(s.ckpt, sess.id, "lease")), "lease left after the checkpoint")


@test()
async def kill_and_idle_delete_with_handoff_release_the_lock(ri):
    s = Server(ri)
    lock = ["SANDBOX_LOCK_RELEASING", "SANDBOX_LOCK_RELEASED"]
    sess = await create(s, enable_checkpoint=True, enable_sandbox_handoff=True)
    await sess.client.send({"action": "kill_sandbox"})
    got = await sess.client.until_closed(10)
    check_eq(kinds(got), ["SANDBOX_KILLING", "SANDBOX_DELETING"] + lock + ["SANDBOX_DELETED", "SANDBOX_KILLED"],
             "kill_sandbox of a sandbox with handoff")
    check_eq(sess.client.close_code, 1000, "close code after kill_sandbox")
    check(not os.path.exists(os.path.join(s.ckpt, sess.id)), "sandbox directory left after the kill")
    sess = await create(s, idle_timeout=1, enable_checkpoint=True, enable_sandbox_handoff=True)
    got = await sess.client.until_closed(10)
    check_eq(kinds(got), ["SANDBOX_DELETING"] + lock + ["SANDBOX_DELETED"], "idle delete with handoff")
    sess = await create(s, idle_timeout=1, enable_checkpoint=True, enable_sandbox_handoff=True,
                        enable_idle_timeout_auto_checkpoint=True)
    got = await sess.client.until_closed(10)
    check_eq(kinds(got), HANDOFF_CHECKPOINT_STATUSES, "idle checkpoint with handoff")
    check_eq(sess.client.close_code, 1000, "close code after the idle checkpoint")


@test()
async def restore_with_checkpoint_directory_gone(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [5])
    await sess.client.send({"action": "checkpoint"})
    await sess.client.until_closed(20)
    # The original's own test: the checkpoint directory is removed, the metadata stays.
    shutil.rmtree(os.path.join(s.ckpt, sess.id, "checkpoints"))
    check(os.path.isfile(os.path.join(s.ckpt, sess.id, "metadata.json")), "metadata.json missing")
    before = tree(s.ckpt)
    for attempt in ("first", "second"):
        c = await attach(s, sess.id, sess.token)
        got = await c.until_closed(15)
        check_eq(kinds(got), ["SANDBOX_RESTORING", "SANDBOX_RESTORE_ERROR", "error"],
                 f"{attempt} attach without checkpoints")
        check_eq(got[-1].get("message"), f"Latest checkpoint not found for sandbox {sess.id}.",
                 "error message")
        check_eq(c.close_code, 4000, "close code of RESTORE_ERROR")
        check_eq(tree(s.ckpt), before, "volume files after the failed restore")
    check(s.status_ok(), "server down after the failed restore")
    check_eq(live_sandboxes(s), 0.0, "live sandboxes after the failed restore")


@test()
async def restore_of_a_sandbox_the_volume_does_not_know(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await sess.client.send({"action": "checkpoint"})
    await sess.client.until_closed(20)
    c = await attach(s, "sandbox-" + "ab" * 12, sess.token)
    got = await c.until_closed(10)
    check_eq(kinds(got), ["SANDBOX_RESTORING", "SANDBOX_NOT_FOUND"], "unknown sandbox")
    check_eq(c.close_code, 1011, "close code of NOT_FOUND")
    # Its whole directory gone (metadata too): also unknown.
    shutil.rmtree(os.path.join(s.ckpt, sess.id))
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(kinds(got), ["SANDBOX_RESTORING", "SANDBOX_NOT_FOUND"], "sandbox directory removed")
    check_eq(c.close_code, 1011, "close code of NOT_FOUND")


@test()
async def create_with_handoff_takes_the_lock_before_the_id(ri):
    s = Server(ri)
    c = await Client.connect(s.url + "/create")
    await c.send(init_message(enable_checkpoint=True, enable_sandbox_handoff=True))
    got = await c.until_status("SANDBOX_RUNNING", 10)
    check_eq(kinds(got), ["SANDBOX_CREATING", "SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED",
                          "sandbox_id", "SANDBOX_RUNNING"], "create with handoff")
    sid = got[3]["sandbox_id"]
    check(os.path.isfile(os.path.join(s.ckpt, sid, "lease")), "no lease (the lock) after create")
    # Without handoff: no lock statuses.
    c = await Client.connect(s.url + "/create")
    await c.send(init_message(enable_checkpoint=True))
    got = await c.until_status("SANDBOX_RUNNING", 10)
    check_eq(kinds(got), ["SANDBOX_CREATING", "sandbox_id", "SANDBOX_RUNNING"], "create without handoff")


@test()
async def handoff_without_checkpointing_is_refused(ri):
    s = Server(ri)
    for init in (init_message(enable_sandbox_handoff=True),
                 init_message(enable_checkpoint=False, enable_sandbox_handoff=True)):
        c = await Client.connect(s.url + "/create")
        await c.send(init)
        got = await c.until_closed(10)
        check_eq(kinds(got), ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR", "error"], "handoff alone")
        check_eq(got[-1].get("message"), "Sandbox handoff requires checkpointing to be enabled.",
                 "error message")
        check_eq(c.close_code, 4000, "close code")
    check_eq([d for d in os.listdir(s.ckpt) if d.startswith("sandbox-")], [], "sandbox directories")


@test(60)
async def handoff_owner_sees_the_originals_order(ri):
    vol = tempdir()
    a = Server(ri, ckpt=vol)
    b = Server(ri, ckpt=vol)
    sess = await create(a, module="counter", enable_checkpoint=True, enable_sandbox_handoff=True)
    await value_of(sess.client, "add", [2])
    c = await attach(b, sess.id, sess.token)
    got = await c.until_status("SANDBOX_RUNNING", 30)
    check_eq(kinds(got), ["SANDBOX_RESTORING", "SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED",
                          "SANDBOX_RUNNING"], "the new owner's socket")
    old = await sess.client.until_closed(10)
    check_eq(kinds(old), ["SANDBOX_LOCK_RELEASE_REQUESTED", "SANDBOX_CHECKPOINTING", "SANDBOX_DELETING",
                          "SANDBOX_LOCK_RELEASING", "SANDBOX_LOCK_RELEASED", "SANDBOX_DELETED",
                          "SANDBOX_CHECKPOINTED"], "the owner's socket")
    check_eq(sess.client.close_code, 1000, "close code of the owner's socket")
    check_eq(live_sandboxes(a), 0.0, "live sandboxes on the old owner")
    check_eq(await value_of(c, "increment"), 3, "state moved to the new owner")


@test(60)
async def handoff_owner_that_never_lets_go(ri):
    s = Server(ri, args=["--lease-seconds", "1"])
    sess = await create(s, module="counter", enable_checkpoint=True, enable_sandbox_handoff=True)
    await sess.client.send({"action": "checkpoint"})
    await sess.client.until_closed(20)
    # An owner that holds the lease and never answers the request (no such server runs).
    with open(os.path.join(s.ckpt, sess.id, "lease"), "w") as f:
        json.dump({"owner": "srv-ghost", "expires_ms": int(time.time() * 1000) + 600000, "pid": 1}, f)
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(30)  # the lease time (1 s) + 10 s
    check_eq(kinds(got), ["SANDBOX_RESTORING", "SANDBOX_LOCK_ACQUIRING", "SANDBOX_RESTORE_ERROR", "error"],
             "attach while an owner never lets go")
    check_eq(got[-1].get("message"), "Timed out waiting for the owning server to release the sandbox.",
             "error message")
    check_eq(c.close_code, 4000, "close code")
    check(os.path.isfile(os.path.join(s.ckpt, sess.id, "handoff")), "no release request written")


@test()
async def filesystem_snapshot_not_found(ri):
    s = Server(ri)
    c = await Client.connect(s.url + "/create")
    await c.send(init_message(filesystem_snapshot_name="no-such-snapshot"))
    got = await c.until_closed(10)
    check_eq(kinds(got), ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR", "error"], "unknown snapshot")
    check_eq(got[-1].get("message"), "Filesystem snapshot not found: no-such-snapshot", "error message")
    check_eq(c.close_code, 4000, "close code")


if __name__ == "__main__":
    main()
