;; Sandbox fixture: returns whatever the declared host function env.entropy returns
;; (a non-deterministic host function makes the determinism validator say so).
(module
  (import "env" "entropy" (func $entropy (result i32)))
  (func (export "draw") (result i32) call $entropy))
