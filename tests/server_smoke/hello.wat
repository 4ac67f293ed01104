(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; "h\c3" then "\a9llo\n": the é is split across two writes
  (data (i32.const 0) "h\c3\a9llo\n")
  (func (export "_start")
    (drop (call $write (i32.const 1) (i32.const 0) (i32.const 2)))
    (drop (call $write (i32.const 1) (i32.const 2) (i32.const 5)))
    (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1)))))
