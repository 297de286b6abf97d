"""energy_probe.py's checks that need no GPU: its argument grammar, its summary, and its exit codes (2 for
a usage error, 3 without a GPU, before it imports torch or NVML)."""
import subprocess
import sys
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))
from no_gpu import ExitCodeChecks  # noqa: E402
import energy_probe  # noqa: E402


def run(*args, env=None):
    return subprocess.run([sys.executable, str(TOOLS / "energy_probe.py"), *args], capture_output=True, text=True,
                          env=env, timeout=60)


class Grammar(unittest.TestCase):
    def test_shapes_are_bench_labels(self):
        (label, s), = energy_probe.parse_shapes("b4_hq32_hkv8_d128_q4096_kv4096_causal")
        self.assertEqual(label, "b4_hq32_hkv8_d128_q4096_kv4096_causal")
        self.assertEqual(s, {"batch": 4, "heads_q": 32, "heads_kv": 8, "head_dim": 128, "q_len": 4096,
                             "kv_len": 4096, "causal": True})
        self.assertFalse(energy_probe.parse_shapes("b1_hq2_hkv2_d64_q8_kv16")[0][1]["causal"])

    def test_bad_shapes_are_refused_with_the_reason(self):
        for text, why in (("t64_h8192", "not an attention shape"), ("b1_hq2_hkv2_d64_q8", "not an attention shape"),
                          ("b1_hq2_hkv2_d64_q8_kv16_causal", "causal needs q_len = kv_len"),
                          ("b1_hq2_x_d64_q8_kv8", "bad shape token"), (",", "empty list")):
            with self.subTest(text=text), self.assertRaisesRegex(ValueError, why):
                energy_probe.parse_shapes(text)

    def test_calls_need_one_of_ours_and_one_of_pytorchs(self):
        self.assertEqual(energy_probe.parse_calls("wgmma_flash, torch_sdpa_cudnn"), ["wgmma_flash", "torch_sdpa_cudnn"])
        for text, why in (("wgmma_flash", "at least one of ours and one of"), ("torch_sdpa_cudnn", "at least one"),
                          ("wgmma_flash,torch_sdpa_math", "unknown torch_sdpa_math"),
                          ("wgmma_flash,wgmma_flash,torch_sdpa_flash", "named twice")):
            with self.subTest(text=text), self.assertRaisesRegex(ValueError, why):
                energy_probe.parse_calls(text)


class Summary(unittest.TestCase):
    def test_medians_over_rounds_and_the_first_calls_ratios(self):
        def row(call, rnd, joules, us, mhz):
            return {"shape": "s", "call": call, "round": rnd, "joules_per_call": joules, "gpu_us_per_call": us,
                    "mean_power_w": joules / us * 1e6, "sm_mhz": mhz, "cycles_per_call": us * mhz}
        rows = [row("ours", 0, 0.6, 1000, 1500), row("ours", 1, 0.7, 1100, 1400), row("ours", 2, 0.8, 1200, 1300),
                row("cudnn", 0, 0.5, 900, 1800), row("cudnn", 1, 0.5, 1000, 1800), row("cudnn", 2, 0.5, 950, 1700)]
        out = energy_probe.summarize(rows, ["ours", "cudnn"])["s"]
        self.assertAlmostEqual(out["medians"]["ours"]["joules_per_call"], 0.7)
        self.assertAlmostEqual(out["medians"]["cudnn"]["gpu_us_per_call"], 950)
        self.assertAlmostEqual(out["ours_over"]["cudnn"]["joules_per_call"], 0.7 / 0.5)
        self.assertAlmostEqual(out["ours_over"]["cudnn"]["gpu_us_per_call"], 1100 / 950)
        # cycles: the median of each round's own product, not the product of the medians
        self.assertAlmostEqual(out["ours_over"]["cudnn"]["cycles_per_call"], (1100 * 1400) / (900 * 1800))


class ExitCodes(ExitCodeChecks, unittest.TestCase):
    USAGE_ERRORS = ((["--rounds", "0"], "--rounds must be >= 1"), (["--seconds", "100"], "--seconds must be"),
                    (["--calls", "wgmma_flash"], "at least one of ours"))

    def run_tool(self, *args, env=None):
        return run(*args, env=env)


if __name__ == "__main__":
    unittest.main()
