;; A WASI module with exports called by the execute action: readit reads stdin (which an
;; action never has), one returns 1.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "readit") (result i32)
    (i32.store (i32.const 0) (i32.const 64))  ;; iov.buf
    (i32.store (i32.const 4) (i32.const 16))  ;; iov.len
    (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 32)))
  (func (export "one") (result i32) (i32.const 1)))
