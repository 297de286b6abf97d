#!/usr/bin/env python3
"""Trains a tiny Llama-style decoder-only model (RMSNorm, RoPE, grouped-query attention through
F.scaled_dot_product_attention, SwiGLU) on a synthetic task, with torch.nn.RMSNorm or solbench.nn.RMSNorm.

The task: each sequence follows x[t+1] = (a * x[t] + b) mod vocab, with its own odd a and its own b, from a
random x[0]. A sequence's first tokens give its rule away, so a model that learns to read it from the context
predicts the rest, and the loss falls from ln(vocab) towards 0. Everything is seeded: the same command gives
the same batches and the same initial weights.

The step: bf16 autocast (the weights, and so the residual stream and the norms, stay fp32; the matrix
products and attention run in bf16), cross-entropy, gradient clipping, torch.optim.AdamW(fused=True), linear
warm-up then cosine decay. --norm solbench needs the operator library built (python/README.md).

usage: examples/train_llama.py [--norm {torch,solbench}] [--config {small,base}] [--steps N] [--log-every N]
                               [--compile] [--seed N]
Prints the loss and tokens/s at step 1 (its time includes the warm-up, and compilation with --compile) and
every --log-every steps. Exits 3 without a GPU, 1 when the loss did not fall.
"""
import argparse
import math
import pathlib
import sys
import time

import torch
import torch.nn.functional as F

NO_GPU_EXIT = 3
# dim, layers, heads, kv_heads, mlp hidden, vocab, sequence length, batch size, peak learning rate.
CONFIGS = {
    "small": dict(dim=256, layers=4, heads=8, kv_heads=2, hidden=768, vocab=64, seq_len=256, batch=32, lr=3e-3),
    "base": dict(dim=768, layers=12, heads=12, kv_heads=4, hidden=2048, vocab=64, seq_len=1024, batch=16, lr=1e-3),
}


def rope_tables(seq_len, head_dim, device, base=10000.0):
    """cos and sin [seq_len, head_dim / 2] of RoPE's rotation angles, position * base^(-2i / head_dim)."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim)
    angles = torch.arange(seq_len, device=device, dtype=torch.float32)[:, None] * inv_freq
    return angles.cos(), angles.sin()


def rope(x, cos, sin):
    """Rotates the pairs (x[..., i], x[..., i + head_dim / 2]) of x [batch, heads, seq, head_dim] (Llama's layout)."""
    x1, x2 = x.float().chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).type_as(x)


class Block(torch.nn.Module):
    def __init__(self, c, norm):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c["heads"], c["kv_heads"], c["dim"] // c["heads"]
        self.attn_norm, self.mlp_norm = norm(c["dim"], eps=1e-5), norm(c["dim"], eps=1e-5)
        self.wqkv = torch.nn.Linear(c["dim"], (self.heads + 2 * self.kv_heads) * self.head_dim, bias=False)
        self.wo = torch.nn.Linear(c["dim"], c["dim"], bias=False)
        self.gate_up = torch.nn.Linear(c["dim"], 2 * c["hidden"], bias=False)
        self.down = torch.nn.Linear(c["hidden"], c["dim"], bias=False)

    def forward(self, x, cos, sin):
        b, s, dim = x.shape
        q, k, v = self.wqkv(self.attn_norm(x)).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1)
        q = rope(q.view(b, s, self.heads, self.head_dim).transpose(1, 2), cos, sin)
        k = rope(k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2), cos, sin)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, dim))
        gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Llama(torch.nn.Module):
    """Token embedding, `layers` blocks, a final norm and the output projection; norm: the RMSNorm class."""

    def __init__(self, c, norm):
        super().__init__()
        self.embed = torch.nn.Embedding(c["vocab"], c["dim"])
        self.blocks = torch.nn.ModuleList(Block(c, norm) for _ in range(c["layers"]))
        self.norm = norm(c["dim"], eps=1e-5)
        self.head = torch.nn.Linear(c["dim"], c["vocab"], bias=False)
        for m in self.modules():
            if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(m.weight, std=0.02)
        self.head_dim = c["dim"] // c["heads"]

    def forward(self, tokens):
        cos, sin = rope_tables(tokens.shape[1], self.head_dim, tokens.device)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def batch(gen, c, device):
    """(inputs, targets) [batch, seq_len]: sequences of x[t+1] = (a x[t] + b) mod vocab, a odd (a bijection
    modulo a power of two) and b drawn per sequence; targets are the inputs one token on."""
    n, vocab = c["batch"], c["vocab"]
    a = 2 * torch.randint(0, vocab // 2, (n,), generator=gen) + 1
    b = torch.randint(0, vocab, (n,), generator=gen)
    x = [torch.randint(0, vocab, (n,), generator=gen)]
    for _ in range(c["seq_len"]):
        x.append((a * x[-1] + b) % vocab)
    x = torch.stack(x, dim=1).to(device, non_blocking=True)
    return x[:, :-1], x[:, 1:]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--norm", choices=["torch", "solbench"], default="solbench")
    p.add_argument("--config", choices=sorted(CONFIGS), default="small")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.steps < 1 or args.log_every < 1:
        p.error("--steps and --log-every must be >= 1")
    if not torch.cuda.is_available():
        try:
            torch.cuda.init()
            why = "torch.cuda.is_available() is False"
        except Exception as e:  # the driver's or the runtime's own words
            why = str(e).splitlines()[0]
        print(f"train_llama.py: no GPU: {why}", file=sys.stderr)
        return NO_GPU_EXIT
    if args.norm == "solbench":
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))  # the checkout's package
        import solbench
        norm = solbench.nn.RMSNorm
    else:
        norm = torch.nn.RMSNorm

    c = CONFIGS[args.config]
    torch.manual_seed(args.seed)
    model = Llama(c, norm).cuda()
    step_fn = torch.compile(model) if args.compile else model
    # Weight decay on the matrices only, not on the norms' gains.
    decay = [q for q in model.parameters() if q.dim() >= 2]
    no_decay = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=c["lr"], betas=(0.9, 0.95), fused=True)
    warmup = max(1, args.steps // 10)

    def lr_scale(s):  # linear warm-up over the first tenth of the steps, then cosine decay to 0
        if s < warmup:
            return (s + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, args.steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_scale)
    gen = torch.Generator().manual_seed(args.seed)
    print(f"{args.config}: {sum(q.numel() for q in model.parameters()) / 1e6:.1f}M parameters, norm "
          f"{norm.__module__}.{norm.__name__}, {c['batch']} x {c['seq_len']} tokens a step, "
          f"{torch.cuda.get_device_name()}")

    losses, tokens, start = [], 0, time.perf_counter()
    for step in range(1, args.steps + 1):
        inputs, targets = batch(gen, c, "cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = step_fn(inputs)
        loss = F.cross_entropy(logits.float().view(-1, c["vocab"]), targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        tokens += inputs.numel()
        if step == 1 or step % args.log_every == 0 or step == args.steps:
            losses.append(loss.item())  # synchronizes, so the time below covers the steps' GPU work
            elapsed, start = time.perf_counter() - start, time.perf_counter()
            print(f"step {step:5d}  loss {losses[-1]:.4f}  tokens/s {tokens / elapsed:,.0f}")
            tokens = 0
    print(f"loss {losses[0]:.4f} at step 1, {losses[-1]:.4f} at step {args.steps} (ln(vocab) = "
          f"{math.log(c['vocab']):.4f})")
    return 0 if losses[-1] < losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
