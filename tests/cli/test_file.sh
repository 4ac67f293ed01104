#!/usr/bin/env bash
# `ri file` on the workspace of WASI snapshots (image files and store snapshots): ls, cat,
# add (a file, a tree, in place and with -o), rm, extract, their errors (a corrupt image,
# a missing path, an image without a workspace); and `ri run --snapshot` / `ri resume
# --snapshot` chains of a C program paused by gas, which must give the uninterrupted run's
# stdout, exit code and files (when tests/c-wasi was built: RI_C_WASI_DIR).
#
#   bash tests/cli/test_file.sh [PATH/TO/ri]        (default: build/ri)
set -u

. "$(dirname "$0")/lib.sh"
cli_init file "$@"

wat() { # wat NAME TEXT: compiles a module into $tmp/NAME.wasm
    printf '%s\n' "$2" >"$tmp/$1.wat"
    wat2wasm "$tmp/$1.wat" -o "$tmp/$1.wasm" || { echo "test_file: wat2wasm failed on $1" >&2; exit 1; }
}
# The smallest WASI command: it returns at once, leaving an empty workspace.
wat nop '(module (import "wasi_snapshot_preview1" "proc_exit" (func (param i32))) (memory (export "memory") 1)
  (func (export "_start")))'
wat plain '(module (memory (export "memory") 1) (func (export "f") (result i32) (i32.const 7)))'

# ---- help and usage ----
t "help" 0 "$ri" file --help && out_has 'ls IMAGE \[PATH\]' && out_has 'extract IMAGE'
t "no subcommand" 2 "$ri" file
t "unknown subcommand" 2 "$ri" file frob x.wsnp && err_has "unknown subcommand 'frob'"
t "missing image" 2 "$ri" file ls && err_has 'missing IMAGE'
t "ri --help lists file" 0 "$ri" --help && out_has 'file ls\|cat\|add\|rm\|extract'

# ---- an image with an empty workspace, then files added ----
t "run --snapshot a WASI command" 0 "$ri" run --snapshot "$tmp/base.wsnp" "$tmp/nop.wasm"
t "ls an empty workspace" 0 "$ri" file ls --text "$tmp/base.wsnp" && out_empty
mkdir -p "$tmp/host/tree/sub" "$tmp/host/tree/empty"
printf 'alpha\n' >"$tmp/host/a.txt"
printf 'one' >"$tmp/host/tree/one.txt"
printf 'two two' >"$tmp/host/tree/sub/two.txt"
ln -s one.txt "$tmp/host/tree/link"
t "add a file (-o)" 0 "$ri" file add --text "$tmp/base.wsnp" "$tmp/host/a.txt" /data/a.txt -o "$tmp/one.wsnp" &&
    out_has "added /data/a.txt: image .*one.wsnp"
t "the source image is unchanged" 0 "$ri" file ls --text "$tmp/base.wsnp" && out_empty
t "ls -R -l" 0 "$ri" file ls --text -R -l "$tmp/one.wsnp" &&
    out_has '^directory +0  /data/$' && out_has '^file +6  /data/a.txt$'
t "cat" 0 "$ri" file cat "$tmp/one.wsnp" /data/a.txt && same_file "cat gives the bytes" "$tmp/out" "$tmp/host/a.txt"
t "add a tree in place" 0 "$ri" file add "$tmp/one.wsnp" "$tmp/host/tree" /tree
t "add the tree again: merged" 0 "$ri" file add "$tmp/one.wsnp" "$tmp/host/tree" /tree -o "$tmp/twice.wsnp"
t "ls a directory" 0 "$ri" file ls --text "$tmp/one.wsnp" /tree &&
    out_has '^empty/$' && out_has '^link$' && out_has '^one.txt$' && out_has '^sub/$'
t "ls -l shows the symlink" 0 "$ri" file ls --text -l "$tmp/one.wsnp" /tree && out_has 'symlink +7  link -> one.txt'
t "ls --json" 0 "$ri" file ls --json "$tmp/one.wsnp" /tree/sub &&
    out_has '"path": "/tree/sub/two.txt"' && out_has '"size": 7' && out_has '"type": "file"'
t "ls sorted by name" 0 "$ri" file ls --text "$tmp/one.wsnp" /
if [ "$(tr '\n' ' ' <"$tmp/out")" = "data/ tree/ " ]; then pass; else fail "root listing: $(cat "$tmp/out")"; fi
t "extract a tree" 0 "$ri" file extract "$tmp/one.wsnp" /tree "$tmp/ex"
if diff -r "$tmp/host/tree" "$tmp/ex" >/dev/null && [ -L "$tmp/ex/link" ]; then pass; else fail "extracted tree differs"; fi
t "extract everything" 0 "$ri" file extract "$tmp/one.wsnp" "$tmp/all" && same_file "extracted file" "$tmp/all/data/a.txt" "$tmp/host/a.txt"
t "extract one file" 0 "$ri" file extract "$tmp/one.wsnp" /tree/sub/two.txt "$tmp/single" &&
    same_file "extracted single file" "$tmp/single/two.txt" "$tmp/host/tree/sub/two.txt"
t "the edited image still inspects" 0 "$ri" inspect --json "$tmp/one.wsnp"
t "the edited image still restores and runs" 0 "$ri" run --snapshot "$tmp/again.wsnp" "$tmp/nop.wasm"

# ---- rm ----
t "rm a non-empty directory without -r" 3 "$ri" file rm "$tmp/one.wsnp" /tree -o "$tmp/x.wsnp" &&
    err_has 'not empty' && err_has -- '-r removes'
if [ ! -e "$tmp/x.wsnp" ]; then pass; else fail "a refused rm wrote an image"; fi
t "rm a file" 0 "$ri" file rm "$tmp/one.wsnp" /tree/one.txt -o "$tmp/two.wsnp"
t "the file is gone" 3 "$ri" file cat "$tmp/two.wsnp" /tree/one.txt && err_has 'no such file or directory'
t "rm -r" 0 "$ri" file rm -r "$tmp/two.wsnp" /tree
t "only /data is left" 0 "$ri" file ls --text "$tmp/two.wsnp" && out_has '^data/$' && out_lacks tree

# ---- ri diff lists the files ----
t "an image without a workspace" 0 "$ri" run --snapshot "$tmp/plain.wsnp" "$tmp/plain.wasm" f
t "diff --text" 0 "$ri" diff --text "$tmp/one.wsnp" "$tmp/two.wsnp" &&
    out_has 'files +0 added, 6 removed, 0 changed, 0 moved' && out_has -- '- /tree/sub/two.txt \(7 bytes\)' &&
    out_has -- '- /tree/empty/$'
t "diff --json" 0 "$ri" diff --json "$tmp/one.wsnp" "$tmp/two.wsnp" && out_has '"files": \{' &&
    out_has '"removed": 6' && out_has '"path": "/tree/one.txt"' && out_has '"identical": false'
t "diff --exit-code: only files differ" 1 "$ri" diff --exit-code "$tmp/base.wsnp" "$tmp/one.wsnp"
t "a changed file" 0 "$ri" file add "$tmp/one.wsnp" "$tmp/host/tree/sub/two.txt" /data/a.txt -o "$tmp/changed.wsnp"
t "diff shows its changed bytes" 0 "$ri" diff --text "$tmp/one.wsnp" "$tmp/changed.wsnp" &&
    out_has -- '~ /data/a.txt: 7 bytes differ \(6 -> 7 bytes\)'
t "no files without workspaces" 0 "$ri" diff --json "$tmp/plain.wsnp" "$tmp/plain.wsnp" && out_has '"files": null'

# ---- errors ----
t "cat a missing file" 3 "$ri" file cat "$tmp/one.wsnp" /nope && err_has "'/nope': no such file or directory"
t "cat a directory" 3 "$ri" file cat "$tmp/one.wsnp" /tree && err_has 'is a directory'
t "ls a missing directory" 3 "$ri" file ls "$tmp/one.wsnp" /missing && err_has 'no such file'
t "a relative guest path" 2 "$ri" file add "$tmp/one.wsnp" "$tmp/host/a.txt" data/a.txt && err_has 'not absolute'
t "a '..' guest path" 3 "$ri" file add "$tmp/one.wsnp" "$tmp/host/a.txt" /data/../x && err_has "'\.' and '\.\.'"
t "a missing host file" 3 "$ri" file add "$tmp/one.wsnp" "$tmp/host/none" /x && err_has 'cannot read'
t "a missing image" 3 "$ri" file ls "$tmp/none.wsnp" && err_has 'cannot read'
cp "$tmp/one.wsnp" "$tmp/bad.wsnp"
printf '\x55' | dd of="$tmp/bad.wsnp" bs=1 seek=40 conv=notrunc 2>/dev/null
t "a corrupt image" 3 "$ri" file ls "$tmp/bad.wsnp" && err_has 'checksum'
t "ls an image without a workspace" 3 "$ri" file ls "$tmp/plain.wsnp" && err_has 'holds no workspace'
t "a v1 image" 0 "$ri" run --format v1 --snapshot "$tmp/v1.wsnp" "$tmp/plain.wasm" f
t "ls it" 3 "$ri" file ls "$tmp/v1.wsnp" && err_has 'v1 image holds memory only'

# ---- store snapshots ----
S=$tmp/store
t "save into a store" 0 "$ri" snap save --store "$S" base "$tmp/one.wsnp"
# A store that cannot give WASI images back yet (its manifests do not know WSFS) skips these.
if "$ri" snap restore --store "$S" base -o "$tmp/back.wsnp" >/dev/null 2>"$tmp/store.err"; then
    t "ls a store snapshot" 0 "$ri" file ls --text --store "$S" base /data && out_has '^a.txt$'
    t "add to a new store snapshot" 0 "$ri" file add --text --store "$S" base "$tmp/host/tree/one.txt" /b.txt -o base2 &&
        out_has 'snapshot base2'
    t "cat from it" 0 "$ri" file cat --store "$S" base2 /b.txt && out_has '^one$'
    t "the old snapshot is unchanged" 3 "$ri" file cat --store "$S" base /b.txt
    t "rm in place in the store" 0 "$ri" file rm --store "$S" base /data/a.txt
    t "gone from the snapshot" 3 "$ri" file cat --store "$S" base /data/a.txt
else
    echo "test_file: the store does not give WASI images back ($(head -c 200 "$tmp/store.err")): store tests skipped"
    t "the store's error is reported" 3 "$ri" file ls --store "$S" base && err_has 'ri file ls: '
fi
t "a missing store snapshot" 3 "$ri" file ls --store "$S" nope && err_has 'not found'

# ---- run --snapshot / resume --snapshot chains (a C program, paused by gas) ----
cw=${RI_C_WASI_DIR:-}
if [ -n "$cw" ] && [ -f "$cw/counter.wasm" ]; then
    C=$cw/counter.wasm
    name="uninterrupted run"
    "$ri" run --env COUNTER_TAG=n: --snapshot "$tmp/full.wsnp" "$C" 120 >"$tmp/full.out" 2>"$tmp/full.err" </dev/null
    full_rc=$?
    if [ "$full_rc" -eq 3 ]; then pass; else fail "exit status $full_rc, expected 3"; fi
    name="first slice pauses"
    "$ri" run --env COUNTER_TAG=n: --gas 40000 --snapshot "$tmp/p1.wsnp" "$C" 120 >"$tmp/chain.out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q 'the process paused' "$tmp/err"; then pass; else fail "status $rc"; fi
    t "ls the paused process's files" 0 "$ri" file ls --text "$tmp/p1.wsnp" / && out_has '^out/$'
    i=1
    while [ "$i" -lt 200 ]; do
        "$ri" resume --gas 40000 --snapshot "$tmp/p$((i + 1)).wsnp" "$tmp/p$i.wsnp" >>"$tmp/chain.out" 2>"$tmp/err" </dev/null
        rc=$?
        grep -q 'the process paused' "$tmp/err" || break
        i=$((i + 1))
    done
    name="the chain has several slices"
    if [ "$i" -ge 3 ]; then pass; else fail "only $i slices"; fi
    name="the chain ends with the program's exit code"
    if [ "$rc" -eq 3 ]; then pass; else fail "exit status $rc"; fi
    same_file "the same stdout as uninterrupted" "$tmp/full.out" "$tmp/chain.out"
    "$ri" file extract "$tmp/full.wsnp" /out "$tmp/full.files" >/dev/null 2>&1
    "$ri" file extract "$tmp/p$((i + 1)).wsnp" /out "$tmp/chain.files" >/dev/null 2>&1
    name="the same files as uninterrupted"
    if [ -s "$tmp/full.files/summary.txt" ] && diff -r "$tmp/full.files" "$tmp/chain.files" >/dev/null; then pass; else
        fail "the workspaces differ"; fi
    t "resume of a finished process" 3 "$ri" resume "$tmp/full.wsnp" && err_has 'no paused call'
    t "the pause with --json" 0 "$ri" run --json --gas 40000 --snapshot "$tmp/j.wsnp" "$C" 120
    if grep -q '"paused": true' "$tmp/err"; then pass; else fail "no \"paused\": true in the summary"; fi
    t "--pause-on without --snapshot" 2 "$ri" run --gas 40000 --pause-on gas "$C" 5 && err_has 'need --snapshot'
    t "out of gas without --snapshot fails" 1 "$ri" run --gas 40000 "$C" 120 && err_has 'GAS_EXHAUSTED'
    t "add a file to a paused process's image" 0 "$ri" file add "$tmp/p1.wsnp" "$tmp/host/a.txt" /extra.txt -o "$tmp/p1x.wsnp"
    t "it still resumes, with the file" 3 "$ri" resume --snapshot "$tmp/p1x-end.wsnp" "$tmp/p1x.wsnp"
    t "the file is in the final image" 0 "$ri" file cat "$tmp/p1x-end.wsnp" /extra.txt && out_has '^alpha$'
else
    echo "test_file: RI_C_WASI_DIR is not set (no clang-19 or wasi-libc at build time): the chain tests are skipped"
fi

cli_done
