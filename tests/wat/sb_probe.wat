;; Sandbox fixture: calls the declared host function env.probe () -> (), which the tests
;; use to look at the sandbox from inside a running execution.
(module
  (import "env" "probe" (func $probe))
  (func (export "probe1") (result i32)
    call $probe
    i32.const 7)
  (func (export "probe3")
    call $probe
    call $probe
    call $probe))
