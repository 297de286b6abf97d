"""Session 24, call 8: torch.compile's RMSNorm (Inductor's kernel loads x and w with evict_last) against
our vectorized kernel at 2048^2, in one process, every tensor kept alive (no buffer of one call reused by
another, unlike timing_probe.py's calls, which free theirs), under the harness protocol (harness_b4,
hold 150 us: above the compiled call's host time) and do_bench; first with the device's default
persisting-L2 limit, then with it set to 0; the same Triton read of a separate 8 MiB buffer with
normal / evict_last loads beside them. Alternating order, two rounds each."""
import ctypes, statistics, sys
sys.path.insert(0, "scripts")
import torch, triton, triton.language as tl
import timing_probe as tp

rt = tp.cudart()
rt.cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
rt.cudaDeviceSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
l2 = torch.cuda.get_device_properties(0).L2_cache_size
ctx = {"rt": rt, "l2": l2, "l2buf": torch.empty(l2 // 4, dtype=torch.int32, device="cuda"),
       "big": torch.empty(64, dtype=torch.int32, device="cuda"), "hold_cycles": int(150 * 1950)}
lib = tp.probe_lib("build/ci/bench/libsolbench_probe.so")

@triton.jit
def read_once(z, out, n, BLOCK: tl.constexpr, LAST: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if LAST:
        v = tl.load(z + offs, mask=offs < n, eviction_policy="evict_last")
    else:
        v = tl.load(z + offs, mask=offs < n)
    tl.store(out + tl.program_id(0), tl.sum(v.to(tl.float32), axis=0))

def composite(x, w):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
    return w * h.to(x.dtype)

N = 2048 * 2048
keep = []
calls = {}
xc = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16); wc = torch.randn(2048, device="cuda", dtype=torch.bfloat16) * 0.5 + 1
comp = torch.compile(composite, dynamic=False)
outs = []
def compiled():
    outs.append(comp(xc, wc))
    if len(outs) > 8: outs.pop(0)  # its outputs kept a while: their blocks are not handed to anyone else
calls["compiled"] = compiled
calls["vectorized"] = tp.make_call(torch, "vectorized", 2048, 2048, lib)
z = torch.randn(N, device="cuda", dtype=torch.bfloat16); zo = torch.empty(N // 4096, device="cuda")
calls["read normal"] = lambda: read_once[(N // 4096,)](z, zo, N, BLOCK=4096, LAST=False)
calls["read evict_last"] = lambda: read_once[(N // 4096,)](z, zo, N, BLOCK=4096, LAST=True)
for f in calls.values():
    f(); f()
torch.cuda.synchronize()
ref = composite(xc, wc)
assert torch.allclose(comp(xc, wc).float(), ref.float(), rtol=1e-2, atol=1e-2)

def limit():
    v = ctypes.c_size_t(0); rt.cudaDeviceGetLimit(ctypes.byref(v), 0x06); return v.value

for setting in ("default", "0"):
    if setting == "0":
        print("cudaDeviceSetLimit(persisting, 0) ->", rt.cudaDeviceSetLimit(0x06, 0), flush=True)
    res = {}
    for rnd in range(2):
        names = list(calls) if rnd == 0 else list(calls)[::-1]
        for n in names:
            h = statistics.median(tp.measure(torch, "harness_b4", calls[n], ctx) for _ in range(3))
            d = tp.measure(torch, "do_bench", calls[n], ctx)
            res.setdefault(n, []).append((h, d))
    for n, v in res.items():
        print(f"persisting limit {limit():>9}  {n:16s} harness_b4 {statistics.mean(t[0] for t in v):6.2f} us "
              f"({', '.join(f'{t[0]:.2f}' for t in v)})  do_bench {statistics.mean(t[1] for t in v):6.2f} us", flush=True)
