;; Sandbox fixture: a counter kept at address 0 of the sandbox's memory, plus a random
;; draw, so snapshots capture all of its state.
(module
  (import "env" "memory" (memory 1))
  (import "env" "__get_random" (func $random (result i32)))
  (func (export "increment") (result i32)
    i32.const 0
    i32.const 0
    i32.load
    i32.const 1
    i32.add
    i32.store
    i32.const 0
    i32.load)
  (func (export "get") (result i32)
    i32.const 0
    i32.load)
  ;; Stores a random value at address 4 and returns it.
  (func (export "drawAndStore") (result i32)
    i32.const 4
    call $random
    i32.store
    i32.const 4
    i32.load))
