;; Sandbox fixture: two declared host functions; callBoth(n) = double(n) + triple(n).
(module
  (import "env" "double" (func $double (param i32) (result i32)))
  (import "env" "triple" (func $triple (param i32) (result i32)))
  (func (export "callBoth") (param i32) (result i32)
    local.get 0
    call $double
    local.get 0
    call $triple
    i32.add))
