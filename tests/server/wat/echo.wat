;; Writes "ready\n", blocks in ri.read for stdin (up to 256 bytes), then writes "got:" and
;; what it read, or "eof\n" when read returned 0 or less.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "ri" "read" (func $read (param i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "ready\n")
  (data (i32.const 32) "got:")
  (data (i32.const 48) "eof\n")
  (func (export "_start")
    (local $n i32)
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 6)))
    (local.set $n (call $read (i32.const 1024) (i32.const 256)))
    (if (i32.le_s (local.get $n) (i32.const 0))
      (then (drop (call $write (i32.const 1) (i32.const 48) (i32.const 4))))
      (else
        (drop (call $write (i32.const 1) (i32.const 32) (i32.const 4)))
        (drop (call $write (i32.const 1) (i32.const 1024) (local.get $n)))))))
