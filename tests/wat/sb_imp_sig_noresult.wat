;; Import check fixture: env.double imported without its result.
(module
  (import "env" "double" (func (param i32))))
