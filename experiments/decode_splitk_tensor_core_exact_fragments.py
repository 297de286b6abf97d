"""CPU model of ldmatrix and mma.sync m16n8k16 fragments (PTX ISA layouts), run over the index formulas of
decode_splitk_tensor_core_exact.patch (=13): Q.K^T and P.V through its XOR-swizzled shared-memory tiles must
equal numpy's products, and each ldmatrix phase must touch 8 distinct bank groups. No GPU needed:
    python3 experiments/decode_splitk_tensor_core_exact_fragments.py
Checks the index math only, not the CUDA code itself (a mistyped formula in the patch is not caught)."""
import numpy as np
rng = np.random.default_rng(0)
D = 128; CH = D // 8

def swz(row, chunk): return row * CH + (chunk ^ (row & 7))

def store_tile(mat):  # mat [16][D] -> smem chunks [16*CH][8]
    sm = np.zeros((16 * CH, 8))
    for r in range(mat.shape[0]):
        for c in range(CH):
            sm[swz(r, c)] = mat[r, 8 * c:8 * c + 8]
    return sm

def ldmatrix_x4(sm, addr_of_lane, trans=False):
    # addr_of_lane(l) -> chunk index in sm (row address of matrix l//8, row l%8)
    mats = [[sm[addr_of_lane(8 * i + r)] for r in range(8)] for i in range(4)]  # 4 matrices of 8 rows x 8
    regs = np.zeros((32, 4, 2))
    for l in range(32):
        for i in range(4):
            m = mats[i]
            if not trans:
                regs[l, i] = [m[l // 4][2 * (l % 4)], m[l // 4][2 * (l % 4) + 1]]
            else:
                regs[l, i] = [m[2 * (l % 4)][l // 4], m[2 * (l % 4) + 1][l // 4]]
    return regs

def mma(c, a, b0, b1):  # per-lane c[32][4], a[32][4][2], b0,b1[32][2]
    A = np.zeros((16, 16)); B = np.zeros((16, 8)); C = np.zeros((16, 8))
    for l in range(32):
        g, t = l // 4, l % 4
        A[g, 2*t:2*t+2] = a[l][0]; A[g+8, 2*t:2*t+2] = a[l][1]
        A[g, 2*t+8:2*t+10] = a[l][2]; A[g+8, 2*t+8:2*t+10] = a[l][3]
        B[2*t:2*t+2, g] = b0[l]; B[2*t+8:2*t+10, g] = b1[l]
        C[g, 2*t:2*t+2] = c[l][0:2]; C[g+8, 2*t:2*t+2] = c[l][2:4]
    C = C + A @ B
    out = np.zeros((32, 4))
    for l in range(32):
        g, t = l // 4, l % 4
        out[l] = [C[g, 2*t], C[g, 2*t+1], C[g+8, 2*t], C[g+8, 2*t+1]]
    return out

Q = rng.standard_normal((16, D)); Q[4:] = 0      # R = 4 real rows
K = rng.standard_normal((16, D)); V = rng.standard_normal((16, D))
qs, ks, vs = store_tile(Q), store_tile(K), store_tile(V)
sc = [np.zeros((32, 4)), np.zeros((32, 4))]
for kk in range(D // 16):
    kb = ldmatrix_x4(ks, lambda l: swz((l // 8 // 2) * 8 + l % 8, 2 * kk + (l // 8) % 2))
    qa = ldmatrix_x4(qs, lambda l: swz(((l // 8) % 2) * 8 + l % 8, 2 * kk + (l // 8) // 2))
    sc[0] = mma(sc[0], qa, kb[:, 0], kb[:, 1])
    sc[1] = mma(sc[1], qa, kb[:, 2], kb[:, 3])
S_ref = Q @ K.T  # [16 rows][16 keys]
S = np.zeros((16, 16))
for l in range(32):
    g, t = l // 4, l % 4
    for n in range(2):
        S[g, 8*n + 2*t] = sc[n][l][0]; S[g, 8*n + 2*t + 1] = sc[n][l][1]
        S[g+8, 8*n + 2*t] = sc[n][l][2]; S[g+8, 8*n + 2*t + 1] = sc[n][l][3]
err_qk = np.abs(S - S_ref).max()
print("QK max err", err_qk)
P = rng.random((16, 16)); P[4:] = 0
# P as A from the C layout of the two n-tiles
pc = [np.zeros((32, 4)), np.zeros((32, 4))]
for l in range(32):
    g, t = l // 4, l % 4
    for n in range(2):
        pc[n][l] = [P[g, 8*n+2*t], P[g, 8*n+2*t+1], P[g+8, 8*n+2*t], P[g+8, 8*n+2*t+1]]
pa = np.zeros((32, 4, 2))
for l in range(32):
    pa[l] = [pc[0][l][0:2], pc[0][l][2:4], pc[1][l][0:2], pc[1][l][2:4]]
o = [np.zeros((32, 4)) for _ in range(D // 8)]
for n in range(0, D // 8, 2):
    vb = ldmatrix_x4(vs, lambda l: swz(((l // 8) % 2) * 8 + l % 8, n + (l // 8) // 2), trans=True)
    o[n] = mma(o[n], pa, vb[:, 0], vb[:, 1])
    o[n + 1] = mma(o[n + 1], pa, vb[:, 2], vb[:, 3])
O = np.zeros((16, D))
for l in range(32):
    g, t = l // 4, l % 4
    for n in range(D // 8):
        O[g, 8*n+2*t:8*n+2*t+2] = o[n][l][0:2]; O[g+8, 8*n+2*t:8*n+2*t+2] = o[n][l][2:4]
err_pv = np.abs(O - P @ V).max()
print("PV max err", err_pv)
# bank-conflict check for the swizzle: the 8 row addresses of each ldmatrix matrix phase should hit distinct 16B bank groups
def banks(addrs): return len(set((a * 16 // 4) % 32 // 4 for a in addrs))
kk = 3
kb_banks = [banks([swz((m // 2) * 8 + r, 2 * kk + m % 2) for r in range(8)]) for m in range(4)]
vb_banks = [banks([swz((m % 2) * 8 + r, 4 + m // 2) for r in range(8)]) for m in range(4)]
print("distinct bank groups per ldmatrix matrix: K", kb_banks, "V", vb_banks)
ok = err_qk < 1e-9 and err_pv < 1e-9 and kb_banks == [8] * 4 and vb_banks == [8] * 4
print("OK" if ok else "MISMATCH")
raise SystemExit(0 if ok else 1)
