;; Fixture: a start function that traps.
(module (func $boom unreachable) (start $boom))
