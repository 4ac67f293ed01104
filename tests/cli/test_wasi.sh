#!/usr/bin/env bash
# `ri run` of WASI commands: the program's arguments and environment, stdin, stdout and
# stderr, its exit code as ri's exit status, --dir copies in and --dir-writeback out, and
# traps and limits (exit status 1).
#
#   bash tests/cli/test_wasi.sh [PATH/TO/ri]        (default: build/ri)
#
# WAT fixtures need wat2wasm; the C programs of tests/c-wasi (RI_C_WASI_DIR, built when
# clang-19 and wasi-libc are there) are used when present.
set -u

. "$(dirname "$0")/lib.sh"
cli_init wasi "$@"

wat() { # wat NAME TEXT: compiles a module into $tmp/NAME.wasm
    printf '%s\n' "$2" >"$tmp/$1.wat"
    wat2wasm "$tmp/$1.wat" -o "$tmp/$1.wasm" || { echo "test_wasi: wat2wasm failed on $1" >&2; exit 1; }
}
W='"wasi_snapshot_preview1"'
# Prints its arguments, then its environment, each string NUL-terminated, on stdout.
wat echo "(module
  (import $W \"args_sizes_get\" (func \$asz (param i32 i32) (result i32)))
  (import $W \"args_get\" (func \$aget (param i32 i32) (result i32)))
  (import $W \"environ_sizes_get\" (func \$esz (param i32 i32) (result i32)))
  (import $W \"environ_get\" (func \$eget (param i32 i32) (result i32)))
  (import $W \"fd_write\" (func \$write (param i32 i32 i32 i32) (result i32)))
  (memory (export \"memory\") 1)
  (func \$out (param \$buf i32) (param \$len i32)
    (i32.store (i32.const 0) (local.get \$buf)) (i32.store (i32.const 4) (local.get \$len))
    (drop (call \$write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export \"_start\")
    (drop (call \$asz (i32.const 16) (i32.const 20)))
    (drop (call \$aget (i32.const 1024) (i32.const 8192)))
    (call \$out (i32.const 8192) (i32.load (i32.const 20)))
    (drop (call \$esz (i32.const 16) (i32.const 20)))
    (drop (call \$eget (i32.const 1024) (i32.const 16384)))
    (call \$out (i32.const 16384) (i32.load (i32.const 20)))))"
# Prints the file data/in.txt (relative to the preopened /), or exits 100 + errno.
wat cat "(module
  (import $W \"path_open\" (func \$open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import $W \"fd_read\" (func \$read (param i32 i32 i32 i32) (result i32)))
  (import $W \"fd_write\" (func \$write (param i32 i32 i32 i32) (result i32)))
  (import $W \"proc_exit\" (func \$exit (param i32)))
  (memory (export \"memory\") 1)
  (data (i32.const 64) \"data/in.txt\")
  (func (export \"_start\") (local \$e i32)
    (local.set \$e (call \$open (i32.const 3) (i32.const 1) (i32.const 64) (i32.const 11) (i32.const 0)
                    (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 0)))
    (if (local.get \$e) (then (call \$exit (i32.add (i32.const 100) (local.get \$e)))))
    (i32.store (i32.const 32) (i32.const 1024)) (i32.store (i32.const 36) (i32.const 4096))
    (local.set \$e (call \$read (i32.load (i32.const 0)) (i32.const 32) (i32.const 1) (i32.const 40)))
    (if (local.get \$e) (then (call \$exit (i32.add (i32.const 100) (local.get \$e)))))
    (i32.store (i32.const 36) (i32.load (i32.const 40)))
    (drop (call \$write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 44)))))"
# Removes old.txt and writes new.txt (\"new\\n\") in the preopened /.
wat edit "(module
  (import $W \"path_unlink_file\" (func \$unlink (param i32 i32 i32) (result i32)))
  (import $W \"path_open\" (func \$open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import $W \"fd_write\" (func \$write (param i32 i32 i32 i32) (result i32)))
  (import $W \"proc_exit\" (func \$exit (param i32)))
  (memory (export \"memory\") 1)
  (data (i32.const 64) \"old.txt\")
  (data (i32.const 80) \"new.txt\")
  (data (i32.const 96) \"new\n\")
  (func (export \"_start\") (local \$e i32)
    (local.set \$e (call \$unlink (i32.const 3) (i32.const 64) (i32.const 7)))
    (if (local.get \$e) (then (call \$exit (i32.add (i32.const 100) (local.get \$e)))))
    (local.set \$e (call \$open (i32.const 3) (i32.const 0) (i32.const 80) (i32.const 7) (i32.const 1)
                    (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 0)))
    (if (local.get \$e) (then (call \$exit (i32.add (i32.const 100) (local.get \$e)))))
    (i32.store (i32.const 32) (i32.const 96)) (i32.store (i32.const 36) (i32.const 4))
    (drop (call \$write (i32.load (i32.const 0)) (i32.const 32) (i32.const 1) (i32.const 40)))))"
wat trap "(module (import $W \"proc_exit\" (func (param i32))) (memory (export \"memory\") 1)
  (func (export \"_start\") unreachable))"
wat spin "(module (import $W \"proc_exit\" (func (param i32))) (memory (export \"memory\") 1)
  (func (export \"_start\") (loop \$l (br \$l))))"
wat quit "(module (import $W \"proc_exit\" (func \$exit (param i32))) (memory (export \"memory\") 1)
  (func (export \"_start\") (call \$exit (i32.const 300))))"

# out_is TEXT: stdout (NULs shown as |) is exactly TEXT.
out_is() { local got; got=$(tr '\0' '|' <"$tmp/out"); if [ "$got" = "$1" ]; then pass; else fail "stdout is '$got', expected '$1'"; fi; }

# ---- arguments, environment, options before the module -------------------------------
t "args and env" 0 "$ri" run --env A=1 --env B=x=y "$tmp/echo.wasm" one --json -x 'two words'
out_is "echo.wasm|one|--json|-x|two words|A=1|B=x=y|"
err_is ""
t "no args, no env" 0 "$ri" run "$tmp/echo.wasm"
out_is "echo.wasm|"
t "--env without =" 2 "$ri" run --env NOEQUALS "$tmp/echo.wasm"
err_has "is not KEY=VALUE"
t "--json: the summary on stderr" 0 "$ri" run --json "$tmp/echo.wasm" a
out_is "echo.wasm|a|"
err_has '"exitCode": 0'
err_has '"ok": true'
t "--text: the summary on stderr" 0 "$ri" run --text "$tmp/echo.wasm"
err_has '^exit code: 0'
t "run options refused" 2 "$ri" run --repeat 2 "$tmp/echo.wasm"
err_has "does not apply to a WASI command"
t "--dir for a non-WASI module" 2 "$ri" run --dir "$tmp" "$tmp/trap.wasm.none" f
err_has "for WASI commands"
t "--dir-writeback without --dir" 2 "$ri" run --dir-writeback "$tmp/echo.wasm"
err_has "needs --dir"
t "help names WASI commands" 0 "$ri" run --help
out_has "OPTIONS must come BEFORE the module"
out_has -- "--dir-writeback"

# ---- exit codes, traps, limits ----------------------------------------------------------
t "exit code above 255" 255 "$ri" run "$tmp/quit.wasm"
t "trap: exit 1" 1 "$ri" run "$tmp/trap.wasm"
out_empty
err_has "trap.wasm: WASM_TRAP"
t "gas limit: exit 1 and the hint" 1 "$ri" run --max-gas 10000 "$tmp/spin.wasm"
err_has "GAS_EXHAUSTED"
err_has -- "--max-gas N raises the gas limit"

# ---- --dir: copied in, written back only when asked -----------------------------------------
work=$tmp/work
mkdir -p "$work/data/sub"
printf 'hello from the host\n' >"$work/data/in.txt"
ln -s in.txt "$work/data/link"
ri_abs=$(cd "$(dirname "$ri")" && pwd)/$(basename "$ri")
t "--dir data: the program reads a host file" 0 bash -c 'cd "$1" && "$2" run --dir data "$3"' _ "$work" "$ri_abs" "$tmp/cat.wasm"
out_is "hello from the host"
t "--dir HOST::GUEST" 0 "$ri" run --dir "$work/data::/data" "$tmp/cat.wasm"
out_is "hello from the host"
t "missing file without --dir" 144 "$ri" run "$tmp/cat.wasm"
mkfifo "$work/data/fifo"
t "--dir refuses a special file" 3 "$ri" run --dir "$work/data::/data" "$tmp/cat.wasm"
err_has "is a special file"
out_empty
rm "$work/data/fifo"
t "--dir of a missing directory" 3 "$ri" run --dir "$tmp/nowhere" "$tmp/cat.wasm"

mkdir "$work/edit"
printf 'old\n' >"$work/edit/old.txt"
printf 'keep\n' >"$work/edit/keep.txt"
t "without --dir-writeback the host is unchanged" 0 "$ri" run --dir "$work/edit::/" "$tmp/edit.wasm"
if [ -f "$work/edit/old.txt" ] && [ ! -e "$work/edit/new.txt" ]; then pass; else fail "the host directory changed"; fi
t "--dir-writeback" 0 "$ri" run --dir "$work/edit::/" --dir-writeback "$tmp/edit.wasm"
if [ ! -e "$work/edit/old.txt" ] && [ "$(cat "$work/edit/new.txt")" = new ] && [ "$(cat "$work/edit/keep.txt")" = keep ]; then
    pass
else
    fail "written back: $(ls "$work/edit" | tr '\n' ' ')"
fi
if ls -A "$work/edit" | grep -q 'ri-tmp\|\.tmp'; then fail "a temporary file was left"; else pass; fi

# ---- C programs built against wasi-libc --------------------------------------------------
cw=${RI_C_WASI_DIR:-}
if [ -n "$cw" ] && [ -f "$cw/upper.wasm" ]; then
    name="stdin piped in"
    cmd=("$ri" run "$cw/upper.wasm")
    printf 'hello\nworld\n' | "$ri" run "$cw/upper.wasm" >"$tmp/out" 2>"$tmp/err"
    if [ $? -eq 0 ]; then pass; else fail "exit status"; fi
    out_is "HELLO
WORLD"
    t "exit code and both streams" 7 "$ri" run "$cw/exitcode.wasm" 7 x
    out_is "args=3"
    err_is "bye"
    t "exit code 0" 0 "$ri" run "$cw/exitcode.wasm" 0
    mkdir "$work/files"
    t "files.c with --dir-writeback" 0 "$ri" run --dir "$work/files::/" --dir-writeback "$cw/files.wasm"
    out_has "^z.txt: file 2"
    if [ "$(cat "$work/files/dir/a.txt")" = "file 1" ] && [ ! -e "$work/files/dir/c.txt" ]; then pass; else fail "files.c's files"; fi
else
    echo "test_wasi: RI_C_WASI_DIR is not set (no clang-19 or wasi-libc at build time): the C programs are skipped"
fi

cli_done
