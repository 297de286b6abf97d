"""layer_timeline.py's checks that need no GPU: its shape grammar, how it cuts a trace into replays, its
medians, the attention window it finds against the layer without attention, and its exit codes."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))
from no_gpu import ExitCodeChecks  # noqa: E402
import layer_timeline as lt  # noqa: E402


def run(*args, env=None):
    return subprocess.run([sys.executable, str(TOOLS / "layer_timeline.py"), *args], capture_output=True,
                          text=True, env=env, timeout=60)


def op(name, ts, dur, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur}


def trace(layers, start=0.0):
    """A Chrome trace of replays: flush, spin, then each layer's (name, gap, dur) ops; a final flush and
    spin close the last replay. CPU events and instant events are mixed in, as torch.profiler writes them."""
    ev, t = [{"ph": "X", "cat": "cpu_op", "name": "aten::zero_", "ts": 0, "dur": 1e6},
             {"ph": "i", "cat": "kernel", "name": "instant", "ts": 1}], start
    for ops in layers + [[]]:
        ev.append(op("fill", t, 10, "gpu_memset"))
        ev.append(op("void at::cuda::(anonymous namespace)::spin_kernel(long)", t + 10, 50))
        t += 60
        for name, gap, dur in ops:
            t += gap
            ev.append(op(name, t, dur))
            t += dur
        t += 5
    return {"traceEvents": ev[::-1]}  # out of order: gpu_ops sorts


class Grammar(unittest.TestCase):
    def test_decode_layer_labels(self):
        s = lt.parse_layer_shape("h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768")
        self.assertEqual(s, {"hidden": 8192, "heads_q": 64, "heads_kv": 8, "head_dim": 128, "ffn": 28672, "batch": 1,
                             "q_len": 1, "kv_len": 32768})

    def test_bad_labels_say_why(self):
        for text, why in (("b1_hq32_hkv8_d128_q1_kv4096", "not a layer shape"),
                          ("h4096_hq32_hkv8_d128_f14336_b1_q4096_kv4096", "decode layers only"),
                          ("h4096_hq32_hkv6_d128_f14336_b1_q1_kv4096", "multiple of heads_kv"),
                          ("h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096_causal", "not a layer shape"),
                          ("h4096_x_d128", "bad shape token")):
            with self.subTest(text=text), self.assertRaisesRegex(ValueError, why):
                lt.parse_layer_shape(text)

    def test_decode_layers_of_a_bench_e2e_run(self):
        names = ["e2e/solbench/bf16/decode/h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096/cold",
                 "e2e/torch_eager/bf16/decode/h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096/hot",
                 "e2e/solbench/fp16/decode/h4096_hq32_hkv8_d128_f14336_b2_q1_kv4096/cold",
                 "e2e/solbench/bf16/prefill/h4096_hq32_hkv8_d128_f14336_b1_q4096_kv4096/cold",
                 "e2e/solbench/bf16/decode/h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768/cold/manual_time_median",
                 "rmsnorm/vectorized/bf16/t1_h4096/cold"]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench_e2e.json"
            path.write_text(json.dumps({"benchmarks": [{"name": n} for n in names]}))
            self.assertEqual(lt.shapes_from_bench(str(path), "bf16"),
                             ["h4096_hq32_hkv8_d128_f14336_b1_q1_kv4096", "h8192_hq64_hkv8_d128_f28672_b1_q1_kv32768"])
            with self.assertRaisesRegex(ValueError, "no fp32 decode layer"):
                lt.shapes_from_bench(str(path), "fp32")
            with self.assertRaisesRegex(ValueError, "cannot read"):
                lt.shapes_from_bench(str(Path(tmp) / "absent.json"), "bf16")

    def test_lists(self):
        self.assertEqual(lt.parse_list("sdpa, none", lt.ATTNS, "attn"), ["sdpa", "none"])
        for text, why in (("flash", "unknown flash"), ("sdpa,sdpa", "at most once"), (",", "at least one")):
            with self.subTest(text=text), self.assertRaisesRegex(ValueError, why):
                lt.parse_list(text, lt.ATTNS, "attn")


class Replays(unittest.TestCase):
    LAYER = [("norm", 2, 3), ("gemm_q", 1, 30), ("attn", 4, 40), ("gemm_o", 1, 30)]

    def test_each_replay_is_what_lies_between_spin_and_the_next_flush(self):
        reps = lt.replays(lt.gpu_ops(trace([self.LAYER, self.LAYER])))
        self.assertEqual(len(reps), 2)
        self.assertEqual([o["name"] for o in reps[0]["ops"]], ["norm", "gemm_q", "attn", "gemm_o"])
        self.assertEqual(reps[0]["ops"][0]["ts"] - reps[0]["marker_end"], 2)

    def test_medians_gaps_span_and_idle(self):
        slower = [("norm", 2, 3), ("gemm_q", 1, 30), ("attn", 6, 44), ("gemm_o", 1, 30)]
        s = lt.summarize(lt.replays(lt.gpu_ops(trace([self.LAYER, slower, slower]))))
        self.assertEqual(s["replays"], 3)
        self.assertEqual([o["name"] for o in s["ops"]], ["norm", "gemm_q", "attn", "gemm_o"])
        self.assertEqual(s["ops"][2]["dur_us"], 44)
        self.assertEqual(s["ops"][2]["gap_us"], 6)
        self.assertEqual(s["ops"][0]["gap_us"], 2)  # from the spin kernel's end
        self.assertEqual(s["ops"][3]["start_us"], 3 + 1 + 30 + 6 + 44 + 1)
        self.assertEqual(s["span_us"], 3 + 1 + 30 + 6 + 44 + 1 + 30)
        self.assertEqual(s["busy_us"], 3 + 30 + 44 + 30)
        self.assertEqual(s["idle_us"], 8)
        self.assertEqual(s["max_gap_us"], 6)

    def test_replays_that_differ_are_refused(self):
        other = [("norm", 2, 3), ("gemm_q", 1, 30), ("cudnn", 4, 40), ("gemm_o", 1, 30)]
        with self.assertRaisesRegex(ValueError, "replay 1 differs from replay 0 at op 2"):
            lt.summarize(lt.replays(lt.gpu_ops(trace([self.LAYER, other]))))
        with self.assertRaisesRegex(ValueError, "no complete replay"):
            lt.summarize(lt.replays(lt.gpu_ops({"traceEvents": []})))

    def test_an_empty_replay_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "replay 0: no ops"):
            lt.replays(lt.gpu_ops(trace([[]])))

    def test_paths_are_recorded_from_the_repository_root(self):
        root = str(TOOLS.parent)
        self.assertEqual(lt.repo_relative(f"{root}/scripts/layer_timeline.py"), "scripts/layer_timeline.py")
        self.assertEqual(lt.repo_relative(f"--lib={root}/build/x.so"), "--lib=build/x.so")
        self.assertEqual(lt.repo_relative("/elsewhere/x.so"), "/elsewhere/x.so")
        self.assertEqual(lt.repo_relative("--modes"), "--modes")
        self.assertIsNone(lt.repo_relative(None))

    def test_short_names(self):
        self.assertEqual(lt.short_name("void ns::kern<128>(int, float)"), "ns::kern<128>")
        self.assertEqual(lt.short_name("sm90_xmma_gemm_bf16"), "sm90_xmma_gemm_bf16")
        self.assertEqual(len(lt.short_name("k" * 200)), 90)


class Window(unittest.TestCase):
    def test_common_ends(self):
        self.assertEqual(lt.common_ends(list("abXYcd"), list("abcd")), (2, 2))
        self.assertEqual(lt.common_ends(list("abcd"), list("abcd")), (4, 0))
        self.assertEqual(lt.common_ends(list("aXa"), list("aa")), (1, 1))

    def test_the_attention_window_against_the_layer_without_attention(self):
        with_attn = [("norm", 2, 3), ("gemm_q", 1, 30), ("split", 4, 40), ("combine", 2, 3), ("gemm_o", 1, 30)]
        without = [("norm", 2, 3), ("gemm_q", 1, 30), ("gemm_o", 1, 31)]
        per = {a: {"reps": r, "summary": lt.summarize(r)} for a, r in
               (("solbench", lt.replays(lt.gpu_ops(trace([with_attn] * 3)))),
                ("none", lt.replays(lt.gpu_ops(trace([without] * 3)))))}
        self.assertEqual(per["solbench"]["summary"]["max_gap_us"], 4)  # the largest of its gaps, before the split kernel
        c = lt.compare(per)["solbench"]
        self.assertEqual((c["prefix_ops"], c["suffix_ops"]), (2, 1))
        self.assertEqual([o["name"] for o in c["attention_ops"]], ["split", "combine"])
        self.assertEqual(c["window_us"], 4 + 40 + 2 + 3 + 1)
        self.assertEqual(c["prefix_span_us"], 3 + 1 + 30)
        self.assertEqual(c["suffix_busy_us"], 30)
        self.assertEqual(lt.compare({"solbench": per["solbench"]}), {})

    def test_an_overlapping_dependent_is_no_gap(self):
        # A PDL dependent starts before the grid ahead ends: the gap after both is from the later end.
        rep = {"marker_end": 0.0, "ops": [{"name": "split", "ts": 1.0, "dur": 40.0},
                                          {"name": "combine", "ts": 2.0, "dur": 41.0},
                                          {"name": "gemm", "ts": 46.0, "dur": 10.0}]}
        self.assertEqual(lt.summarize([rep])["max_gap_us"], 3.0)

    def test_no_window_without_ops_on_both_sides(self):
        reps = lt.replays(lt.gpu_ops(trace([[("a", 1, 1), ("b", 1, 1)]])))
        with self.assertRaisesRegex(ValueError, "no attention window"):
            lt.attention_window(reps, 0, 1)


class ExitCodes(ExitCodeChecks, unittest.TestCase):
    USAGE_ERRORS = ((["--replays", "1"], "--replays must be from 3"), (["--attn", "flash"], "unknown flash"),
                    (["--modes", "warm"], "unknown warm"), (["--shapes", "b1_hq2_hkv2_d64_q1_kv8"], "not a layer"),
                    (["--shapes", ","], "empty list"), (["--from-bench", "/nonexistent.json"], "cannot read"))

    def run_tool(self, *args, env=None):
        return run(*args, env=env)


if __name__ == "__main__":
    unittest.main()
