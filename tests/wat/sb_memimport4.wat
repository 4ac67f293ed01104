;; Sandbox fixture: imports env.memory asking for at least 4 pages (262144 bytes).
(module
  (import "env" "memory" (memory 4))
  (func (export "getMemSize") (result i32) memory.size))
