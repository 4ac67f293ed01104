;; Import isolation fixture: a blocked namespace before an undeclared one.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "custom_ns" "something" (func)))
