"""Rewrites typed function references in a binaryen 108 module into plain funcref.

With only reference-types enabled, binaryen 108's translate-to-fuzz still types some
blocks, locals and selects as `(ref $t)` / `(ref null $t)` (the typed function
references proposal, opcodes 0x6b/0x6c + heap type), which V8 and ri both refuse. Without
call_ref and the other typed-reference instructions, such a value can only be used as a
funcref, so writing `funcref` (`externref` for the extern heap type) in every type position
gives a valid WebAssembly 2.0 module with the same behaviour. Sections that hold no types
are copied as they are.

Binaryen 108 also treats externref as `anyref`, a supertype of funcref: it may store a
function in an externref global, table or local, which no 2.0 engine accepts. With
fold_extern=True every reference type becomes funcref: in these modules a reference is only
ever null or a function (the harness passes null for every reference parameter), so the
behaviour is the one binaryen meant; the caller does that only when the module is otherwise
invalid, to keep externref where it is used correctly.

untype(data, fold_extern=False) -> bytes (data itself if nothing needed changing or the
module has an instruction this rewriter does not know; the caller then sees V8 refuse it).
"""

FUNCREF, EXTERNREF = 0x70, 0x6F
REF, REF_NULL = 0x6B, 0x6C  # binaryen 108's encodings of (ref ht) and (ref null ht)


class Unknown(Exception):
    pass


def uleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Reader:
    def __init__(self, data, pos=0, fold_extern=False):
        self.data, self.pos, self.fold_extern = data, pos, fold_extern

    def byte(self):
        b = self.data[self.pos]
        self.pos += 1
        return b

    def u(self):
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def s(self):
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if b & 0x40:
                    result -= 1 << shift
                return result

    def raw_u(self):
        """The bytes of one unsigned LEB, as they are."""
        start = self.pos
        self.u()
        return self.data[start:self.pos]

    def take(self, n):
        self.pos += n
        return self.data[self.pos - n:self.pos]


def heaptype_as_valtype(ht, fold_extern):
    # ht is s33: -17 is `extern` (0x6f), -16 `func` (0x70), >= 0 a function type index.
    return EXTERNREF if ht == -17 and not fold_extern else FUNCREF


def valtype(r, out):
    b = r.byte()
    if b in (REF, REF_NULL):
        out.append(heaptype_as_valtype(r.s(), r.fold_extern))
    elif b == EXTERNREF and r.fold_extern:
        out.append(FUNCREF)
    else:
        out.append(b)


def blocktype(r, out):
    b = r.data[r.pos]
    if b == 0x40 or b in (0x7F, 0x7E, 0x7D, 0x7C, 0x7B, FUNCREF, EXTERNREF, REF, REF_NULL):
        valtype(r, out) if b != 0x40 else out.append(r.byte())
    else:
        start = r.pos
        r.s()  # a type index (multi-value block)
        out += r.data[start:r.pos]


# Opcodes whose immediates are LEB u32s: how many.
ULEBS = {0x0C: 1, 0x0D: 1, 0x10: 1, 0x11: 2, 0x20: 1, 0x21: 1, 0x22: 1, 0x23: 1, 0x24: 1,
         0x25: 1, 0x26: 1, 0xD2: 1}
# 0xFC sub-opcodes: (uleb count, then fixed bytes).
FC = {8: (1, 1), 9: (1, 0), 10: (0, 2), 11: (0, 1), 12: (2, 0), 13: (1, 0), 14: (2, 0),
      15: (1, 0), 16: (1, 0), 17: (1, 0)}


def code(r, out, end):
    """Copies instructions up to (and with) the end of the expression at depth 0."""
    depth = 0
    while r.pos < end:
        op = r.byte()
        if op in (0x02, 0x03, 0x04):
            out.append(op)
            blocktype(r, out)
            depth += 1
        elif op == 0x0B:
            out.append(op)
            if depth == 0:
                return
            depth -= 1
        elif op in ULEBS:
            out.append(op)
            for _ in range(ULEBS[op]):
                out += r.raw_u()
        elif op == 0x0E:
            out.append(op)
            n = r.u()
            out += uleb(n)
            for _ in range(n + 1):
                out += r.raw_u()
        elif op == 0x1C:
            out.append(op)
            n = r.u()
            out += uleb(n)
            for _ in range(n):
                valtype(r, out)
        elif 0x28 <= op <= 0x3E:
            out.append(op)
            out += r.raw_u()
            out += r.raw_u()
        elif op in (0x3F, 0x40):
            out.append(op)
            out.append(r.byte())
        elif op in (0x41, 0x42):
            start = r.pos - 1
            r.s()
            out += r.data[start:r.pos]
        elif op == 0x43:
            out.append(op)
            out += r.take(4)
        elif op == 0x44:
            out.append(op)
            out += r.take(8)
        elif op == 0xD0:
            out.append(op)
            out.append(heaptype_as_valtype(r.s(), r.fold_extern))
        elif op == 0xD3:
            # ref.as_non_null (typed references; wasm-reduce's passes write it): dropped.
            # Null then flows on instead of trapping; both engines run the same rewritten
            # bytes, so the comparison stays fair.
            pass
        elif op in (0x00, 0x01, 0x05, 0x0F, 0x1A, 0x1B, 0xD1) or 0x45 <= op <= 0xC4:
            out.append(op)
        elif op == 0xFC:
            out.append(op)
            sub = r.u()
            out += uleb(sub)
            if sub > 17:
                raise Unknown('0xfc %d' % sub)
            nleb, nfixed = FC.get(sub, (0, 0))
            for _ in range(nleb):
                out += r.raw_u()
            out += r.take(nfixed)
        elif op == 0xFD:
            out.append(op)
            sub = r.u()
            out += uleb(sub)
            if sub <= 0x0B or sub in (0x5C, 0x5D):  # loads, stores, load zero: a memarg
                out += r.raw_u()
                out += r.raw_u()
            elif 0x54 <= sub <= 0x5B:  # load and store lane: a memarg and a lane
                out += r.raw_u()
                out += r.raw_u()
                out += r.take(1)
            elif sub in (0x0C, 0x0D):  # v128.const, i8x16.shuffle: 16 bytes
                out += r.take(16)
            elif 0x15 <= sub <= 0x22:  # extract and replace lane: a lane
                out += r.take(1)
            elif sub > 0xFF:
                raise Unknown('0xfd %d' % sub)
        else:
            raise Unknown('opcode 0x%02x' % op)
    raise Unknown('expression runs past its section')


def limits(r, out):
    flags = r.byte()
    out.append(flags)
    out += r.raw_u()
    if flags & 1:
        out += r.raw_u()


def vec(r, out, item):
    n = r.u()
    out += uleb(n)
    for _ in range(n):
        item(r, out)


def name(r, out):
    n = r.u()
    out += uleb(n) + r.take(n)


def functype(r, out):
    out.append(r.byte())  # 0x60
    vec(r, out, valtype)
    vec(r, out, valtype)


def import_entry(r, out):
    name(r, out)
    name(r, out)
    kind = r.byte()
    out.append(kind)
    if kind == 0:
        out += r.raw_u()
    elif kind == 1:
        valtype(r, out)
        limits(r, out)
    elif kind == 2:
        limits(r, out)
    elif kind == 3:
        valtype(r, out)
        out.append(r.byte())
    else:
        raise Unknown('import kind %d' % kind)


def table_entry(r, out):
    valtype(r, out)
    limits(r, out)


def global_entry(r, out):
    valtype(r, out)
    out.append(r.byte())
    code(r, out, len(r.data))


def elem_entry(r, out):
    flags = r.u()
    out += uleb(flags)
    if flags & 2 and not flags & 1:
        out += r.raw_u()  # table index
    if not flags & 1:
        code(r, out, len(r.data))  # offset
    if flags & 4:
        if flags & 3:
            valtype(r, out)
        vec(r, out, lambda r2, o2: code(r2, o2, len(r2.data)))
    else:
        if flags & 3:
            out.append(r.byte())  # elemkind
        vec(r, out, lambda r2, o2: o2.extend(r2.raw_u()))


def body(r, out):
    size = r.u()
    end = r.pos + size
    b = bytearray()
    n = r.u()
    b += uleb(n)
    for _ in range(n):
        b += r.raw_u()
        valtype(r, b)
    code(r, b, end)
    if r.pos != end:
        raise Unknown('function body size')
    out += uleb(len(b)) + b


SECTIONS = {1: functype, 2: import_entry, 4: table_entry, 6: global_entry, 9: elem_entry, 10: body}


def untype(data, fold_extern=False):
    data = bytes(data)
    if data[:8] != b'\0asm\1\0\0\0':
        return data
    out = bytearray(data[:8])
    r = Reader(data, 8, fold_extern)
    try:
        while r.pos < len(data):
            sid = r.byte()
            size = r.u()
            payload = data[r.pos:r.pos + size]
            r.pos += size
            if sid in SECTIONS:
                sr = Reader(payload, 0, fold_extern)
                new = bytearray()
                vec(sr, new, SECTIONS[sid])
                if sr.pos != len(payload):
                    raise Unknown('section %d size' % sid)
                payload = bytes(new)
            out.append(sid)
            out += uleb(len(payload)) + payload
    except (Unknown, IndexError):
        return data
    return bytes(out)


if __name__ == '__main__':
    import sys
    with open(sys.argv[1], 'rb') as f:
        fixed = untype(f.read(), fold_extern=len(sys.argv) > 3 and sys.argv[3] == '--fold-extern')
    with open(sys.argv[2], 'wb') as f:
        f.write(fixed)
