;; A counter in linear memory (so checkpoints carry it): increment, get, add(n).
;; _start increments too and prints "count\n" to stdout, so wasm executions also count.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "count\n")
  (func $inc (export "increment") (result i32)
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
    (i32.load (i32.const 0)))
  (func (export "get") (result i32)
    (i32.load (i32.const 0)))
  (func (export "add") (param $n i32) (result i32)
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (local.get $n)))
    (i32.load (i32.const 0)))
  (func (export "_start")
    (drop (call $inc))
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 6)))))
