;; Fixture: imports env.memory with a minimum of 2 pages and a maximum of 3.
(module
  (import "env" "memory" (memory 2 3))
  (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
  (func (export "pages") (result i32) memory.size))
