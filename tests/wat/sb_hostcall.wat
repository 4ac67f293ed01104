;; Sandbox fixture: calls the declared host function env.double (i32) -> i32.
(module
  (import "env" "double" (func $double (param i32) (result i32)))
  (func (export "callDouble") (param i32) (result i32)
    local.get 0
    call $double))
