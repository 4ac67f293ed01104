;; wat2wasm: --enable-tail-call
;; Tail calls (test_tail_call.c): a counting loop of return_calls, mutual recursion
;; through the table (return_call_indirect), a chain below a waiting caller, and a
;; tail call of a host import.
(module
  (import "env" "host" (func $host (param i32) (result i32)))
  (type $ii (func (param i32 i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $even $odd)
  (memory 1)
  (global $steps (mut i32) (i32.const 0))

  ;; acc' = acc * 31 + n, n times, then acc: one frame however large n is
  (func $count (param $n i32) (param $acc i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (return (local.get $acc))))
    (global.set $steps (i32.add (global.get $steps) (i32.const 1)))
    (return_call $count (i32.sub (local.get $n) (i32.const 1))
                        (i32.add (i32.mul (local.get $acc) (i32.const 31)) (local.get $n))))
  (func (export "count") (param $n i32) (result i32)
    (return_call $count (local.get $n) (i32.const 7)))

  ;; the same recursion in non-tail position: one frame per step
  (func $count_call (param $n i32) (param $acc i32) (result i32)
    (if (i32.eqz (local.get $n)) (then (return (local.get $acc))))
    (call $count_call (i32.sub (local.get $n) (i32.const 1))
                      (i32.add (i32.mul (local.get $acc) (i32.const 31)) (local.get $n))))
  (func (export "count_call") (param $n i32) (result i32)
    (call $count_call (local.get $n) (i32.const 7)))

  ;; even and odd hand over to each other through the table; each step stores its n
  (func $even (param $n i32) (param $acc i32) (result i32)
    (i32.store (i32.and (i32.shl (local.get $n) (i32.const 2)) (i32.const 0xfffc)) (local.get $acc))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.add (local.get $acc) (i32.const 1000)))
      (else (return_call_indirect (type $ii)
              (i32.sub (local.get $n) (i32.const 1)) (i32.add (local.get $acc) (i32.const 3)) (i32.const 1)))))
  (func $odd (param $n i32) (param $acc i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.add (local.get $acc) (i32.const 2000)))
      (else (return_call_indirect (type $ii)
              (i32.sub (local.get $n) (i32.const 1)) (i32.xor (local.get $acc) (i32.const 5)) (i32.const 0)))))

  ;; a tail call of an import: a plain call, then a return
  (func $via_host (param $n i32) (result i32)
    (return_call $host (i32.add (local.get $n) (i32.const 1))))

  ;; everything, with callers waiting in calls while the chains run
  (func (export "mix") (param $n i32) (result i32)
    (i32.add
      (i32.add (call $even (local.get $n) (i32.const 1)) (call $count (local.get $n) (i32.const 3)))
      (i32.add (call $via_host (local.get $n)) (global.get $steps))))
  ;; a tail call whose arguments hold a v128 (two slots) before an i32
  (func $vsum (param v128 i32) (result i32)
    (i32.add (i32x4.extract_lane 3 (local.get 0)) (local.get 1)))
  (func (export "vtail") (param i32) (result i32)
    (return_call $vsum (i32x4.splat (local.get 0)) (i32.const 100)))
)
