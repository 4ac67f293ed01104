"""Named snapshots: the protocol's snapshot_filesystem + filesystem_snapshot_name, and our
actions for seed 003 (named_*) and seed 004 (snapshot refs: restore/branch return a NEW
sandbox, cross-session default deny, list clamp, idempotent delete)."""
import asyncio

from harness import (Client, Server, action, attach_running, check, check_eq, create,
                     init_message, main, ok_action, statuses, test, value_of)


async def pace():
    await asyncio.sleep(0.15)  # under the server's 10 snapshot operations per second


@test(60)
async def snapshot_filesystem_and_create_from_it(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    c = sess.client
    await value_of(c, "add", [21])
    await c.send({"action": "snapshot_filesystem", "name": "base"})
    got = await c.until_status("SANDBOX_FILESYSTEM_SNAPSHOT_CREATED", 10)
    check_eq(statuses(got), ["SANDBOX_FILESYSTEM_SNAPSHOT_CREATING",
                             "SANDBOX_FILESYSTEM_SNAPSHOT_CREATED"], "snapshot_filesystem")
    check_eq(await value_of(c, "increment"), 22, "the sandbox goes on after the snapshot")
    await pace()
    await c.send({"action": "snapshot_filesystem"})
    got = await c.until_event("error", 10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_FILESYSTEM_SNAPSHOT_CREATING", "SANDBOX_FILESYSTEM_SNAPSHOT_ERROR", "error"]
             if len(got) == 3 else ["SANDBOX_FILESYSTEM_SNAPSHOT_ERROR", "error"],
             "snapshot_filesystem without a name")
    # A new sandbox starts from the named snapshot.
    other = await create(s, filesystem_snapshot_name="base")
    check_eq(await value_of(other.client, "get"), 21, "sandbox created from snapshot 'base'")
    check(other.id != sess.id, "same id as the origin")
    # Unknown name: a creation error.
    cc = await Client.connect(s.url + "/create")
    await cc.send(init_message(filesystem_snapshot_name="no-such-snapshot"))
    got = await cc.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR"], "unknown snapshot name")
    check_eq(got[-1].get("message"), "Filesystem snapshot not found: no-such-snapshot",
             "error message (the original's words)")
    check_eq(cc.close_code, 4000, "close code")


@test(60)
async def named_snapshots_seed_003(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    c = sess.client
    await value_of(c, "add", [5])
    r = await ok_action(c, "named_save", name="five", description="at five", tags=["t"])
    info = r.get("snapshot", {})
    check_eq(info.get("name"), "five", "saved name")
    check_eq(info.get("description"), "at five", "saved description")
    await pace()
    await value_of(c, "add", [5])
    await ok_action(c, "named_save", name="ten")
    await pace()
    names = sorted(i.get("name") for i in (await ok_action(c, "named_list")).get("snapshots", []))
    check_eq(names, ["five", "ten"], "named_list")
    await pace()
    d = await ok_action(c, "named_diff", **{"from": "five", "to": "ten"})
    check(d.get("diff"), "empty diff between different states")
    await pace()
    await ok_action(c, "named_restore", name="five")
    check_eq(await value_of(c, "get"), 5, "named_restore put the sandbox back")
    await pace()
    r = await action(c, "named_restore", name="missing")
    check_eq(r.get("ok"), False, "restore of a missing name")
    check_eq(r.get("error", {}).get("code"), "NOT_FOUND", "error code")
    await pace()
    check_eq((await ok_action(c, "named_delete", name="ten")).get("deleted"), True, "delete")
    await pace()
    check_eq((await ok_action(c, "named_delete", name="ten")).get("deleted"), False, "delete again")


@test(60)
async def snapshotter_refs_seed_004(ri):
    s = Server(ri)
    a = await create(s, module="counter")
    await value_of(a.client, "add", [3])
    ref = (await ok_action(a.client, "snapshot")).get("ref")
    check(isinstance(ref, dict) and ref.get("providerId"), f"ref {ref!r}")
    await value_of(a.client, "add", [100])
    await pace()
    r = await ok_action(a.client, "snapshot_restore", ref=ref)
    nid, ntok = r.get("sandbox_id"), r.get("sandbox_token")
    check(nid and nid != a.id, f"snapshot_restore did not return a NEW sandbox: {r}")
    check_eq(await value_of(a.client, "get"), 103, "the current sandbox is unchanged")
    n = await attach_running(s, nid, ntok)
    check_eq(await value_of(n, "get"), 3, "the new sandbox has the snapshot's state")
    await pace()
    r = await ok_action(a.client, "snapshot_branch", ref=ref)
    check(r.get("sandbox_id") not in (a.id, nid), "branch did not return a new sandbox")
    # Another session: denied by default, allowed (and audited) on opt-in.
    b = await create(s, module="counter")
    r = await action(b.client, "snapshot_restore", ref=ref)
    check_eq(r.get("ok"), False, "cross-session restore without opt-in")
    check_eq(r.get("error", {}).get("code"), "FORBIDDEN", "error code")
    await pace()
    r = await ok_action(b.client, "snapshot_restore", ref=ref, allow_cross_session=True)
    check(r.get("sandbox_id"), "cross-session restore with opt-in")
    await pace()
    lst = (await ok_action(b.client, "snapshot_list")).get("snapshots")
    check_eq(lst, [], "b's own snapshots")
    await pace()
    lst = (await ok_action(a.client, "snapshot_list", limit=100000)).get("snapshots")
    check_eq(len(lst), 1, "a's snapshots")
    await pace()
    check_eq((await ok_action(a.client, "snapshot_delete", ref=ref)).get("deleted"), True, "delete")
    await pace()
    check_eq((await ok_action(a.client, "snapshot_delete", ref=ref)).get("deleted"), True,
             "delete again (idempotent)")


@test(60)
async def snapshot_actions_rate_limited(ri):
    s = Server(ri)
    a = await create(s, module="counter")
    codes = []
    for _ in range(15):
        r = await action(a.client, "snapshot")
        codes.append("ok" if r.get("ok") else r.get("error", {}).get("code"))
    check("RATE_LIMITED" in codes, f"15 snapshots at once were not rate limited: {codes}")
    check_eq(codes[:10], ["ok"] * 10, "the first 10 snapshot operations")


if __name__ == "__main__":
    main()
