;; test_acc.c: an instruction reading the slot the instruction before it wrote, with a
;; label between them that a branch targets (`landing`), and without one (`straight`).
(module
  (func (export "landing") (param i32) (result i32) (local i32)
    (local.set 1 (i32.const 5))
    (block
      (br_if 0 (local.get 0))
      (local.set 1 (i32.mul (local.get 1) (i32.const 3))))
    (i32.add (local.get 1) (i32.const 7)))
  (func (export "straight") (param i32) (result i32) (local i32)
    (local.set 1 (i32.add (local.get 0) (i32.const 5)))
    (local.set 1 (i32.mul (local.get 1) (i32.const 3)))
    (i32.add (local.get 1) (i32.const 7))))
