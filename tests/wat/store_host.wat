;; Snapshot store fixture: `run` calls the host function env.hook in the middle of an
;; execution (the conflict test restores from inside it).
(module
  (import "env" "hook" (func $hook))
  (memory (export "memory") 1 4)
  (func (export "run") (result i32)
    (i32.store (i32.const 0) (i32.const 42))
    (call $hook)
    (i32.load (i32.const 0)))
  (func (export "set") (param i32) (i32.store (i32.const 0) (local.get 0))))
