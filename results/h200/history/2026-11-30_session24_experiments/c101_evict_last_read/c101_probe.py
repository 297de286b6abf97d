"""Session 24, call 7: do lines loaded with evict_last outlive the cold flush in a PyTorch process, and
does that make other kernels' cold figures faster? One process, no torch.compile. harness_b4 (hold
40 us) of: V = our vectorized RMSNorm at 2048^2 (x, y its own); Rn / Rl = a Triton kernel that reads
a separate 8 MiB buffer z (bf16) once, with normal / evict_last loads, and writes one float a block.
Order: V, Rn, V, Rl, V, Rl again, cudaCtxResetPersistingL2Cache, V, Rn, then the persisting L2 limit
set to 0, Rl, V, Rl. The device's persisting-L2 limit is printed at each step."""
import ctypes, statistics, sys
sys.path.insert(0, "scripts")
import torch, triton, triton.language as tl
import timing_probe as tp

rt = tp.cudart()
rt.cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
rt.cudaDeviceSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
l2 = torch.cuda.get_device_properties(0).L2_cache_size
ctx = {"rt": rt, "l2": l2, "l2buf": torch.empty(l2 // 4, dtype=torch.int32, device="cuda"),
       "big": torch.empty(64, dtype=torch.int32, device="cuda"), "hold_cycles": int(40 * 1950)}
lib = tp.probe_lib("build/ci/bench/libsolbench_probe.so")
stream = torch.cuda.Stream()

def limit():
    v = ctypes.c_size_t(0)
    err = rt.cudaDeviceGetLimit(ctypes.byref(v), 0x06)
    return v.value if err == 0 else f"error {err}"

@triton.jit
def read_once(z, out, n, BLOCK: tl.constexpr, LAST: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if LAST:
        v = tl.load(z + offs, mask=offs < n, eviction_policy="evict_last")
    else:
        v = tl.load(z + offs, mask=offs < n)
    tl.store(out + tl.program_id(0), tl.sum(v.to(tl.float32), axis=0))

N = 2048 * 2048
with torch.cuda.stream(stream):
    V = tp.make_call(torch, "vectorized", 2048, 2048, lib)
    z = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(N // 4096, device="cuda", dtype=torch.float32)
    Rn = lambda: read_once[(N // 4096,)](z, out, N, BLOCK=4096, LAST=False)
    Rl = lambda: read_once[(N // 4096,)](z, out, N, BLOCK=4096, LAST=True)
    for f in (Rn, Rl):
        f()
    torch.cuda.synchronize()
    want = z.float().view(-1, 4096).sum(1)
    Rn(); torch.cuda.synchronize(); assert torch.allclose(out, want, rtol=1e-3, atol=1e-2), "Rn wrong"
    Rl(); torch.cuda.synchronize(); assert torch.allclose(out, want, rtol=1e-3, atol=1e-2), "Rl wrong"

def step(tag, f):
    with torch.cuda.stream(stream):
        us = statistics.median(tp.measure(torch, "harness_b4", f, ctx) for _ in range(3))
    print(f"{tag:34s} {us:6.2f} us   persisting_l2 limit {limit()}", flush=True)

step("V", V)
step("Rn (normal loads)", Rn)
step("V after Rn", V)
step("Rl (evict_last loads)", Rl)
step("V after Rl", V)
step("Rl again", Rl)
print("cudaCtxResetPersistingL2Cache ->", rt.cudaCtxResetPersistingL2Cache(), flush=True)
step("V after the reset", V)
step("Rn", Rn)
print("cudaDeviceSetLimit(persisting, 0) ->", rt.cudaDeviceSetLimit(0x06, 0), flush=True)
step("Rl, limit 0", Rl)
step("V after Rl, limit 0", V)
step("Rl, limit 0, again", Rl)
