"""Session 24, call 6: does a cold 2048^2 figure depend on where x and y lie in memory? One process, no
torch.compile: x and y (8 MiB each) carved out of one 1 GiB allocation at 16 random 2 MiB-aligned,
non-overlapping offsets (seed 24), w fixed; for each placement, vectorized (checked against
torch.rms_norm first) and a D2D copy x -> y under the harness protocol (timing_probe.measure, harness_b4,
hold 40 us), medians of 3; two passes over the placements, the second in reverse order."""
import ctypes, random, statistics, sys
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
R = H = 2048
n = R * H
MiB2 = (2 << 20) // 2  # 2 MiB in bf16 elements
pool = torch.empty(512 * MiB2, dtype=torch.bfloat16, device="cuda")  # 1 GiB
slots = list(range(0, 512 - 4, 4))  # 8 MiB slots, 2 MiB-aligned starts
rng = random.Random(24)
placements = []
for _ in range(16):
    a, b = rng.sample(slots, 2)
    placements.append((a + rng.randrange(4) * 0, b))  # slot starts (units of 2 MiB)
w = torch.randn(H, device="cuda", dtype=torch.bfloat16) * 0.5 + 1
print("pool at", hex(pool.data_ptr()), "l2buf at", hex(ctx["l2buf"].data_ptr()), flush=True)
res = {}
with torch.cuda.stream(stream):
    for p in (1, 2):
        order = placements if p == 1 else placements[::-1]
        for a, b in order:
            x = pool[a * MiB2:a * MiB2 + n].view(R, H)
            y = pool[b * MiB2:b * MiB2 + n].view(R, H)
            x.normal_()
            call = tp.suite_call(torch, lib, "vectorized", x, w, y)
            call()
            want = torch.rms_norm(x.float(), (H,), w.float(), 1e-6)
            bad = ((y.float() - want).abs() > 4 * 2.0 ** -8 * want.abs().clamp_min(1e-3)).sum().item()
            if bad:
                raise SystemExit(f"placement {a},{b}: {bad} elements off")
            v = statistics.median(tp.measure(torch, "harness_b4", call, ctx) for _ in range(3))
            c = statistics.median(tp.measure(torch, "harness_b4", lambda: y.copy_(x), ctx) for _ in range(3))
            res.setdefault((a, b), []).append((v, c))
            print(f"pass {p} x at +{2*a:4d} MiB y at +{2*b:4d} MiB: vectorized {v:.2f} us  copy {c:.2f} us", flush=True)
vs = [statistics.mean(t[0] for t in r) for r in res.values()]
cs = [statistics.mean(t[1] for t in r) for r in res.values()]
print(f"over {len(res)} placements (mean of the two passes): vectorized {min(vs):.2f}-{max(vs):.2f} median {statistics.median(vs):.2f};"
      f" copy {min(cs):.2f}-{max(cs):.2f} median {statistics.median(cs):.2f}")
print("pass-to-pass |diff| median: vectorized", round(statistics.median(abs(r[0][0] - r[1][0]) for r in res.values()), 3),
      "copy", round(statistics.median(abs(r[0][1] - r[1][1]) for r in res.values()), 3))
