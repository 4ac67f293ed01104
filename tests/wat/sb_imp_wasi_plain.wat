;; Import isolation fixture: the "wasi" namespace (blocked).
(module
  (import "wasi" "random_get" (func (param i32 i32) (result i32))))
