;; Host functions of every value type, one that fails, one that reads and writes the caller's
;; memory, one that may pause the call.
(module
  (import "env" "add" (func $add (param i32 i32) (result i32)))
  (import "env" "wide" (func $wide (param i64 f32 f64) (result i64 f32 f64)))
  (import "env" "fail" (func $fail (param i32)))
  (import "env" "greet" (func $greet (param i32 i32) (result i32)))
  (import "env" "tick" (func $tick (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "world")
  (func (export "call_add") (param i32 i32) (result i32) (call $add (local.get 0) (local.get 1)))
  (func (export "call_wide") (param i64 f32 f64) (result i64 f32 f64)
    (call $wide (local.get 0) (local.get 1) (local.get 2)))
  (func (export "call_fail") (param i32) (call $fail (local.get 0)))
  ;; greet(ptr 0, len 5) writes its answer at 16 and returns its length
  (func (export "call_greet") (result i32) (call $greet (i32.const 0) (i32.const 5)))
  (func (export "byte") (param i32) (result i32) (i32.load8_u (local.get 0)))
  ;; the sum of n calls of tick()
  (func (export "ticks") (param $n i32) (result i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (i32.add (local.get $s) (call $tick)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $s)))
