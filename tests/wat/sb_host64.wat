;; Sandbox fixture: host functions with i64 and f64 signatures.
(module
  (import "env" "sum64" (func $sum64 (param i64 i64) (result i64)))
  (import "env" "scale" (func $scale (param f64 f32) (result f64)))
  (func (export "callSum64") (param i64 i64) (result i64)
    local.get 0
    local.get 1
    call $sum64)
  (func (export "callScale") (param f64 f32) (result f64)
    local.get 0
    local.get 1
    call $scale))
