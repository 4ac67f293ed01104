;; test_acc.c: an instruction reading the slot the instruction before it wrote, with a
;; label between them that a branch targets (`landing`), and without one (`straight`);
;; instructions reading a slot of the MOVE (of two, the last) just before them (`move_*`).
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
    (i32.add (local.get 1) (i32.const 7)))
  (func (export "move_dst") (param i32 i32) (result i32) (local i32)
    (local.set 2 (local.get 0))
    (i32.sub (local.get 2) (local.get 1)))
  (func (export "move_src") (param i32 i32) (result i32) (local i32)
    (local.set 2 (local.get 0))
    (i32.sub (local.get 1) (local.get 0)))
  (func (export "move2_dst") (param i32 i32) (result i32) (local i32 i32)
    (local.set 2 (local.get 0))
    (local.set 3 (local.get 1))
    (i32.sub (local.get 3) (local.get 2))))
