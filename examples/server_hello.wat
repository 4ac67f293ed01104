;; The module of the server demo (examples/server_demo.sh): its export _start reads a name
;; from stdin and greets it on stdout, through the server's I/O imports ri.read and ri.write.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "ri" "read" (func $read (param i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "hello, ")
  (data (i32.const 32) "!\n")
  (func (export "_start")
    (local $n i32)
    (local.set $n (call $read (i32.const 1024) (i32.const 256)))
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 7)))
    (if (i32.gt_s (local.get $n) (i32.const 0))
      (then (drop (call $write (i32.const 1) (i32.const 1024) (local.get $n)))))
    (drop (call $write (i32.const 1) (i32.const 32) (i32.const 2)))))
