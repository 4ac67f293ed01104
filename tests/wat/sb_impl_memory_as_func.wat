;; Fixture: env.memory imported as a function.
(module (import "env" "memory" (func)))
