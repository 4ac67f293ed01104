;; Writes one line to stdout and one to stderr through the server's ri.write.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "hello, world\n")
  (data (i32.const 64) "to stderr\n")
  (func (export "_start")
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 13)))
    (drop (call $write (i32.const 2) (i32.const 64) (i32.const 10)))))
