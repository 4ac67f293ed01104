;; Import isolation fixture: imports are checked in order; the first failure wins.
(module
  (import "env" "undeclared_fn" (func))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))))
