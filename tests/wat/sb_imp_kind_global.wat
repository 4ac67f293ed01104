;; Import check fixture: env.double imported as a global, declared as a function.
(module
  (import "env" "double" (global i32)))
