#!/usr/bin/env python3
"""Session 11 probe: does a PyTorch attention call's cold time depend on how long the GPU has been
running it back to back (the SM clock under sustained load), and does do_bench agree with the
harness when given the harness's amount of work?  Per case (bf16):
  trace: after 1 s idle, cold launches (L2-sized zero_, events around the call, one sync a launch) for
         ~300 ms of work; the median launch time in windows of cumulative work, and the SM clock after.
  recovery: after that load, idle g s, then 8 cold launches: median and clock.
  do_bench: after 1 s idle, do_bench(warmup=1, rep=R) for R = 15, 45, 200 ms (each after 1 s idle), and
         do_bench(warmup=25, rep=200) right after the 45 ms one (no idle)."""
import json, statistics, sys, time
import torch, triton.testing
sys.path.insert(0, "scripts")
import crosscheck_torch as xc, sbresults

CASES = ["attention/torch_sdpa_cudnn/bf16/prefill/b1_hq32_hkv32_d128_q16384_kv16384_causal/cold",
         "attention/torch_sdpa_cudnn/bf16/prefill/b4_hq32_hkv32_d128_q4096_kv4096_causal/cold",
         "attention/torch_sdpa_cudnn/bf16/prefill/b4_hq32_hkv32_d128_q4096_kv4096/cold",
         "attention/torch_sdpa_flash/bf16/prefill/b4_hq32_hkv32_d128_q4096_kv4096_causal/cold"]
out = {}
l2 = torch.cuda.get_device_properties(0).L2_cache_size
cache = torch.empty(l2 // 4, dtype=torch.int, device="cuda")
s = torch.cuda.Stream()

def cold(fn, n):
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        cache.zero_(); a.record(); fn(); b.record(); b.synchronize()
        ts.append(1e3 * a.elapsed_time(b))
    return ts

for name in CASES:
    case = sbresults.Case(name=name, **sbresults.parse_name(name))
    fn = xc.attention_call(torch, case, torch.bfloat16)
    r = {}
    with torch.cuda.stream(s):
        fn(); torch.cuda.synchronize()
        time.sleep(1.0)
        t1 = cold(fn, 1)[0]
        n = max(8, int(300e3 / t1))
        ts = [t1] + cold(fn, n)
        r["trace_clock_after"] = xc.sm_clock_mhz(torch)
        cum, wins, edges, cur = 0.0, {}, [10e3, 30e3, 60e3, 120e3, 200e3, 1e12], 0
        for t in ts:
            while cum >= edges[cur]: cur += 1
            wins.setdefault(cur, []).append(t); cum += t
        labels = ["0-10ms", "10-30ms", "30-60ms", "60-120ms", "120-200ms", "200ms+"]
        r["trace"] = {labels[k]: (statistics.median(v), len(v)) for k, v in sorted(wins.items())}
        r["recovery"] = {}
        for g in (0.0, 0.02, 0.1, 0.5):
            cold(fn, max(4, int(150e3 / t1)))  # reload
            time.sleep(g)
            v = cold(fn, 8)
            r["recovery"][g] = (statistics.median(v), v[0], xc.sm_clock_mhz(torch))
        r["do_bench"] = {}
        for rep in (15, 45, 200):
            time.sleep(1.0)
            t = 1e3 * triton.testing.do_bench(fn, warmup=1, rep=rep, return_mode="median")
            r["do_bench"][f"warmup1_rep{rep}_after_idle"] = (t, xc.sm_clock_mhz(torch))
        t = 1e3 * triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
        r["do_bench"]["warmup25_rep200_after_load"] = (t, xc.sm_clock_mhz(torch))
    out[name] = r
    print(name, json.dumps(r, indent=1), flush=True)
    del fn
json.dump(out, open(sys.argv[1], "w"), indent=1)
