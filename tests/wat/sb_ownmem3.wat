;; Sandbox fixture: defines a 3-page (196608-byte) memory of its own.
(module
  (memory 3)
  (func (export "getMemSize") (result i32) memory.size))
