;; Import check fixture: env.double imported as (i64) -> i64, declared (i32) -> i32.
(module
  (import "env" "double" (func (param i64) (result i64))))
