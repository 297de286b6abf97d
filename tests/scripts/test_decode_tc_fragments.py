"""The index math of decode_splitk's tensor-core split kernel, on the CPU: a model of ldmatrix (.x4 and
.x4.trans), mma.sync.m16n8k16 and movmatrix.trans fragments (PTX ISA layouts) is run over the formulas read
from kernels/attention/decode_splitk_tc.cu itself (the XOR swizzle, and the row and 16-byte chunk each lane
hands ldmatrix for Q, K and V), so an edited formula is checked, not a copy of it. The kernel's transposed
products, S^T = K Q^T and O^T = V^T P^T with the query rows as the MMA's 8 columns, through the swizzled
shared-memory tiles must equal numpy's at head_dim 64 and 128 for 2, 4 and 8 rows, every ldmatrix phase
must touch 8 distinct bank groups, and a swapped index must fail the model. What it does not check: the
CUDA code around the formulas (that is the GPU tests' job)."""
import re
import unittest
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parents[2] / "kernels" / "attention" / "decode_splitk_tc.cu"


NAMES = {"lane", "m4", "j", "kk", "n", "row", "chunk", "D", "kSteps", "kChunks", "cq", "cc", "s", "lane_slot",
         "kInChunks", "lane_slot_fp8", "ci"}


def c_to_python(expr):
    """An int expression of the kernel (non-negative operands, + * / % ^ & and parentheses, the index
    names above) as Python; anything else is refused."""
    if not re.fullmatch(r"[\w\s+*/%^&()]+", expr) or not set(re.findall(r"[A-Za-z_]\w*", expr)) <= NAMES:
        raise ValueError(f"unexpected C expression: {expr!r}")
    return expr.replace("/", "//")


def evaluate(expr, **names):
    return eval(expr, {"__builtins__": {}}, names)


def kernel_formulas():
    """(swizzle, [(row, chunk) for Q, K, V]) as Python expressions, from the kernel's source."""
    text = SOURCE.read_text()
    swz = re.search(r"inline int swz\(int row, int chunk\) \{ return (.+?); \}", text)
    kernel = re.search(r"split_kernel_tc\(const \w+ p\)", text)  # its parameters' type: Params or PagedParams
    if kernel is None:
        raise AssertionError(f"{SOURCE}: split_kernel_tc(const <Params type> p) not found")
    body = text[kernel.start():]
    lanes = re.findall(r"const int m4 = lane / 8, row = ([^,]+), chunk = ([^;]+);", body)
    if swz is None or len(lanes) != 3:
        raise AssertionError(f"{SOURCE}: expected swz() and 3 ldmatrix lane formulas (Q, K, V), found "
                             f"{'no' if swz is None else 'a'} swz and {len(lanes)}")
    return c_to_python(swz.group(1)), [(c_to_python(r), c_to_python(c)) for r, c in lanes]


def copy_formulas():
    """The cp.async slot formulas of the tensor-core kernel's copy steps: (lane_slot, the
    step's byte offset in a stage) as Python expressions, from the kernel's source; None where the source
    has no such steps (the test then fails)."""
    text = SOURCE.read_text()
    slot = re.search(r"const unsigned lane_slot = 16u \* static_cast<unsigned>\((.+?)\);", text)
    dst = re.search(r"const unsigned dst = stage \+ \((.+?)\);", text)
    if slot is None or dst is None:
        return None
    return "16 * (" + c_to_python(slot.group(1)) + ")", c_to_python(dst.group(1).replace("16u", "16"))


def fp8_formulas():
    """Over an FP8 cache: (lane_slot_fp8, the step's byte offset in a stage, the widening's (row, e4m3 chunk) of
    chunk index ci) as Python expressions from the kernel's source; None where it has none."""
    text = SOURCE.read_text()
    slot = re.search(r"const unsigned lane_slot_fp8 = 16u \* static_cast<unsigned>\((.+?)\);", text)
    dst = re.search(r"const unsigned dst = stage \+ \((lane_slot_fp8 .+?)\);", text)
    widen = re.search(r"const int ci = lane \+ 32 \* u, row = (.+?), c8 = (.+?);", text)
    if slot is None or dst is None or widen is None:
        return None
    return ("16 * (" + c_to_python(slot.group(1)) + ")", c_to_python(dst.group(1).replace("16u", "16")),
            c_to_python(widen.group(1)), c_to_python(widen.group(2)))


class Model:
    def __init__(self, d, swz, lanes):
        self.d, self.swz_expr, self.lanes = d, swz, lanes

    def swz(self, row, chunk):
        return evaluate(self.swz_expr, row=row, chunk=chunk, D=self.d)

    def lane_address(self, which, lane, j=0, kk=0, n=0):
        row_expr, chunk_expr = self.lanes[which]
        env = {"lane": lane, "m4": lane // 8, "j": j, "kk": kk, "n": n}
        return self.swz(evaluate(row_expr, **env), evaluate(chunk_expr, **env))

    def store(self, mat):  # [16][D] -> shared memory as 16-byte chunks [16 * D / 8][8]
        chunks = self.d // 8
        sm = np.full((16 * chunks, 8), np.nan)
        for r in range(16):
            for c in range(chunks):
                sm[self.swz(r, c)] = mat[r, 8 * c:8 * c + 8]
        return sm


def ldmatrix_x4(sm, address_of_lane, trans=False):
    """Lane l supplies the row address of row l % 8 of matrix l // 8; each lane receives two 16-bit values
    of each of the 4 matrices (PTX ISA, ldmatrix fragment layout)."""
    mats = [[sm[address_of_lane(8 * i + r)] for r in range(8)] for i in range(4)]
    regs = np.zeros((32, 4, 2))
    for lane in range(32):
        for i, m in enumerate(mats):
            if trans:
                regs[lane, i] = [m[2 * (lane % 4)][lane // 4], m[2 * (lane % 4) + 1][lane // 4]]
            else:
                regs[lane, i] = [m[lane // 4][2 * (lane % 4)], m[lane // 4][2 * (lane % 4) + 1]]
    return regs


def mma_16816(c, a, b0, b1):
    """C[16][8] += A[16][16] B[16][8] in per-lane fragments (PTX ISA, mma.m16n8k16 .f16/.bf16)."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        A[g, 2 * t:2 * t + 2], A[g + 8, 2 * t:2 * t + 2] = a[lane][0], a[lane][1]
        A[g, 2 * t + 8:2 * t + 10], A[g + 8, 2 * t + 8:2 * t + 10] = a[lane][2], a[lane][3]
        B[2 * t:2 * t + 2, g], B[2 * t + 8:2 * t + 10, g] = b0[lane], b1[lane]
        C[g, 2 * t:2 * t + 2], C[g + 8, 2 * t:2 * t + 2] = c[lane][0:2], c[lane][2:4]
    C = C + A @ B
    out = np.zeros((32, 4))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        out[lane] = [C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1]]
    return out


def movmatrix_trans(vals):
    """movmatrix.sync.aligned.m8n8.trans.b16: lane l holds (row l / 4, columns 2 (l % 4), + 1) of an 8 x 8
    matrix and receives the same elements of its transpose."""
    m = np.zeros((8, 8))
    for lane in range(32):
        m[lane // 4, 2 * (lane % 4):2 * (lane % 4) + 2] = vals[lane]
    return np.array([[m.T[lane // 4, 2 * (lane % 4)], m.T[lane // 4, 2 * (lane % 4) + 1]] for lane in range(32)])


Q_, K_, V_ = 0, 1, 2  # order of the lane formulas in the kernel


def products(model, q, k, v, p):
    """The kernel's S^T = K Q^T (16 keys x 8 rows, two accumulator chains) and O = P V (8 rows x D, from
    O^T = V^T P^T) through the model; q is [16][D] as staged (rows >= 8 are never read), p is [8][16]."""
    d = model.d
    qs, ks, vs = model.store(q), model.store(k), model.store(v)
    qb = {}
    for j in range(d // 32):
        r4 = ldmatrix_x4(qs, lambda lane: model.lane_address(Q_, lane, j=j))
        qb[2 * j], qb[2 * j + 1] = (r4[:, 0], r4[:, 1]), (r4[:, 2], r4[:, 3])
    chains = [np.zeros((32, 4)), np.zeros((32, 4))]
    for kk in range(d // 16):
        ka = ldmatrix_x4(ks, lambda lane: model.lane_address(K_, lane, kk=kk))
        chains[kk % 2] = mma_16816(chains[kk % 2], ka, *qb[kk])
    sc = chains[0] + chains[1]
    st = np.zeros((16, 8))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        st[g, 2 * t:2 * t + 2], st[g + 8, 2 * t:2 * t + 2] = sc[lane][0:2], sc[lane][2:4]
    # P as the kernel holds it after the softmax, in S^T's accumulator layout (keys g and g + 8 of rows 2 t
    # and 2 t + 1), packed in pairs and moved to the B operand by movmatrix.trans.
    c = np.array([[p[2 * (ln % 4), ln // 4], p[2 * (ln % 4) + 1, ln // 4], p[2 * (ln % 4), ln // 4 + 8],
                   p[2 * (ln % 4) + 1, ln // 4 + 8]] for ln in range(32)])
    pb0, pb1 = movmatrix_trans(c[:, 0:2]), movmatrix_trans(c[:, 2:4])
    out = np.zeros((8, d))
    for n in range(d // 16):
        va = ldmatrix_x4(vs, lambda lane: model.lane_address(V_, lane, n=n), trans=True)
        o = mma_16816(np.zeros((32, 4)), va, pb0, pb1)
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for r in range(2):
                out[2 * t + r, 16 * n + g], out[2 * t + r, 16 * n + g + 8] = o[lane][r], o[lane][2 + r]
    return st, out


def bank_groups(model, which, **index):
    """Distinct 16-byte bank groups (of 8 in 128 bytes) each of the 4 matrices' 8 row reads touches."""
    return [len({model.lane_address(which, 8 * m + r, **index) % 8 for r in range(8)}) for m in range(4)]


class TensorCoreFragments(unittest.TestCase):
    def setUp(self):
        self.swz, self.lanes = kernel_formulas()
        self.rng = np.random.default_rng(0)

    def inputs(self, d, rows=4):
        q = np.zeros((16, d))
        q[:rows] = self.rng.standard_normal((rows, d))  # rows past R are zero-filled (the MMA's padding columns)
        p = self.rng.random((8, 16))
        p[rows:] = 0
        return q, self.rng.standard_normal((16, d)), self.rng.standard_normal((16, d)), p

    def test_products_equal_numpy(self):
        for d in (64, 128):
            for rows in (2, 4, 8):
                with self.subTest(head_dim=d, rows=rows):
                    q, k, v, p = self.inputs(d, rows)
                    st, o = products(Model(d, self.swz, self.lanes), q, k, v, p)
                    np.testing.assert_allclose(st, k @ q[:8].T, atol=1e-9)
                    np.testing.assert_allclose(o, p @ v, atol=1e-9)

    def test_every_ldmatrix_phase_is_conflict_free(self):
        for d in (64, 128):
            model = Model(d, self.swz, self.lanes)
            for j in range(d // 32):
                self.assertEqual(bank_groups(model, Q_, j=j), [8] * 4, f"Q, d{d}, j {j}")
            for kk in range(d // 16):
                self.assertEqual(bank_groups(model, K_, kk=kk), [8] * 4, f"K, d{d}, kk {kk}")
            for n in range(d // 16):
                self.assertEqual(bank_groups(model, V_, n=n), [8] * 4, f"V, d{d}, n {n}")

    def test_a_swapped_index_fails_the_model(self):
        # V's key-row and chunk halves swapped (m4 % 2 for m4 / 2): the products must no longer match.
        row, chunk = self.lanes[V_]
        swapped = [*self.lanes[:V_], (row.replace("m4 // 2", "m4 % 2"), chunk.replace("m4 % 2", "m4 // 2"))]
        self.assertNotEqual(swapped[V_], self.lanes[V_])
        q, k, v, p = self.inputs(128)
        _, o = products(Model(128, self.swz, swapped), q, k, v, p)
        self.assertFalse(np.allclose(o, p @ v))

    def test_copy_steps_fill_every_slot_once(self):
        # Lane (cq, cc) = (lane / kChunks, lane % kChunks) copies chunk cc of row s + kSteps cq at step s to
        # the stage's byte offset dst: that must be swz(row, cc)'s slot, and the 32 lanes' kSteps steps
        # must cover the tile's 16 rows x kChunks slots once each.
        formulas = copy_formulas()
        self.assertIsNotNone(formulas, "decode_splitk_tc.cu: the lane_slot / dst formulas of the copy steps not found")
        slot_expr, dst_expr = formulas
        for d in (64, 128):
            chunks = d // 8
            steps = 16 * chunks // 32
            model, seen = Model(d, self.swz, self.lanes), set()
            for lane in range(32):
                cq, cc = lane // chunks, lane % chunks
                lane_slot = evaluate(slot_expr, kSteps=steps, kChunks=chunks, cq=cq, cc=cc)
                for s in range(steps):
                    dst = evaluate(dst_expr, lane_slot=lane_slot, s=s, kChunks=chunks)
                    self.assertEqual(dst % 16, 0)
                    self.assertEqual(dst // 16, model.swz(s + steps * cq, cc), f"d{d} lane {lane} step {s}")
                    seen.add(dst // 16)
            self.assertEqual(seen, set(range(16 * chunks)), f"d{d}")

    def test_fp8_copy_steps_and_widening_cover_the_stage_once(self):
        # Over an FP8 cache a key row is D / 16 e4m3 chunks, staged [row][chunk] unswizzled: lane (cq, cc) copies
        # chunk cc of row s + kSteps cq to slot row kInChunks + cc, and the widening's chunk ci = lane + 32 u must
        # read back every slot once, as (row, chunk) = (ci / kInChunks, ci % kInChunks).
        formulas = fp8_formulas()
        self.assertIsNotNone(formulas, "decode_splitk_tc.cu: the FP8 copy or widening formulas not found")
        slot_expr, dst_expr, row_expr, chunk_expr = formulas
        for d in (64, 128):
            in_chunks = d // 16
            steps = 16 * in_chunks // 32
            copied, widened = {}, {}
            for lane in range(32):
                cq, cc = lane // in_chunks, lane % in_chunks
                lane_slot_fp8 = evaluate(slot_expr, kSteps=steps, kInChunks=in_chunks, cq=cq, cc=cc)
                for s in range(steps):
                    dst = evaluate(dst_expr, lane_slot_fp8=lane_slot_fp8, s=s, kInChunks=in_chunks)
                    self.assertEqual(dst % 16, 0)
                    copied[dst // 16] = (s + steps * cq, cc)
                for u in range(d // 32):
                    ci = lane + 32 * u
                    widened[ci] = (evaluate(row_expr, ci=ci, kInChunks=in_chunks),
                                   evaluate(chunk_expr, ci=ci, kInChunks=in_chunks))
            self.assertEqual(sorted(copied), list(range(16 * in_chunks)), f"d{d}: every slot copied once")
            self.assertEqual(copied, widened, f"d{d}: the widening reads each slot as the row and chunk copied there")

    def test_non_c_expressions_are_refused(self):
        for bad in ("__import__('os')", "__import__(os)", "row + x"):
            with self.assertRaises(ValueError):
                c_to_python(bad)


if __name__ == "__main__":
    unittest.main()
