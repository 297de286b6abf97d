"""Synthetic Google Benchmark JSON with H200-like numbers, for the script tests.

A case's true time is a simple model (launch floor + max(bytes / bandwidth, flops / compute), each
implementation with its own efficiency); each repetition adds 1-2 % Gaussian noise and, sometimes,
one +8 % outlier (a clock dip), as real repetitions do.
"""
import json
import random

COPY_GBPS = 3912.4
GEMM_TFLOPS = 742.8
L2_BYTES = 62914560
FLOOR_US = {"cold": 2.2, "hot": 0.9}

RMSNORM_EFF = {"naive": 0.30, "block_reduce": 0.62, "warp_shuffle": 0.71, "vectorized": 0.88,
               "torch_rms_norm": 0.81, "torch_composite": 0.27, "ref_copy": 0.95}
PREFILL_EFF = {"manual": 0.04, "tiled_flash": 0.42, "torch_sdpa_flash": 0.55,
               "torch_sdpa_cudnn": 0.63}
DECODE_EFF = {"manual": 0.25, "decode_splitk": 0.78, "torch_sdpa_flash": 0.58, "ref_kv_read": 1.05}
ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def context(version="1.8.3", **overrides):
    ctx = {"date": "2026-11-29T16:40:12+00:00", "host_name": "h200-node",
           "executable": "./build/release/bench/bench_rmsnorm", "num_cpus": 16,
           "mhz_per_cpu": 2400, "cpu_scaling_enabled": False,
           "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 1}],
           "load_avg": [0.61, 0.4, 0.3], "library_build_type": "release",
           "gpu_name": "NVIDIA H200", "sm_count": "132", "l2_bytes": str(L2_BYTES),
           "sm_clock_mhz": "1980", "mem_clock_mhz": "3201", "driver": "13.0", "nvidia_driver": "580.159.04",
           "cuda_runtime": "13.0", "torch_version": "2.11.0+cu130", "git_commit": "3f2c1ab",
           "kernels_fingerprint": "0123456789abcdef", "build_type": "Release",
           "copy_gbps": str(COPY_GBPS), "gemm_tflops": str(GEMM_TFLOPS),
           "command": "scripts/run_gpu.sh results/h200"}
    if version.startswith("1.8"):
        ctx["json_schema_version"] = 1
    ctx.update(overrides)
    return ctx


def rmsnorm(impl, dtype, rows, hidden, mode):
    nbytes = (2 * rows * hidden + hidden) * ELEM_BYTES[dtype]
    flops = 4 * rows * hidden
    bw = COPY_GBPS * RMSNORM_EFF[impl] * (1.7 if mode == "hot" and nbytes < L2_BYTES else 1.0)
    row_latency_us = hidden / 4096 * (12.0 if impl == "naive" else 1.0)
    launches = 5 if impl == "torch_composite" else 1
    t = launches * FLOOR_US[mode] + row_latency_us + nbytes / bw / 1e3
    return {"name": f"rmsnorm/{impl}/{dtype}/t{rows}_h{hidden}/{mode}", "us": t,
            "bytes": nbytes, "flops": flops}


def attention(impl, dtype, workload, b, hq, hkv, d, q, kv, causal, mode):
    e = ELEM_BYTES[dtype]
    nbytes = e * (2 * b * hq * q * d + 2 * b * hkv * kv * d)
    flops = 0 if impl.startswith("ref_") else 4 * b * hq * q * kv * d // (2 if causal else 1)
    eff = (PREFILL_EFF if workload == "prefill" else DECODE_EFF)[impl]
    t = FLOOR_US[mode] + max(nbytes / (COPY_GBPS * eff) / 1e3, flops / (GEMM_TFLOPS * eff) / 1e6)
    shape = f"b{b}_hq{hq}_hkv{hkv}_d{d}_q{q}_kv{kv}" + ("_causal" if causal else "")
    return {"name": f"attention/{impl}/{dtype}/{workload}/{shape}/{mode}", "us": t,
            "bytes": nbytes, "flops": flops}


# bench_e2e: one Llama-3-8B decoder layer; a layer's time as a multiple of ours.
E2E_SCALE = {"solbench": 1.0, "solbench_norms": 1.05, "solbench_attention": 1.03, "torch_eager": 1.08,
             "torch_sdpa_flash": 1.12, "ref_rest_of_layer": 0.8}


def e2e(impl, workload, b, kv, mode="cold", ours_us=200.0):
    q = 1 if workload == "decode" else kv
    weights = 218112000
    nbytes = 2 * (weights + 2 * b * q * 4096 + 2 * b * kv * 8 * 128)
    flops = 2 * b * q * (weights - 8192) + (0 if impl.startswith("ref_") else 4 * 128 * 32 * b * q * kv)
    return {"name": f"e2e/{impl}/bf16/{workload}/h4096_hq32_hkv8_d128_f14336_b{b}_q{q}_kv{kv}/{mode}",
            "us": ours_us * E2E_SCALE[impl], "bytes": nbytes, "flops": flops}


def floor(mode, impl="empty_kernel", us=None):
    return {"name": f"floor/{impl}/{mode}", "us": FLOOR_US[mode] if us is None else us, "bytes": 0, "flops": 0}


def rmsnorm_grid(impls=tuple(RMSNORM_EFF), dtype="bf16", mode="cold"):
    """Hidden sweep at 4096 tokens and token sweep at hidden 4096 (Llama-3-8B), 7 shapes."""
    shapes = [(4096, h) for h in (1024, 2048, 4096, 8192)] + [(t, 4096) for t in (1, 256, 16384)]
    return [rmsnorm(i, dtype, t, h, mode) for t, h in shapes for i in impls]


def attention_set(mode="cold"):
    """Llama-3-8B heads (32 q / 8 kv, d 128): prefill over S, decode over KV length and batch."""
    cases = [attention(i, "bf16", "prefill", 1, 32, 8, 128, s, s, True, mode)
             for s in (512, 1024, 2048, 4096) for i in PREFILL_EFF]
    cases += [attention(i, "bf16", "decode", 8, 32, 8, 128, 1, kv, False, mode)
              for kv in (1024, 4096, 16384) for i in DECODE_EFF]
    cases += [attention(i, "bf16", "decode", b, 32, 8, 128, 1, 4096, False, mode)
              for b in (1, 32) for i in DECODE_EFF]
    return cases


def _row(case, rep_index, reps, us, family):
    return {"name": case["name"] + "/manual_time", "family_index": family,
           "per_family_instance_index": 0, "run_name": case["name"] + "/manual_time",
           "run_type": "iteration", "repetitions": reps, "repetition_index": rep_index,
           "threads": 1, "iterations": 2000, "real_time": us, "cpu_time": us * 1.3 + 4.0,
           "time_unit": "us"}


def _with_counters(row, case, us, err):
    if case.get("launches"):  # a hot graph's launch count, where a test sets one
        row["launches"] = float(case["launches"])
    for key, value in case.get("counters", {}).items():  # other harness counters a test sets
        row[key] = float(value)
    if not case["bytes"]:
        return row
    row["GB/s"] = case["bytes"] / us / 1e3
    row["TFLOP/s"] = case["flops"] / us / 1e6
    row["bytes"] = float(case["bytes"])
    row["err"] = err
    row["flops"] = float(case["flops"])
    bound = max(case["bytes"] / (COPY_GBPS * 1e9), case["flops"] / (GEMM_TFLOPS * 1e12))
    row["sol_pct"] = 100 * bound / (us * 1e-6)
    return row


def _stat(values, name):
    n = len(values)
    mean = sum(values) / n
    std = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5 if n > 1 else 0.0
    if name == "mean":
        return mean
    if name == "median":
        s = sorted(values)
        return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return std if name == "stddev" else (std / mean if mean else 0.0)


def run(cases, seed=0, reps=5, version="1.8.3", scale=None, errors=None, sigma=None, ctx=None):
    """A Google Benchmark JSON document. scale: {name: factor} on the true time (a planted change);
    errors: {name: message} for cases that SkipWithError; sigma: {name: relative noise} instead of
    the 1-2 % drawn for each case."""
    rng = random.Random(seed)
    scale, errors, sigma = scale or {}, errors or {}, sigma or {}
    rows = []
    for family, case in enumerate(cases):
        if case["name"] in errors:
            for r in range(reps):
                row = _row(case, r, reps, 0.0, family)
                row.update(error_occurred=True, error_message=errors[case["name"]], iterations=0,
                           cpu_time=0.0)
                rows.append(row)
            continue
        case_sigma = sigma.get(case["name"], rng.uniform(0.01, 0.02))
        err = round(rng.uniform(0.05, 0.6), 3)
        true_us = case["us"] * scale.get(case["name"], 1.0)
        times = [true_us * (1 + rng.gauss(0, case_sigma)) for _ in range(reps)]
        if reps >= 5 and rng.random() < 0.15:
            times[rng.randrange(reps)] *= 1.08
        iters = [_with_counters(_row(case, r, reps, t, family), case, t, err)
                 for r, t in enumerate(times)]
        rows += iters
        if reps < 2:
            continue
        for agg in ("mean", "median", "stddev", "cv"):
            row = {k: v for k, v in iters[0].items() if k != "repetition_index"}
            row.update(name=f"{case['name']}/manual_time_{agg}", run_type="aggregate",
                       iterations=reps)
            row["aggregate_name"] = agg
            row["aggregate_unit"] = "percentage" if agg == "cv" else "time"
            for key in ("real_time", "cpu_time", "GB/s", "TFLOP/s", "bytes", "err", "flops",
                        "sol_pct"):
                if key in row:
                    row[key] = _stat([it[key] for it in iters], agg)
            rows.append(_reorder(row))
    return {"context": ctx or context(version), "benchmarks": rows}


def _reorder(row):
    order = ["name", "family_index", "per_family_instance_index", "run_name", "run_type",
             "repetitions", "threads", "aggregate_name", "aggregate_unit", "iterations",
             "real_time", "cpu_time", "time_unit"]
    return {k: row[k] for k in order if k in row} | {k: v for k, v in row.items() if k not in order}


def partial(doc):
    """The partial results file (sbresults' module docstring) a run cut short leaves of `doc`: its context
    line, then its iteration rows, one a line."""
    rows = [row for row in doc["benchmarks"] if row["run_type"] == "iteration"]
    return "".join(json.dumps(x) + "\n" for x in [{"context": doc["context"]}] + rows)


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return path
