#!/usr/bin/env bash
# `ri run --lang LANGUAGE`: code as text through an interpreter built to WebAssembly (the
# Ruby of scripts/fetch-interpreters.sh: $RI_INTERPRETERS_DIR or ~/.cache/ri/interpreters):
# -c and a file, stdin, the exit code as ri's exit status, an error's message, files
# copied in and back, and the usage errors.
#
#   bash tests/cli/test_lang.sh [PATH/TO/ri]        (default: build/ri)
set -u

. "$(dirname "$0")/lib.sh"
cli_init lang "$@"

out_is() { if [ "$(cat "$tmp/out")" = "$1" ]; then pass; else fail "stdout is not exactly '$1'"; fi; }

# usage errors come before any interpreter is read
t "unknown language" 2 "$ri" run --lang cobol -c 'DISPLAY 1'
err_has "unknown language 'cobol' \(known: ruby, lua, python, javascript\)"
t "no code" 2 "$ri" run --lang ruby
err_has 'no code: give -c CODE or a FILE'
t "--help" 0 "$ri" run --lang ruby --help
out_has '^usage: ri run --lang LANGUAGE'
t "missing interpreter" 3 "$ri" run --lang ruby --interpreter "$tmp/none.wasm" -c 'p 1'
err_has "cannot read the ruby interpreter '.*none.wasm': No such file or directory \(scripts/fetch-interpreters.sh installs it"

# a program with stdin, files and an exit code, from a file, in one run
mkdir -p "$tmp/data"
printf 'one\ntwo\n' >"$tmp/data/in.txt"
cat >"$tmp/prog.rb" <<'RUBY'
lines = File.readlines('/data/in.txt', chomp: true)
name = $stdin.gets.strip
File.write('/data/out.txt', lines.map(&:upcase).join(',') + " for #{name}\n")
puts "read #{lines.size} lines"
$stderr.puts 'to stderr'
exit 4
RUBY
name="a program from a file"
cmd=("$ri" run --lang ruby --dir "$tmp/data::/data" --dir-writeback "$tmp/prog.rb")
echo ruby | "${cmd[@]}" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 4 ]; then pass; else fail "exit status $?, expected 4"; fi
out_is "read 2 lines"
err_is "to stderr"
if [ "$(cat "$tmp/data/out.txt" 2>/dev/null)" = "ONE,TWO for ruby" ]; then pass; else fail "out.txt was not written back"; fi

# an uncaught error: its message as ruby prints it, exit status 1
t "an error" 1 "$ri" run --lang ruby -c $'puts :start\nraise ArgumentError, "bad input"'
out_is "start"
err_is "main.rb:2:in '<main>': bad input (ArgumentError)"

# a limit: gas stops an endless loop, and the option that raises it is named
t "gas limit" 1 "$ri" run --lang ruby --max-gas 2000000000 -c 'loop { }'
err_has 'GAS_EXHAUSTED: gas used [0-9]+, limit 2000000000'
err_has -- '--max-gas'

# Lua and Python (Emscripten builds): the same contract
t "lua: hello, files" 0 "$ri" run --lang lua -c 'local f = io.open("/x.txt", "w") f:write("data") f:close() print(io.open("/x.txt"):read("a"), 1 + 1)'
out_is "data	2"
t "lua: an error" 1 "$ri" run --lang lua -c $'print(1)\nerror("boom")'
out_is "1"
err_is "lua: main.lua:2: boom"
t "lua: os.exit" 5 "$ri" run --lang lua -c 'print("]==]") os.exit(5)'
out_is "]==]"
name="lua: stdin"
echo "a line" | "$ri" run --lang lua -c 'print(io.read("l"):upper())' >"$tmp/out" 2>"$tmp/err" && pass || fail "exit status"
out_is "A LINE"
t "python: hello, files" 0 "$ri" run --lang python -c $'with open("/x.txt", "w") as f:\n    f.write("data")\nprint(open("/x.txt").read(), 1 + 1, "it\'s \\\\")'
out_is "data 2 it's \\"
t "python: an exception" 1 "$ri" run --lang python -c $'print(1)\ndef f():\n    raise ValueError("boom")\nf()'
out_is "1"
err_is $'Traceback (most recent call last):\n  File "main.py", line 4, in <module>\n  File "main.py", line 3, in f\nValueError: boom'
t "python: sys.exit" 7 "$ri" run --lang python -c 'import sys; print("x"); sys.exit(7)'
out_is "x"
name="python: stdin"
echo "a line" | "$ri" run --lang python -c 'import sys; print(sys.stdin.readline().strip().upper())' >"$tmp/out" 2>"$tmp/err" && pass || fail "exit status"
out_is "A LINE"
t "python: gas limit" 1 "$ri" run --lang python --max-gas 50000000 -c 'while True: pass'
err_has 'GAS_EXHAUSTED'

# JavaScript (QuickJS-NG, quickjs-wasi's WASI build): the same contract, `js` as the short name
t "javascript: hello" 0 "$ri" run --lang js -c 'console.log(1 + 1, [1, "a", {b: 2}], new Map([[1, 2]]))'
out_is "2 [ 1, 'a', { b: 2 } ] Map(1) { 1 => 2 }"
t "javascript: an uncaught error" 1 "$ri" run --lang javascript -c $'console.log("start")\nthrow new Error("boom")'
out_is "start"
err_is $'Error: boom\n    at <eval> (main.js:2:11)'
t "javascript: a rejected top-level await" 1 "$ri" run --lang js -c 'await Promise.reject(new TypeError("late"))'
err_has '^TypeError: late'
t "javascript: a syntax error" 1 "$ri" run --lang js -c 'let = ;'
err_has '^SyntaxError: '
t "javascript: process.exit" 6 "$ri" run --lang js -c 'async function f() { await null; console.log("job"); process.exit(6) } f(); console.log("sync")'
out_is $'sync\njob'
printf 'console.log(Math.random() === Math.random(), new Date().toISOString())\n' >"$tmp/prog.js"
t "javascript: a file, the seed and the clock" 0 "$ri" run --lang js --seed 7 --timestamp 1700000000000 "$tmp/prog.js"
out_is "false 2023-11-14T22:13:20.000Z"
"$ri" run --lang js --seed 7 -c 'console.log(Math.random())' >"$tmp/r1" 2>&1
"$ri" run --lang js --seed 7 -c 'console.log(Math.random())' >"$tmp/r2" 2>&1
"$ri" run --lang js --seed 8 -c 'console.log(Math.random())' >"$tmp/r3" 2>&1
name="javascript: Math.random from the seed"
if cmp -s "$tmp/r1" "$tmp/r2" && ! cmp -s "$tmp/r1" "$tmp/r3"; then pass; else fail "the same seed gave other numbers, or another seed the same"; fi
name="javascript: stdin"
printf 'a line\nrest\n' | "$ri" run --lang js -c 'console.log(readline().toUpperCase(), JSON.stringify(require("fs").readFileSync(0, "utf8")))' >"$tmp/out" 2>"$tmp/err" && pass || fail "exit status"
out_is 'A LINE "rest\n"'
mkdir -p "$tmp/jsdata" && printf 'one\ntwo\n' >"$tmp/jsdata/in.txt"
t "javascript: files of a --dir, written back" 0 "$ri" run --lang js --dir "$tmp/jsdata::/data" --dir-writeback -c \
    'const fs = require("fs"); const n = fs.readFileSync("/data/in.txt", "utf8").trim().split("\n").length; fs.mkdirSync("/data/sub/deep", {recursive: true}); fs.writeFileSync("/data/sub/deep/out.txt", "lines: " + n + "\n"); fs.appendFileSync("/data/sub/deep/out.txt", "é\n"); console.log(fs.readdirSync("/data"), fs.statSync("/data/sub").isDirectory(), fs.existsSync("/data/none"))'
out_is "[ 'in.txt', 'sub' ] true false"
name="javascript: the file written back"
if [ "$(cat "$tmp/jsdata/sub/deep/out.txt" 2>/dev/null)" = "$(printf 'lines: 2\n\xc3\xa9')" ]; then pass; else fail "out.txt: $(cat "$tmp/jsdata/sub/deep/out.txt" 2>&1)"; fi
t "javascript: a missing file" 1 "$ri" run --lang js -c 'require("fs").readFileSync("/none.txt")'
err_has "ENOENT: no such file or directory, open '/none.txt'"
t "javascript: gas limit" 1 "$ri" run --lang js --max-gas 50000000 -c 'for (;;) {}'
err_has 'GAS_EXHAUSTED'
t "javascript: gas limit in promise jobs" 1 "$ri" run --lang js --max-gas 50000000 -c '(async () => { for (;;) await null })()'
err_has 'GAS_EXHAUSTED'

cli_done
