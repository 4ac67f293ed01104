;; Writes a line, then traps (unreachable).
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "before the trap\n")
  (func (export "_start")
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 16)))
    unreachable))
