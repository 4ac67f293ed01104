;; Sandbox fixture: defines a 4-page (262144-byte) memory of its own.
(module
  (memory 4)
  (func (export "getMemSize") (result i32) memory.size))
