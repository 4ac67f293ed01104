;; Emscripten's JavaScript-side setjmp/longjmp as the engine runs it (test_emsc_invoke.c):
;; invoke_* calls table 0 with a catch point, _emscripten_throw_longjmp unwinds to it,
;; restores the stack pointer that stackSave reads, runs setThrew(1, 0) and the invoke
;; returns 0. The callers read and clear $threw as Emscripten's lowering does.
(module
  (import "env" "invoke_ii" (func $invoke_ii (param i32 i32) (result i32)))
  (import "env" "invoke_vi" (func $invoke_vi (param i32 i32)))
  (import "env" "_emscripten_throw_longjmp" (func $throw))
  (memory (export "memory") 1)
  (global $sp (mut i32) (i32.const 4096))
  (global $threw (mut i32) (i32.const 0))
  (global $threw_value (mut i32) (i32.const 0))
  (global $log (mut i32) (i32.const 0))
  (table (export "__indirect_function_table") 8 funcref)
  (elem (i32.const 1) $sum $deep $inner $thrower $wrong_type)
  (func (export "stackSave") (result i32) global.get $sp)
  (func (export "stackRestore") (param i32) local.get 0 global.set $sp)
  (func $setThrew (export "setThrew") (param i32 i32)
    global.get $threw
    i32.eqz
    if
      local.get 0
      global.set $threw
      local.get 1
      global.set $threw_value
    end)
  ;; log = log * 31 + v (a trace of what ran, in order)
  (func $note (param i32)
    global.get $log
    i32.const 31
    i32.mul
    local.get 0
    i32.add
    global.set $log)
  ;; 1: the sum 1..n, with a loop (many stop points)
  (func $sum (param $n i32) (result i32) (local $s i32)
    block
      loop
        local.get $n
        i32.eqz
        br_if 1
        local.get $s
        local.get $n
        i32.add
        local.set $s
        local.get $n
        i32.const 1
        i32.sub
        local.set $n
        br 0
      end
    end
    local.get $s)
  ;; 2: recurses n levels, each taking 16 bytes of stack, then throws (or returns n when n < 0)
  (func $deep (param $n i32) (result i32)
    global.get $sp
    i32.const 16
    i32.sub
    global.set $sp
    local.get $n
    call $note
    local.get $n
    i32.const 0
    i32.lt_s
    if
      local.get $n
      return
    end
    local.get $n
    i32.eqz
    if
      i32.const 50
      call $sum
      call $note
      call $throw
      unreachable
    end
    local.get $n
    i32.const 1
    i32.sub
    call $deep
    unreachable)
  ;; 4: throws straight away
  (func $thrower (param i32)
    local.get 0
    call $note
    call $throw)
  ;; 3: an invoke inside an invoke: the inner one catches the throw of $thrower, then
  ;; this goes on and returns n + 100 + what the inner one saw
  (func $inner (param $n i32) (result i32)
    i32.const 0
    global.set $threw
    i32.const 4
    local.get $n
    call $invoke_vi
    global.get $threw
    i32.const 0
    global.set $threw
    local.get $n
    i32.const 20
    call $sum
    i32.add
    i32.add
    i32.const 100
    i32.add)
  (func $wrong_type (param i64) (result i32) i32.const 0)
  ;; invoke_ii(index, arg); returns threw * 1000000 + result, and checks that the stack
  ;; pointer is back where it was (else 7777777)
  (func $call (param $index i32) (param $arg i32) (result i32) (local $r i32) (local $t i32)
    i32.const 0
    global.set $threw
    local.get $index
    local.get $arg
    call $invoke_ii
    local.set $r
    global.get $threw
    local.set $t
    i32.const 0
    global.set $threw
    global.get $sp
    i32.const 4096
    i32.ne
    if
      i32.const 7777777
      return
    end
    local.get $t
    i32.const 1000000
    i32.mul
    local.get $r
    i32.add)
  (func (export "sum") (param i32) (result i32) i32.const 1 local.get 0 call $call)
  (func (export "deep") (param i32) (result i32) i32.const 2 local.get 0 call $call)
  (func (export "nested") (param i32) (result i32) i32.const 3 local.get 0 call $call)
  (func (export "bad_index") (result i32) i32.const 99 i32.const 0 call $call)
  (func (export "bad_type") (result i32) i32.const 5 i32.const 0 call $call)
  (func (export "uncaught") (result i32) i32.const 3 call $note call $throw i32.const 0)
  (func (export "log") (result i32) global.get $log)
  ;; everything: a nested catch, a deep throw, sums; the trace and results folded together
  (func (export "mix") (param $n i32) (result i32) (local $acc i32)
    i32.const 3
    local.get $n
    call $call
    i32.const 2
    local.get $n
    call $call
    i32.add
    i32.const 1
    local.get $n
    i32.const 10
    i32.mul
    call $call
    i32.add
    i32.const 2
    i32.const -1
    call $call
    i32.add
    global.get $log
    i32.xor))
