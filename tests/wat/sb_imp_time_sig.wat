;; Import check fixture: env.__get_time imported as (i32) -> i32; it is () -> i32.
(module
  (import "env" "__get_time" (func (param i32) (result i32))))
