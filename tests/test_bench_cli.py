#!/usr/bin/env python3
"""The bench binary's command line, end to end, on any machine (no GPU needed).

usage: test_bench_cli.py PATH/TO/bench_rmsnorm PATH/TO/bench_attention [PATH/TO/bench_e2e]
(bench_e2e exists only in a build with libtorch; without it its tests are skipped, saying so)
Bad flags and shape strings must print what is wrong and exit 2; listing the cases touches no GPU and
shows one case per variant x dtype x shape x mode, named as the report and the regression check expect.
"""
import os
import pathlib
import re
import subprocess
import sys
import unittest

BENCH = None
ATTENTION = None
E2E = None
ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(*args):
    return subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=60)


def variants():
    text = (ROOT / "kernels/rmsnorm/variants.def").read_text()
    return re.findall(r"^SB_VARIANT\(([a-z0-9_]+),", text, re.M)


class BenchCli(unittest.TestCase):
    def assert_usage_error(self, args, fragment):
        r = run(*args)
        self.assertEqual(r.returncode, 2, f"{args}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        self.assertIn(fragment, r.stderr, f"{args}: stderr was {r.stderr!r}")

    def test_bad_shapes_exit_2_with_the_reason(self):
        self.assert_usage_error(["--shapes=4096"], "'4096' is neither a shape")
        self.assert_usage_error(["--shapes=4096x"], "hidden in '4096x'")
        self.assert_usage_error(["--shapes=0x8"], "out of range")
        self.assert_usage_error(["--shapes="], "--shapes= needs a value")
        self.assert_usage_error(["--shapes", "1x8"], "--shapes needs a value")

    def test_unknown_flag_exits_2(self):
        r = run("--no-such-flag")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unrecognized command-line flag: --no-such-flag", r.stderr)
        self.assert_usage_error(["--profile=yes"], "--profile takes no value")
        self.assert_usage_error(["--keep-inputs=lots"], "--keep-inputs takes GiB of device memory")
        self.assert_usage_error(["--keep-inputs"], "--keep-inputs needs a value")

    def test_bad_values_of_google_benchmarks_flags_name_the_flag_and_the_value(self):
        for arg, fragment in (("--benchmark_repetitions=abc", "--benchmark_repetitions takes a whole number"),
                              ("--benchmark_min_time=fast", "--benchmark_min_time takes seconds"),
                              ("--benchmark_enable_random_interleaving=maybe",
                               "--benchmark_enable_random_interleaving takes true or false"),
                              ("--benchmark_display_aggregates_only=2", "--benchmark_display_aggregates_only takes"),
                              ("--benchmark_report_aggregates_only=yess", "--benchmark_report_aggregates_only takes"),
                              ("--benchmark_out_format=xml", "--benchmark_out_format takes console, json or csv")):
            value = arg.split("=", 1)[1]
            self.assert_usage_error(["--benchmark_list_tests", arg], f"{fragment}")
            self.assert_usage_error([arg], f"got '{value}'")
            self.assertNotIn("unrecognized", run(arg).stderr)
        r = run("--benchmark_list_tests", "--benchmark_repetitions=2", "--benchmark_min_time=0.5s",
                "--benchmark_filter=^floor/")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_help_documents_the_shape_grammar(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--shapes=SPEC", r.stdout)
        self.assertIn("ROWSxHIDDEN", r.stdout)

    def test_listing_names_every_variant_dtype_and_mode(self):
        r = run("--benchmark_list_tests=true", "--shapes=1x4096,3x7")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = set(r.stdout.split())
        for v in variants():
            for dtype in ("fp32", "fp16", "bf16"):
                for shape in ("t1_h4096", "t3_h7"):
                    for mode in ("cold", "hot"):
                        self.assertIn(f"rmsnorm/{v}/{dtype}/{shape}/{mode}/manual_time", names)
        self.assertIn("floor/empty_kernel/hot/manual_time", names)

    def test_dtypes_flag_selects_dtypes_and_rejects_unknown_ones(self):
        r = run("--benchmark_list_tests=true", "--shapes=3x7", "--dtypes=bf16")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("rmsnorm/vectorized/bf16/t3_h7/cold/manual_time", r.stdout)
        self.assertNotIn("/fp32/", r.stdout)
        self.assertNotIn("/fp16/", r.stdout)
        self.assert_usage_error(["--dtypes=bf8"], "unknown dtype 'bf8'")

    def test_default_set_includes_the_anchor_shapes(self):
        r = run("--benchmark_list_tests=true", "--benchmark_filter=rmsnorm/vectorized/bf16/.*/cold")
        self.assertEqual(r.returncode, 0, r.stderr)
        for shape in ("t1_h4096", "t64_h8192", "t2048_h2048", "t4096_h4096", "t16384_h4096", "t32768_h8192",
                      "t65536_h1024"):
            self.assertIn(f"rmsnorm/vectorized/bf16/{shape}/cold/manual_time", r.stdout)


class AttentionCli(unittest.TestCase):
    def run_attention(self, *args):
        return subprocess.run([ATTENTION, *args], capture_output=True, text=True, timeout=60)

    def test_bad_shapes_exit_2_with_the_reason(self):
        for spec, fragment in (("b1_hq32_hkv5_d128_q1_kv4096", "not a multiple of heads_kv"),
                               ("b1_hq32", "missing token"), ("llama", "neither a shape")):
            r = self.run_attention(f"--shapes={spec}")
            self.assertEqual(r.returncode, 2, f"{spec}: {r.stdout}{r.stderr}")
            self.assertIn(fragment, r.stderr)


    def test_the_split_sweep_runs_at_the_anchors_or_at_every_decode_shape(self):
        mha = "b64_hq32_hkv32_d128_q1_kv4096"
        def sweep_rows(*flags):
            r = self.run_attention("--benchmark_list_tests=true", f"--shapes=anchors,{mha}", "--dtypes=bf16,fp16",
                                   "--benchmark_filter=decode_splitk_s", *flags)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout.split()
        default = sweep_rows()
        self.assertIn("attention/decode_splitk_s2/bf16/decode/b1_hq32_hkv8_d128_q1_kv4096/cold/manual_time", default)
        self.assertFalse([n for n in default if mha in n or "/fp16/" in n or "/prefill/" in n], default)
        everywhere = sweep_rows("--split-sweep=all")
        self.assertIn(f"attention/decode_splitk_s2/bf16/decode/{mha}/cold/manual_time", everywhere)
        self.assertIn(f"attention/decode_splitk_s128/fp16/decode/{mha}/cold/manual_time", everywhere)
        self.assertFalse([n for n in everywhere if "/prefill/" in n or n.endswith("/hot/manual_time")], everywhere)
        self.assertEqual(sweep_rows("--split-sweep=anchors"), default)
        r = self.run_attention("--benchmark_list_tests=true", "--split-sweep=most")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--split-sweep takes anchors or all, got 'most'", r.stderr)
        r = run("--benchmark_list_tests=true", "--split-sweep=all")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--split-sweep is bench_attention's", r.stderr)

    def test_paged_shapes_list_the_paged_variants_and_the_baselines(self):
        shape = "b4_hq32_hkv8_d128_q1_kv4096_p16_zipf"
        r = self.run_attention("--benchmark_list_tests=true", f"--shapes=smoke,{shape}", "--dtypes=bf16")
        self.assertEqual(r.returncode, 0, r.stderr)
        impls = ("paged_splitk", "ref_kv_read", "decode_splitk_padded")
        for impl in impls:
            for mode in ("cold", "hot"):
                self.assertIn(f"attention/{impl}/bf16/decode/{shape}/{mode}/manual_time", r.stdout)
        self.assertFalse([n for n in r.stdout.split()  # no other row at a paged shape
                          if "_p16_zipf" in n and n.split("/")[1] not in impls])
        r = self.run_attention("--benchmark_list_tests=true", "--shapes=paged", "--dtypes=bf16")
        self.assertEqual(len([n for n in r.stdout.split() if n.startswith("attention/paged_splitk/")]), 39 * 2)
        for spec, fragment in ((shape.replace("zipf", "normal"), "none of eq, unif, zipf, onelong"),
                               (shape.replace("q1", "q16"), "is not a decode shape")):
            r = self.run_attention(f"--shapes={spec}")
            self.assertEqual(r.returncode, 2, f"{spec}: {r.stdout}{r.stderr}")
            self.assertIn(fragment, r.stderr)

    def test_listing_names_workload_and_every_anchor(self):
        r = self.run_attention("--benchmark_list_tests=true", "--shapes=anchors",
                               "--benchmark_filter=attention/manual/bf16/.*/cold")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("prefill/b4_hq32_hkv32_d128_q4096_kv4096_causal", "prefill/b1_hq32_hkv32_d128_q16384_kv16384_causal",
                     "prefill/b16_hq16_hkv16_d64_q1024_kv1024_causal", "prefill/b4_hq32_hkv32_d128_q4096_kv4096",
                     "decode/b1_hq32_hkv8_d128_q1_kv4096", "decode/b1_hq32_hkv8_d128_q1_kv131072",
                     "decode/b64_hq32_hkv8_d128_q1_kv16384"):
            self.assertIn(f"attention/manual/bf16/{name}/cold/manual_time", r.stdout)


class E2eCli(unittest.TestCase):
    def setUp(self):
        if E2E is None:
            self.skipTest("bench_e2e is not built (it needs libtorch)")

    def run_e2e(self, *args):
        return subprocess.run([E2E, *args], capture_output=True, text=True, timeout=60)

    def test_bad_shapes_and_flags_exit_2_with_the_reason(self):
        for args, fragment in ((["--shapes=h4096_hq32_hkv8_d128_f14336_b1_q4_kv4096"], "a layer shape is decode"),
                               (["--shapes=b1_hq32_hkv8_d128_q1_kv4096"], "missing token h<hidden>"),
                               (["--shapes=llama"], "neither a shape"),
                               (["--split-sweep=all"], "--split-sweep is bench_attention's")):
            r = self.run_e2e("--benchmark_list_tests=true", *args)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stdout}{r.stderr}")
            self.assertIn(fragment, r.stderr)

    def test_listing_names_every_layer_implementation(self):
        r = self.run_e2e("--benchmark_list_tests=true", "--shapes=smoke", "--dtypes=bf16")
        self.assertEqual(r.returncode, 0, r.stderr)
        for impl in ("solbench", "solbench_norms", "solbench_attention", "torch_eager", "torch_sdpa_flash",
                     "ref_rest_of_layer"):
            for mode in ("cold", "hot"):
                self.assertIn(f"e2e/{impl}/bf16/decode/h256_hq4_hkv2_d64_f512_b2_q1_kv33/{mode}/manual_time", r.stdout)
                self.assertIn(f"e2e/{impl}/bf16/prefill/h256_hq4_hkv2_d64_f512_b1_q17_kv17/{mode}/manual_time",
                              r.stdout)

    def test_training_steps_are_listed_only_where_named_and_in_bf16(self):
        def listed(*args):
            r = self.run_e2e("--benchmark_list_tests=true", *args)
            self.assertEqual(r.returncode, 0, r.stderr)
            return [n for n in r.stdout.split() if "/train_step/" in n]
        steps = [f"e2e/train_step/{impl}/bf16/{config}/cold/manual_time"
                 for config in ("small", "1b") for impl in ("torch_eager", "solbench")]
        self.assertEqual(listed("--shapes=train"), steps)
        self.assertEqual(listed("--shapes=train_1b", "--dtypes=bf16"), steps[2:])
        self.assertEqual(listed("--shapes=smoke"), steps[:2])
        self.assertEqual(listed("--shapes=train", "--dtypes=fp16"), [])
        self.assertEqual(listed(), [])  # the default set has none
        r = self.run_e2e("--benchmark_list_tests=true", "--shapes=training")
        self.assertEqual(r.returncode, 2)
        self.assertIn("train, train_small, train_1b", r.stderr)


if __name__ == "__main__":
    BENCH = sys.argv.pop(1)
    ATTENTION = sys.argv.pop(1)
    E2E = sys.argv.pop(1) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else None
    unittest.main(verbosity=2)
