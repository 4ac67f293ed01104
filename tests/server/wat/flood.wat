;; Writes 64 KiB of 'x' to stdout again and again, forever: a client that does not read
;; its output is the only thing that can hold it back.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 2))
  (func (export "_start")
    (memory.fill (i32.const 0) (i32.const 120) (i32.const 65536))
    (loop $forever
      (drop (call $write (i32.const 1) (i32.const 0) (i32.const 65536)))
      (br $forever))))
