;; Import isolation fixture: WASI preview 1 (blocked).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))))
