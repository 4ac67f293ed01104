#!/usr/bin/env bash
# Tests of `ri snap` (issue 6): save, restore, list, show, delete, rename, diff, export,
# import, gc against a store directory; exit codes, JSON keys in order, the exact
# `Snapshot not found: <name>` text, byte-exact round trips through the store, damaged
# files refused, temporary files ignored and collected, --help everywhere.
#
#   bash tests/cli/test_snap.sh [PATH/TO/ri]        (default: build/ri)
#
# Needs wat2wasm. Prints each failure, then "N passed, N failed"; exits non-zero when
# anything failed.
set -u

. "$(dirname "$0")/lib.sh"
cli_init snap "$@"

# ---- fixtures ------------------------------------------------------------------------
cat >"$tmp/m.wat" <<'WAT'
(module
  (memory (export "memory") 1 64)
  (global $g (mut i32) (i32.const 0))
  (func (export "fill") (param $p i32) (param $v i32)
    (memory.fill (i32.mul (local.get $p) (i32.const 65536)) (local.get $v) (i32.const 65536)))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "inc") (result i32) (global.set $g (i32.add (global.get $g) (i32.const 1))) (global.get $g))
  (func (export "get") (result i32) (global.get $g)))
WAT
wat2wasm "$tmp/m.wat" -o "$tmp/m.wasm" || exit 1
m=$tmp/m.wasm
TS=--timestamp=1700000000000
st=$tmp/store
# Three states: a (page 0 = 1), b (pages 0 = 1, 1 = 2, g = 1), c (b with g = 2).
"$ri" run "$TS" "$m" fill '[0, 1]' --snapshot "$tmp/a.wsnp" --embed-module --json >/dev/null || exit 1
"$ri" run "$TS" --restore "$tmp/a.wsnp" "$m" grow 1 --snapshot "$tmp/a2.wsnp" --embed-module --json >/dev/null || exit 1
"$ri" run "$TS" --restore "$tmp/a2.wsnp" "$m" fill '[1, 2]' --snapshot "$tmp/b0.wsnp" --embed-module --json >/dev/null || exit 1
"$ri" run "$TS" --restore "$tmp/b0.wsnp" "$m" inc --snapshot "$tmp/b.wsnp" --embed-module --json >/dev/null || exit 1
"$ri" run "$TS" --restore "$tmp/b.wsnp" "$m" inc --snapshot "$tmp/c.wsnp" --json >/dev/null || exit 1
"$ri" run "$TS" "$m" get --snapshot "$tmp/v1.wsnp" --format v1 --json >/dev/null || exit 1

# ---- help and usage ----------------------------------------------------------------------
t "snap --help" 0 "$ri" snap --help
out_has 'save NAME FILE.wsnp'
for sub in save restore list show delete rename diff export import gc; do
    t "snap $sub --help" 0 "$ri" snap "$sub" --help
    out_has "usage: ri snap $sub"
done
t "snap alone" 2 "$ri" snap
t "unknown subcommand" 2 "$ri" snap frobnicate
err_has "unknown subcommand 'frobnicate'"
t "no --store" 2 "$ri" snap list
err_has -- '--store DIR is required'
t "unknown option" 2 "$ri" snap list --store "$st" --bogus
err_has "unknown option '--bogus'"
t "ri --help names snap" 0 "$ri" --help
out_has 'snap SUBCOMMAND'

# ---- save ------------------------------------------------------------------------------------
t "save (creates the store)" 0 "$ri" snap save --store "$st" --json --description "page 0 is ones" \
    --tag first --tag demo --origin-sandbox sandbox-0 --session s1 a "$tmp/a.wsnp"
keys_are "store snapshot stats"
out_has '"name": "a"'
out_has '"tags": \["first", "demo"\]'
out_has '"originSession": "s1"'
out_has '"moduleStored": true'
out_has '"blobsWritten": 2'
t "save b, text" 0 "$ri" snap save --store "$st" --text b "$tmp/b.wsnp"
out_has '^saved b'
out_has 'memory +1 memory, 128.0 KiB, 2 non-zero pages'
t "save c (module from the store)" 0 "$ri" snap save --store "$st" --json c "$tmp/c.wsnp"
out_has '"moduleStored": true'
out_has '"blobsWritten": 0'
t "save over a name" 3 "$ri" snap save --store "$st" a "$tmp/b.wsnp"
err_has 'Snapshot already exists: a \(--force replaces it\)'
t "save --force" 0 "$ri" snap save --store "$st" --force --json tmp "$tmp/b.wsnp"
t "save an invalid name" 2 "$ri" snap save --store "$st" "bad/name" "$tmp/a.wsnp"
err_has "Invalid snapshot name: character '/' at position 4"
t "save a name starting with a dot" 2 "$ri" snap save --store "$st" .hidden "$tmp/a.wsnp"
t "save a v1 file" 3 "$ri" snap save --store "$st" v1 "$tmp/v1.wsnp"
err_has 'WSNP v1 snapshots cannot be stored'
printf 'WSNP\002garbage' >"$tmp/garbage.wsnp"
t "save garbage" 3 "$ri" snap save --store "$st" g "$tmp/garbage.wsnp"
t "save a missing file" 3 "$ri" snap save --store "$st" g "$tmp/nope.wsnp"
err_has "cannot read snapshot"
printf '\000asm\001\000\000\000' >"$tmp/empty-module.wasm"
t "save with the wrong module" 3 "$ri" snap save --store "$tmp/other" --module "$tmp/empty-module.wasm" x "$tmp/c.wsnp"
err_has 'not the one the image names'
t "save with a text module" 3 "$ri" snap save --store "$tmp/other" --module "$tmp/m.wat" x "$tmp/c.wsnp"
err_has 'it is WebAssembly text, not a binary module'
mkdir -p "$tmp/notastore" && echo hi >"$tmp/notastore/file"
t "not a store" 3 "$ri" snap save --store "$tmp/notastore" x "$tmp/a.wsnp"
err_has 'not a snapshot store'
t "list a missing store" 3 "$ri" snap list --store "$tmp/missing"
err_has 'does not exist'

# ---- list and show ---------------------------------------------------------------------------
t "list --json" 0 "$ri" snap list --store "$st" --json
keys_are "store snapshots usage"
t "list --text" 0 "$ri" snap list --store "$st" --text
out_has '^NAME +CREATED \(UTC\) +MEMORY +PAGES +ORIGIN +DESCRIPTION'
out_has '^a .*sandbox-0/s1 +page 0 is ones'
out_has '4 snapshots listed; the store holds 4'
t "list --session" 0 "$ri" snap list --store "$st" --session s1 --json
out_has '"name": "a"'
out_lacks '"name": "b"'
t "list --limit" 0 "$ri" snap list --store "$st" --limit 1 --text
out_has '^1 snapshot listed'
t "show" 0 "$ri" snap show --store "$st" b --json
keys_are "store snapshot"
out_has '"storedPages": 2'
t "show --text" 0 "$ri" snap show --store "$st" --text a
out_has 'description  page 0 is ones'
t "show an unknown name" 3 "$ri" snap show --store "$st" nope
err_is 'ri snap show: Snapshot not found: nope'
out_empty

# ---- restore -----------------------------------------------------------------------------------
t "restore -o" 0 "$ri" snap restore --store "$st" b -o "$tmp/b.out" --json
keys_are "store snapshot output format bytes"
same_file "restore: byte for byte the file saved" "$tmp/b.wsnp" "$tmp/b.out"
t "restore --no-module" 0 "$ri" snap restore --store "$st" c -o "$tmp/c.out" --no-module --json
same_file "restore c: byte for byte" "$tmp/c.wsnp" "$tmp/c.out"
t "run from the restored file" 0 "$ri" run "$TS" --restore "$tmp/b.out" "$m" inc --json
out_has '"value": 2'
t "restore --uncompressed" 0 "$ri" snap restore --store "$st" b -o "$tmp/b.raw" --uncompressed --json
t "inspect the raw file" 0 "$ri" inspect --json "$tmp/b.raw"
out_has '"encoding": "raw"'
t "restore without -o" 2 "$ri" snap restore --store "$st" b
t "restore an unknown name" 3 "$ri" snap restore --store "$st" ghost -o "$tmp/x"
err_is 'ri snap restore: Snapshot not found: ghost'

# ---- diff ----------------------------------------------------------------------------------------
t "diff" 0 "$ri" snap diff --store "$st" a c --json
out_has '"identical": false'
out_has '"newPages": 2'
t "diff --exit-code" 1 "$ri" snap diff --store "$st" --exit-code a c --text
out_has 'a -> c: they differ'
t "diff the same" 0 "$ri" snap diff --store "$st" --exit-code b b --text
out_has 'identical'
t "diff an unknown name" 3 "$ri" snap diff --store "$st" a zz
err_is 'ri snap diff: Snapshot not found: zz'

# ---- rename and delete --------------------------------------------------------------------------
t "rename" 0 "$ri" snap rename --store "$st" tmp moved --json
keys_are "store from to"
t "rename onto an existing name" 3 "$ri" snap rename --store "$st" moved a
err_has 'Snapshot already exists: a'
t "rename an unknown name" 3 "$ri" snap rename --store "$st" tmp other
err_is 'ri snap rename: Snapshot not found: tmp'
t "delete" 0 "$ri" snap delete --store "$st" moved --json
keys_are "store deleted missing"
out_has '"deleted": \["moved"\]'
t "delete again" 3 "$ri" snap delete --store "$st" moved
err_is 'ri snap delete: Snapshot not found: moved'
t "delete --missing-ok" 0 "$ri" snap delete --store "$st" --missing-ok moved --json
out_has '"missing": \["moved"\]'

# ---- export and import --------------------------------------------------------------------------
t "export binary" 0 "$ri" snap export --store "$st" a -o "$tmp/a.export" --json
out_has '"format": "binary"'
t "a binary export restores alone" 0 "$ri" run "$TS" --restore "$tmp/a.export" "$m" get --json
t "inspect shows the RIMD section" 0 "$ri" inspect --json "$tmp/a.export"
out_has 'RIMD'
t "export json" 0 "$ri" snap export --store "$st" a -o "$tmp/a.json" --format json --json
grep -q '"format": "ri-snapshot"' "$tmp/a.json" && pass || fail "the JSON export lacks its format"
t "import the binary elsewhere" 0 "$ri" snap import --store "$tmp/st2" "$tmp/a.export" --json
out_has '"name": "a"'
out_has '"description": "page 0 is ones"'
out_has '"originSession": "s1"'
t "import json under a new name" 0 "$ri" snap import --store "$st" --name a-copy "$tmp/a.json" --text
out_has '^saved a-copy'
t "import again" 3 "$ri" snap import --store "$st" --name a-copy "$tmp/a.json"
err_has 'Snapshot already exists: a-copy \(--force replaces it\)'
t "import a plain file needs a name" 2 "$ri" snap import --store "$st" "$tmp/c.wsnp"
err_has 'carries no name'
t "import a plain file" 0 "$ri" snap import --store "$st" --name plain "$tmp/c.wsnp" --json
sed 's/"gasUsed": [0-9]*/"gasUsed": 12345/' "$tmp/a.json" >"$tmp/edited.json"
t "import an edited export" 3 "$ri" snap import --store "$st" --name edited "$tmp/edited.json"
err_has 'does not describe its image'
for field in storedPages memoryBytes imageBytes; do
    sed -E "s/\"$field\": [0-9]+/\"$field\": 7/" "$tmp/a.json" >"$tmp/edited.json"
    t "import an export with an edited $field" 3 "$ri" snap import --store "$st" --name edited "$tmp/edited.json"
    err_has "\\(\"$field\"\\) does not describe its image"
done
t "import garbage" 3 "$ri" snap import --store "$st" --name g "$tmp/garbage.wsnp"

# ---- gc, damage, temporary files -----------------------------------------------------------------
t "gc --json" 0 "$ri" snap gc --store "$st" --json
keys_are "store gc usage verify"
t "gc --verify" 0 "$ri" snap gc --store "$st" --verify --text
out_has 'verify: [0-9]+ files checked, 0 damaged'
echo "half" >"$st/snapshots/.tmp-0123456789abcdef"
t "list ignores temporary files" 0 "$ri" snap list --store "$st" --json
out_lacks 'tmp-'
out_has '"tempFiles": 1'
t "gc removes them" 0 "$ri" snap gc --store "$st" --json
out_has '"tempRemoved": 1'
t "delete a and a-copy" 0 "$ri" snap delete --store "$st" a a-copy
t "gc frees a's pages" 0 "$ri" snap gc --store "$st" --json
out_has '"blobsRemoved": 0'
# b and c share page 0 with a (all ones): nothing is freed. Now damage a blob of b.
blob=$(find "$st/blobs" -mindepth 2 -type f ! -name '.tmp-*' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)
size=$(stat -c %s "$blob")
printf '\377' | dd of="$blob" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
t "restore reads a damaged blob" 3 "$ri" snap restore --store "$st" b -o "$tmp/bad.out"
err_has 'Corrupt store: blob'
[ ! -e "$tmp/bad.out" ] && pass || fail "a damaged snapshot was written out"
t "gc --verify finds it" 3 "$ri" snap gc --store "$st" --verify --json
out_has '"damaged": [1-9]'
t "gc --max-size" 0 "$ri" snap gc --store "$st" --max-size 1KiB --json
out_has '"maxBytes": 1024'
t "gc --max-size none" 0 "$ri" snap gc --store "$st" --max-size none --json
out_has '"maxBytes": null'
t "gc --max-size garbage" 2 "$ri" snap gc --store "$st" --max-size lots

# ---- a paused call comes back whole ----------------------------------------------------------------
# `ri run --pause-on gas` writes an image holding the paused call (FRMS, module embedded);
# the store gives back exactly those bytes, and `ri resume` of what it gives back goes on.
wat2wasm "$root/tests/wat/suspend_cli.wat" -o "$tmp/mix.wasm" || exit 1
run_common=(--timestamp 1700000000000 --seed 5 --gas-schedule instructions)
"$ri" run "${run_common[@]}" --max-gas 1000000 --json "$tmp/mix.wasm" mix 40 >"$tmp/mix.json" || exit 1
mix_value=$(sed -nE 's/^  "value": (.*),$/\1/p' "$tmp/mix.json")
[ -n "$mix_value" ] || { echo "test_snap: no value from the uninterrupted run"; exit 1; }
for comp in "" --uncompressed; do
    t "paused run $comp" 0 "$ri" run "${run_common[@]}" --pause-on gas --gas 250 --snapshot "$tmp/p.wsnp" $comp \
        --json "$tmp/mix.wasm" mix 40
    out_has '"status": "suspended"'
    t "save a paused image $comp" 0 "$ri" snap save --store "$tmp/sp" --force --json paused "$tmp/p.wsnp"
    out_has '"status": "suspended"'
    t "restore the paused image $comp" 0 "$ri" snap restore --store "$tmp/sp" paused -o "$tmp/p.out" $comp --json
    same_file "restore of a paused image: byte for byte $comp" "$tmp/p.wsnp" "$tmp/p.out"
    t "inspect shows the paused call $comp" 0 "$ri" inspect --json "$tmp/p.out"
    out_has FRMS
    t "resume what the store gave back $comp" 0 "$ri" resume --gas 1000000 --json "$tmp/p.out"
    out_has '"status": "loaded"'
    out_has "\"value\": $mix_value"
done
t "export the paused image" 0 "$ri" snap export --store "$tmp/sp" paused -o "$tmp/p.export" --json
t "resume the export" 0 "$ri" resume --gas 1000000 --json "$tmp/p.export"
out_has "\"value\": $mix_value"
t "export the paused image as JSON" 0 "$ri" snap export --store "$tmp/sp" paused -o "$tmp/p.json" --format json
for f in p.export p.json; do
    t "import $f elsewhere" 0 "$ri" snap import --store "$tmp/sp2" --force --name back "$tmp/$f" --json
    t "restore the import of $f" 0 "$ri" snap restore --store "$tmp/sp2" back -o "$tmp/back.wsnp" --uncompressed
    same_file "import of $f: byte for byte" "$tmp/p.wsnp" "$tmp/back.wsnp"
done
t "gc --verify with a paused snapshot" 0 "$ri" snap gc --store "$tmp/sp" --verify --text
out_has 'verify: [0-9]+ files checked, 0 damaged'

# ---- header fields checked against what the store holds ----------------------------------------------
# c.wsnp does not embed its module, which the store holds: the same image naming the module
# with one byte more is refused (the store used to take it, and then could not export it).
python3 - "$tmp/c.wsnp" "$tmp/c-lie.wsnp" <<'PY' || exit 1
import struct, sys
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
d = bytearray(open(sys.argv[1], "rb").read())
assert d[8:12] == b"META" and b"MODL" not in d[8:200]
size, = struct.unpack_from("<Q", d, 56)
struct.pack_into("<Q", d, 56, size + 1)
struct.pack_into("<I", d, len(d) - 4, crc32c(bytes(d[:-20])))
open(sys.argv[2], "wb").write(d)
PY
t "save b (the store holds the module)" 0 "$ri" snap save --store "$tmp/sh" b "$tmp/b.wsnp"
t "save an image naming the module with another size" 3 "$ri" snap save --store "$tmp/sh" lie "$tmp/c-lie.wsnp"
err_has 'but the store holds that module with'
t "import it" 3 "$ri" snap import --store "$tmp/sh" --name lie "$tmp/c-lie.wsnp"
err_has 'but the store holds that module with'
t "nothing was saved" 3 "$ri" snap show --store "$tmp/sh" lie
t "gc --verify after the refusals" 0 "$ri" snap gc --store "$tmp/sh" --verify --text
out_has 'verify: [0-9]+ files checked, 0 damaged'

cli_done
