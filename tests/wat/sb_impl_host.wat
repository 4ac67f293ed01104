;; Fixture: declared host functions (see test_sandbox_impl_*.c for their C side).
(module
  (import "env" "memory" (memory 1))
  (import "env" "add3" (func $add3 (param i32 i32 i32) (result i32)))
  (import "env" "fail" (func $fail))
  (import "env" "scale" (func $scale (param i64 f64) (result f64)))
  (func (export "call_add3") (param i32 i32 i32) (result i32)
    local.get 0 local.get 1 local.get 2 call $add3)
  (func (export "call_fail") (result i32) call $fail i32.const 1)
  (func (export "call_scale") (param i64 f64) (result f64)
    local.get 0 local.get 1 call $scale)
  ;; n calls of add3: n gas.
  (func (export "calls") (param $n i32) (result i32)
    (local $i i32) (local $sum i32)
    (block $done
      (loop $l
        local.get $i local.get $n i32.ge_s br_if $done
        local.get $sum i32.const 1 i32.const 0 call $add3 local.set $sum
        local.get $i i32.const 1 i32.add local.set $i
        br $l))
    local.get $sum))
