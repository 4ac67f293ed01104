;; Import check fixture: env.__get_random imported as a global; it is a function.
(module
  (import "env" "__get_random" (global i32)))
