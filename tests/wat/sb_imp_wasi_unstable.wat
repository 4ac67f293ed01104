;; Import isolation fixture: wasi_unstable (blocked).
(module
  (import "wasi_unstable" "proc_exit" (func (param i32))))
