"""Session 24, call 5: which step of a torch.compile process makes a cold 2048^2 kernel ~1.2 us faster.
One process: vectorized and a D2D copy at 2048^2 under the harness protocol (timing_probe.measure,
harness_b4, hold 40 us), the device's L2 limits read each time; then after each stage: (A) a Triton
kernel of our own launched, (B) torch.compile of the RMSNorm composite at 64 x 64 run, (C) the same at
2048^2 run. argv[1] = 'control' re-measures without the stages."""
import ctypes, sys, statistics
sys.path.insert(0, "scripts")
import torch
import timing_probe as tp

rt = tp.cudart()
rt.cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
l2 = torch.cuda.get_device_properties(0).L2_cache_size
ctx = {"rt": rt, "l2": l2, "l2buf": torch.empty(l2 // 4, dtype=torch.int32, device="cuda"),
       "big": torch.empty(64, dtype=torch.int32, device="cuda"), "hold_cycles": int(40 * 1950)}
lib = tp.probe_lib("build/ci/bench/libsolbench_probe.so")
stream = torch.cuda.Stream()

def limits():
    out = {}
    for name, code in (("persisting_l2", 0x06), ("max_l2_fetch_granularity", 0x05)):
        v = ctypes.c_size_t(0)
        err = rt.cudaDeviceGetLimit(ctypes.byref(v), code)
        out[name] = v.value if err == 0 else f"error {err}"
    return out

with torch.cuda.stream(stream):
    vec = tp.make_call(torch, "vectorized", 2048, 2048, lib)
    cpy = tp.make_call(torch, "copy", 2048, 2048)

def measure(tag):
    with torch.cuda.stream(stream):
        r = {n: statistics.median(tp.measure(torch, "harness_b4", f, ctx) for _ in range(3)) for n, f in (("vectorized", vec), ("copy", cpy))}
    print(f"{tag:28s} vectorized {r['vectorized']:.2f} us  copy {r['copy']:.2f} us  {limits()}", flush=True)

measure("start")
measure("start, again")
if sys.argv[1:] == ["control"]:
    measure("control 3"); measure("control 4")
    sys.exit(0)
import triton, triton.language as tl

@triton.jit
def add_one(p, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(p + i, tl.load(p + i, mask=i < n) + 1, mask=i < n)

buf = torch.zeros(4096, device="cuda")
add_one[(4,)](buf, 4096, BLOCK=1024)
torch.cuda.synchronize()
measure("A: a Triton kernel ran")

def composite(x, w):
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
    return w * h.to(x.dtype)

c = torch.compile(composite, dynamic=False)
xs = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16); ws = torch.ones(64, device="cuda", dtype=torch.bfloat16)
c(xs, ws); torch.cuda.synchronize()
measure("B: compiled 64x64 ran")
measure("B, again")
xb = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16); wb = torch.ones(2048, device="cuda", dtype=torch.bfloat16)
c(xb, wb); torch.cuda.synchronize()
measure("C: compiled 2048^2 ran")
import gc; gc.collect()
measure("C, again")
