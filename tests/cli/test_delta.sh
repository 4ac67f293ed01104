#!/usr/bin/env bash
# Tests of `ri delta` (issue 5): a delta of a later snapshot on an earlier one is smaller,
# rebuilds the later snapshot byte for byte, names its parent, refuses another parent, is
# refused where a full snapshot is expected (restore; diff says to apply it first), and
# `ri inspect` describes it (parent, pages stored).
#
#   bash tests/cli/test_delta.sh [PATH/TO/ri]        (default: build/ri)
#
# Needs wat2wasm. Prints each failure, then "N passed, N failed".
set -u

. "$(dirname "$0")/lib.sh"
cli_init delta "$@"

# A module with 64 pages of data, of which each run changes one word (poke 70000: page 1).
cat >"$tmp/pages.wat" <<'WAT'
(module
  (memory (export "memory") 64)
  (func (export "fill")
    (local $a i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $a) (i32.const 4194304)))
      (i32.store (local.get $a) (i32.add (local.get $a) (i32.const 7)))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (br $next))))
  (func (export "poke") (param i32) (i32.store (local.get 0) (i32.const -1))))
WAT
wat2wasm "$tmp/pages.wat" -o "$tmp/pages.wasm" || exit 1
ts=(--timestamp 1700000000000 --timeout 60000)

for comp in "" "--uncompressed"; do
    t "full snapshot $comp" 0 "$ri" run "${ts[@]}" --snapshot "$tmp/a.wsnp" $comp "$tmp/pages.wasm" fill
    t "later snapshot $comp" 0 "$ri" run "${ts[@]}" --restore "$tmp/a.wsnp" --snapshot "$tmp/b.wsnp" $comp \
        "$tmp/pages.wasm" poke 70000
    t "create $comp" 0 "$ri" delta create -o "$tmp/d.wsnpd" "$tmp/a.wsnp" "$tmp/b.wsnp"
    if [ "$(stat -c %s "$tmp/d.wsnpd")" -lt "$(( $(stat -c %s "$tmp/b.wsnp") / 4 ))" ]; then pass; else
        fail "the delta ($(stat -c %s "$tmp/d.wsnpd") bytes) is not much smaller than the snapshot"; fi
    t "apply $comp" 0 "$ri" delta apply -o "$tmp/b2.wsnp" "$tmp/a.wsnp" "$tmp/d.wsnpd"
    if cmp -s "$tmp/b.wsnp" "$tmp/b2.wsnp"; then pass; else fail "apply did not rebuild the same bytes"; fi
    sum=$(sha256sum "$tmp/a.wsnp" | cut -d' ' -f1)
    t "info $comp" 0 "$ri" delta info "$tmp/d.wsnpd"
    out_has "parent sha256:$sum"
    t "wrong parent $comp" 3 "$ri" delta apply -o "$tmp/x.wsnp" "$tmp/b.wsnp" "$tmp/d.wsnpd"
    err_has "parent mismatch"
    [ -e "$tmp/x.wsnp" ] && fail "an output was written after a refusal" || pass
    t "restore of a delta alone $comp" 3 "$ri" run "${ts[@]}" --restore "$tmp/d.wsnpd" "$tmp/pages.wasm" poke 0
    err_has "delta"
    t "inspect of a delta $comp" 0 "$ri" inspect --text "$tmp/d.wsnpd"
    out_has "WSNP v2 delta image"
    out_has "parent +sha256:$sum, $(stat -c %s "$tmp/a.wsnp") bytes"
    out_has "memory 0 64 pages of 64 KiB, 1 stored \(differ from the parent\)"
    out_has "ri delta apply"
    t "inspect --json of a delta $comp" 0 "$ri" inspect --json "$tmp/d.wsnpd"
    if python3 - "$tmp/out" "$sum" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["valid"] is True and d["delta"] is True and d["version"] == 2, d
assert d["parent"]["sha256"] == sys.argv[2], d
assert [m["storedPages"] for m in d["memories"]] == [1], d
assert [m["pages"] for m in d["memories"]] == [64], d
PY
    then pass; else fail "inspect --json of a delta"; fi
    t "inspect of a full snapshot is not a delta $comp" 0 "$ri" inspect --text "$tmp/b.wsnp"
    if grep -q "delta image" "$tmp/out"; then fail "a full snapshot described as a delta"; else pass; fi
    t "diff with a delta (new) $comp" 3 "$ri" diff "$tmp/a.wsnp" "$tmp/d.wsnpd"
    err_has "d.wsnpd: a WSNP v2 delta image \(parent sha256:$sum\): apply it to its parent first"
    err_has "ri delta apply"
    t "diff with a delta (old) $comp" 3 "$ri" diff "$tmp/d.wsnpd" "$tmp/b.wsnp"
    err_has "delta image"
    t "diff of the applied delta $comp" 0 "$ri" diff --exit-code "$tmp/b.wsnp" "$tmp/b2.wsnp"
    # A damaged delta: inspect refuses it with the reason (checksum), exit 3.
    cp "$tmp/d.wsnpd" "$tmp/bad.wsnpd"
    printf '\xff' | dd of="$tmp/bad.wsnpd" bs=1 seek=100 conv=notrunc 2>/dev/null
    t "inspect of a damaged delta $comp" 3 "$ri" inspect --text "$tmp/bad.wsnpd"
    err_has "checksum"
    t "info of a full snapshot" 3 "$ri" delta info "$tmp/a.wsnp"
done
t "usage: no mode" 2 "$ri" delta
t "usage: no output" 2 "$ri" delta create "$tmp/a.wsnp" "$tmp/b.wsnp"
t "help" 0 "$ri" delta --help
out_has "ri delta create"

cli_done
