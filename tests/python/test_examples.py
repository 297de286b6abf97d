#!/usr/bin/env python3
"""The parts of examples/train_llama.py and examples/paged_decode.py that run without a GPU: the model (with
torch.nn.RMSNorm) and its forward on CPU, the synthetic task, the page pools, and the scripts' exit code 3
without a GPU. Training itself needs a GPU
(python/README.md has the command).

usage: test_examples.py [unittest arguments]
Exits 77 when every test skipped (ctest: Skipped), printing why: without PyTorch.
"""
import importlib.util
import math
import pathlib
import subprocess
import sys
import unittest

import ctest_main  # tests/python/ctest_main.py: exit 77 when every test skipped

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_llama.py"

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def load_example():
    spec = importlib.util.spec_from_file_location("train_llama", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TrainLlama(unittest.TestCase):
    def setUp(self):
        if torch is None:
            self.skipTest("PyTorch is not installed")
        self.ex = load_example()
        self.config = dict(self.ex.CONFIGS["small"], batch=4, seq_len=64)

    def test_the_task_is_seeded_and_follows_one_rule_a_sequence(self):
        inputs, targets = self.ex.batch(torch.Generator().manual_seed(5), self.config, "cpu")
        again, _ = self.ex.batch(torch.Generator().manual_seed(5), self.config, "cpu")
        other, _ = self.ex.batch(torch.Generator().manual_seed(6), self.config, "cpu")
        self.assertEqual(inputs.shape, (4, 64))
        self.assertTrue(torch.equal(inputs, again))
        self.assertFalse(torch.equal(inputs, other))
        self.assertTrue(torch.equal(targets[:, :-1], inputs[:, 1:]))  # targets: the inputs one token on
        vocab = self.config["vocab"]
        for x, y in zip(inputs, targets):
            # Some odd a and some b give every next token: y = (a x + b) mod vocab.
            rules = [(a, b) for a in range(1, vocab, 2) for b in range(vocab) if torch.equal((a * x + b) % vocab, y)]
            self.assertTrue(rules, f"no affine rule generates {x.tolist()}")

    def test_the_model_runs_forward_on_cpu_at_chance_loss(self):
        torch.manual_seed(0)
        model = self.ex.Llama(self.config, torch.nn.RMSNorm)
        inputs, targets = self.ex.batch(torch.Generator().manual_seed(0), self.config, "cpu")
        logits = model(inputs)
        self.assertEqual(logits.shape, (4, 64, self.config["vocab"]))
        # Weights of std 0.02 give logits near 0: the loss of a uniform guess, ln(vocab).
        loss = F.cross_entropy(logits.view(-1, self.config["vocab"]), targets.reshape(-1)).item()
        self.assertAlmostEqual(loss, math.log(self.config["vocab"]), delta=0.05)
        loss_grad = F.cross_entropy(model(inputs).view(-1, self.config["vocab"]), targets.reshape(-1))
        loss_grad.backward()
        self.assertTrue(all(p.grad is not None for p in model.parameters()))

    def test_rope_rotates_pairs_and_keeps_norms(self):
        cos, sin = self.ex.rope_tables(16, 32, "cpu")
        x = torch.randn(2, 4, 16, 32)
        y = self.ex.rope(x, cos, sin)
        torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
        torch.testing.assert_close(y[:, :, 0], x[:, :, 0])  # position 0: no rotation

    def test_exits_3_without_a_gpu(self):
        if torch.cuda.is_available():
            self.skipTest("a GPU is present: the script would train")
        run = subprocess.run([sys.executable, str(EXAMPLE), "--norm", "torch", "--steps", "1"], capture_output=True,
                             text=True, timeout=300)
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("train_llama.py: no GPU: ", run.stderr)



class PagedDecode(unittest.TestCase):
    """examples/paged_decode.py's page pools on the CPU, and its exit code 3 without a GPU."""

    def setUp(self):
        if torch is None:
            self.skipTest("PyTorch is not installed")
        spec = importlib.util.spec_from_file_location("paged_decode", ROOT / "examples" / "paged_decode.py")
        self.ex = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.ex)

    def test_the_pools_hold_each_sequence_through_its_block_table(self):
        gen = torch.Generator().manual_seed(1)
        lens = self.ex.ragged_lengths(5, 100, gen)
        self.assertEqual((len(lens), lens[0], min(lens) >= 1, max(lens)), (5, 100, True, 100))
        ks = [torch.randn(n, 2, 8, generator=gen) for n in lens]
        vs = [torch.randn(n, 2, 8, generator=gen) for n in lens]
        k_pages, v_pages, table = self.ex.page_pools(ks, vs, 16, gen)
        self.assertEqual(sorted(table[table >= 0].tolist()), list(range(k_pages.shape[0])))  # each page once
        for b, n in enumerate(lens):
            self.assertEqual(int((table[b] >= 0).sum()), -(-n // 16))
            rows = torch.stack([k_pages[table[b, t // 16], t % 16] for t in range(n)])
            self.assertTrue(torch.equal(rows, ks[b]))
            rows = torch.stack([v_pages[table[b, t // 16], t % 16] for t in range(n)])
            self.assertTrue(torch.equal(rows, vs[b]))

    def test_exits_3_without_a_gpu(self):
        if torch.cuda.is_available():
            self.skipTest("a GPU is present: the script would run")
        run = subprocess.run([sys.executable, str(ROOT / "examples" / "paged_decode.py"), "--batch", "2"],
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("paged_decode: no GPU", run.stderr)


if __name__ == "__main__":
    ctest_main.main(__name__, __file__)
