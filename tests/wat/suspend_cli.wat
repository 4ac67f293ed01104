;; `ri resume` fixture (tests/cli/test_resume.sh): no imports, so any sandbox runs it;
;; a loop calling through a table into recursion and bulk memory, a mutable global.
(module
  (memory (export "memory") 1)
  (global $g (mut i64) (i64.const 7))
  (type $ii (func (param i32) (result i32)))
  (table 3 funcref)
  (elem (i32.const 0) $sq $fill $tri)
  (func $sq (type $ii) (param $x i32) (result i32)
    (i32.add (i32.mul (local.get $x) (local.get $x)) (i32.const 123456789)))
  (func $fill (type $ii) (param $x i32) (result i32)
    (memory.fill (i32.const 100) (local.get $x) (i32.and (local.get $x) (i32.const 63)))
    (memory.copy (i32.const 200) (i32.const 100) (i32.const 32))
    (i32.add (i32.load8_u (i32.const 100)) (i32.load8_u (i32.const 231))))
  (func $tri (type $ii) (param $x i32) (result i32)
    (if (result i32) (i32.le_s (local.get $x) (i32.const 0))
      (then (i32.const 0))
      (else (i32.add (local.get $x) (call $tri (i32.sub (local.get $x) (i32.const 1)))))))
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
)
