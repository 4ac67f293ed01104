;; Suspension fixture (test_suspend.c, test_suspend_sandbox.c, tests/cli/test_resume.sh):
;; programs that reach every kind of stop point with live values of every numeric type
;; on the operand stack below calls: function entry (with and without a constant pool),
;; straight-line regions, loop headers, nested and indirect calls, bulk memory.
(module
  (import "env" "yield" (func $yield (param i32) (result i32)))
  (import "env" "reenter" (func $reenter (param i32) (result i32)))
  (memory (export "memory") 1)
  (global $g (mut i64) (i64.const 7))
  (type $ii (func (param i32) (result i32)))
  (table 3 funcref)
  (elem (i32.const 0) $sq $fill $tri)

  ;; i*i + a constant the pool holds (ENTRY with constants)
  (func $sq (type $ii) (param $x i32) (result i32)
    (i32.add (i32.mul (local.get $x) (local.get $x)) (i32.const 123456789)))
  ;; bulk memory: fill x bytes, copy them along, return the sum of two bytes
  (func $fill (type $ii) (param $x i32) (result i32)
    (memory.fill (i32.const 100) (local.get $x) (i32.and (local.get $x) (i32.const 63)))
    (memory.copy (i32.const 200) (i32.const 100) (i32.const 32))
    (i32.add (i32.load8_u (i32.const 100)) (i32.load8_u (i32.const 231))))
  ;; recursion: x + (x-1) + ... (nested calls)
  (func $tri (type $ii) (param $x i32) (result i32)
    (if (result i32) (i32.le_s (local.get $x) (i32.const 0))
      (then (i32.const 0))
      (else (i32.add (local.get $x) (call $tri (i32.sub (local.get $x) (i32.const 1)))))))

  ;; The mixed program: a loop whose body keeps an i64, an f64 and an i32 on the
  ;; operand stack while it calls through the table.
  (func (export "mix") (param $n i32) (result i64)
    (local $i i32) (local $acc i64) (local $f f64)
    (local.set $f (f64.const 0.5))
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc
          (i64.add
            (i64.add (local.get $acc) (i64.extend_i32_u (local.get $i)))
            (i64.trunc_f64_s
              (f64.add (local.get $f)
                (f64.convert_i32_s
                  (i32.add (local.get $i)
                    (call_indirect (type $ii) (i32.and (local.get $i) (i32.const 7))
                      (i32.rem_u (local.get $i) (i32.const 3)))))))))
        (local.set $f (f64.mul (local.get $f) (f64.const 1.25)))
        (global.set $g (i64.add (global.get $g) (local.get $acc)))
        (i32.store (i32.mul (i32.and (local.get $i) (i32.const 15)) (i32.const 4)) (i32.wrap_i64 (local.get $acc)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (i64.add (local.get $acc) (global.get $g)))

  ;; Deep recursion: depth n.
  (func $deep (export "deep") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else (i32.add (i32.const 3) (call $deep (i32.sub (local.get $n) (i32.const 1)))))))

  ;; A long loop (for interrupts): n rounds of an LCG.
  (func (export "spin") (param $n i32) (result i32)
    (local $x i32)
    (local.set $x (i32.const 1))
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $x (i32.add (i32.mul (local.get $x) (i32.const 1103515245)) (i32.const 12345)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $x))

  ;; n host calls, each of which may yield; the results are summed.
  (func (export "yields") (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (i32.mul (local.get $s) (i32.const 3)) (call $yield (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $s))

  ;; The host function env.reenter calls back into this store (nested run).
  (func (export "nested") (param $n i32) (result i32)
    (call $reenter (local.get $n)))
)
