#!/usr/bin/env python3
"""One decode step of a ragged batch over a paged KV cache with solbench, as a serving engine runs it.

A batch of sequences of their own lengths keeps K and V in vLLM's page pools ([num_pages, page_size, heads_kv,
head_dim]), each sequence's pages scattered over the pool and named by its row of a block table. The step runs
solbench.attention over the pools (solbench::paged_attention), checks every sequence against SDPA on its own keys,
and times it against SDPA over the batch padded to its longest sequence with a padding mask (what an engine
without ragged kernels runs). With --fp8 the pools hold e4m3 values (vLLM's kv_cache_dtype="fp8") at per-tensor
scales, which the step takes as k_scale and v_scale.

usage: examples/paged_decode.py [--batch N] [--max-len N] [--page-size N] [--fp8] [--seed N]
Prints each implementation's time a step (CUDA events, the median of 20 after warm-up: a quick look; the suite's
numbers come from bench_attention's paged cases). Exits 3 without a GPU, 1 when a sequence disagrees with SDPA.
"""
import argparse
import pathlib
import sys

import torch
import torch.nn.functional as F

NO_GPU_EXIT = 3
HEADS_Q, HEADS_KV, HEAD_DIM = 32, 8, 128  # Llama-3-8B's attention


def ragged_lengths(batch, max_len, generator):
    """Uniform lengths in [1, max_len], the first max_len (so the padded batch is max_len long)."""
    lens = torch.randint(1, max_len + 1, (batch,), generator=generator)
    lens[0] = max_len
    return lens.tolist()


def page_pools(ks, vs, page_size, generator):
    """Sequences' K and V ([len_b, heads_kv, head_dim] each) in page pools, pages scattered by a permutation:
    (k_pages, v_pages, block_table [batch, max_pages] int32, -1 past a sequence)."""
    pages_of = [-(-k.shape[0] // page_size) for k in ks]
    num_pages, max_pages = sum(pages_of), max(pages_of)
    order = torch.randperm(num_pages, generator=generator).tolist()
    k_pages = ks[0].new_zeros((num_pages, page_size) + tuple(ks[0].shape[1:]))
    v_pages = torch.zeros_like(k_pages)
    table = torch.full((len(ks), max_pages), -1, dtype=torch.int32)
    for b, (k, v) in enumerate(zip(ks, vs)):
        for j in range(pages_of[b]):
            page, rows = order.pop(), slice(j * page_size, min((j + 1) * page_size, k.shape[0]))
            table[b, j] = page
            k_pages[page, :rows.stop - rows.start] = k[rows]
            v_pages[page, :rows.stop - rows.start] = v[rows]
    return k_pages, v_pages, table


def median_ms(fn, reps=20):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=8192)
    parser.add_argument("--page-size", type=int, default=16)
    parser.add_argument("--fp8", action="store_true", help="an e4m3 cache at per-tensor scales")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("paged_decode: no GPU: nothing to run", file=sys.stderr)
        return NO_GPU_EXIT
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))  # the checkout's package
    import solbench  # its operator library built (python/README.md says how)

    gen = torch.Generator().manual_seed(args.seed)
    lens = ragged_lengths(args.batch, args.max_len, gen)
    dtype, device = torch.bfloat16, "cuda"
    q = torch.randn(args.batch, HEADS_Q, 1, HEAD_DIM, generator=gen).to(device, dtype)
    ks = [torch.randn(n, HEADS_KV, HEAD_DIM, generator=gen).to(device, dtype) for n in lens]
    vs = [torch.randn(n, HEADS_KV, HEAD_DIM, generator=gen).to(device, dtype) for n in lens]
    scales = {}
    if args.fp8:  # per-tensor scales as vLLM computes them: the largest magnitude over e4m3's largest, 448
        scales = {"k_scale": max(k.abs().max().item() for k in ks) / 448,
                  "v_scale": max(v.abs().max().item() for v in vs) / 448}
        ks = [(k / scales["k_scale"]).to(torch.float8_e4m3fn) for k in ks]
        vs = [(v / scales["v_scale"]).to(torch.float8_e4m3fn) for v in vs]
    k_pages, v_pages, table = page_pools(ks, vs, args.page_size, gen)
    table, seq_lens = table.to(device), torch.tensor(lens, dtype=torch.int32, device=device)
    seq_lens_cpu = torch.tensor(lens, dtype=torch.int32)

    def paged():
        return solbench.attention(q, k_pages, v_pages, block_table=table, seq_lens=seq_lens,
                                  seq_lens_cpu=seq_lens_cpu, **scales)

    # The values the cache holds, per sequence, for SDPA.
    def values(t, scale):
        return t.to(dtype) * scale if args.fp8 else t
    k_vals = [values(k, scales.get("k_scale", 1.0)) for k in ks]
    v_vals = [values(v, scales.get("v_scale", 1.0)) for v in vs]
    o = paged()
    worst = 0.0
    for b, n in enumerate(lens):
        k, v = k_vals[b].transpose(0, 1)[None], v_vals[b].transpose(0, 1)[None]  # [1, heads_kv, n, head_dim]
        want = F.scaled_dot_product_attention(q[b:b + 1].float(), k.float(), v.float(), enable_gqa=True)
        worst = max(worst, (o[b:b + 1].float() - want).abs().max().item())
    # bf16's rounding of an output of magnitude <= 1 (a mean of N(0, 1) values), with room for the sums.
    if not worst <= 2 ** -6:
        print(f"paged_decode: a sequence differs from SDPA by {worst:.3g}", file=sys.stderr)
        return 1

    padded_k = torch.zeros(args.batch, HEADS_KV, args.max_len, HEAD_DIM, device=device, dtype=dtype)
    padded_v = torch.zeros_like(padded_k)
    for b, n in enumerate(lens):
        padded_k[b, :, :n], padded_v[b, :, :n] = k_vals[b].transpose(0, 1), v_vals[b].transpose(0, 1)
    mask = (torch.arange(args.max_len, device=device)[None, :] < seq_lens[:, None])[:, None, None, :]

    def sdpa_padded():
        return F.scaled_dot_product_attention(q, padded_k, padded_v, attn_mask=mask, enable_gqa=True)

    owned = sum(lens) / (args.batch * args.max_len)
    print(f"{args.batch} sequences up to {args.max_len} keys ({100 * owned:.0f}% of the padded batch), pages of "
          f"{args.page_size}, {'e4m3' if args.fp8 else 'bf16'} cache; max |paged - SDPA| {worst:.2g}")
    ours, theirs = median_ms(paged), median_ms(sdpa_padded)
    print(f"solbench paged {ours * 1e3:.1f} us, SDPA padded + mask {theirs * 1e3:.1f} us: {theirs / ours:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
