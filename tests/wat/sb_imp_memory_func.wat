;; Import check fixture: env.memory imported as a function; it is a memory.
(module
  (import "env" "memory" (func)))
