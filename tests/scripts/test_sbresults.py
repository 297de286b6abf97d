"""The results loader and the kernels fingerprint."""
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(SCRIPTS))
import gbfake  # noqa: E402
import sbresults  # noqa: E402

PREFILL = "attention/{impl}/bf16/prefill/b1_hq32_hkv8_d128_q1024_kv1024_causal/cold"


class Tmp(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sbtest_"))
        self.addCleanup(shutil.rmtree, self.tmp)


class LoadFixtures(unittest.TestCase):
    """The committed fixtures: GB 1.7.1 RMSNorm run, GB 1.8.3 attention run."""

    @classmethod
    def setUpClass(cls):
        cls.results = sbresults.load([DATA / "rmsnorm_gb171.json", DATA / "attention_gb183.json"])
        cls.cases = cls.results.by_name()

    def test_one_case_per_benchmark_name_in_file_order(self):
        names = [c.name for c in self.results.cases]
        self.assertEqual(len(names), 10 + 5)
        self.assertEqual(names[0], "rmsnorm/naive/bf16/t1_h4096/cold")
        self.assertEqual(names[-1], "attention/torch_sdpa_flash/bf16/decode/"
                                    "b8_hq32_hkv8_d128_q1_kv4096/cold")
        self.assertEqual(self.results.files, [str(DATA / "rmsnorm_gb171.json"),
                                          str(DATA / "attention_gb183.json")])

    def test_median_of_repetitions_and_median_counters(self):
        rows = json.loads((DATA / "rmsnorm_gb171.json").read_text())["benchmarks"]
        name = "rmsnorm/vectorized/bf16/t4096_h4096/cold/manual_time"
        times = [r["real_time"] for r in rows if r["name"] == name]
        median_row = next(r for r in rows if r["name"] == name + "_median")
        case = self.cases["rmsnorm/vectorized/bf16/t4096_h4096/cold"]
        self.assertEqual(case.times_us, times)
        self.assertAlmostEqual(case.median_us, statistics.median(times))
        self.assertAlmostEqual(case.median_us, median_row["real_time"])
        self.assertEqual(case.counters["GB/s"], median_row["GB/s"])
        self.assertEqual(case.repetitions, 5)
        self.assertEqual((case.op, case.impl, case.dtype, case.workload, case.mode),
                         ("rmsnorm", "vectorized", "bf16", "", "cold"))
        self.assertEqual(case.shape, {"rows": 4096, "hidden": 4096})
        self.assertTrue(case.ok)

    def test_error_case(self):
        case = self.cases["rmsnorm/block_reduce/bf16/t4096_h4096/cold"]
        self.assertTrue(case.failed)
        self.assertFalse(case.ok)
        self.assertIn("verification failed", case.error)
        self.assertIsNone(case.median_us)

    def test_skip_reason_is_not_a_failure(self):
        case = self.cases[PREFILL.format(impl="manual")]
        self.assertTrue(case.skipped)
        self.assertFalse(case.failed)

    def test_attention_and_floor_names(self):
        case = self.cases[PREFILL.format(impl="tiled_flash")]
        self.assertEqual(case.workload, "prefill")
        self.assertEqual(case.shape, {"batch": 1, "heads_q": 32, "heads_kv": 8, "head_dim": 128,
                                      "q_len": 1024, "kv_len": 1024, "causal": True})
        decode = self.cases["attention/decode_splitk/bf16/decode/b8_hq32_hkv8_d128_q1_kv4096/cold"]
        self.assertIs(decode.shape["causal"], False)
        floor = self.cases["floor/empty_kernel/hot"]
        self.assertEqual((floor.op, floor.impl, floor.dtype, floor.shape, floor.mode),
                         ("floor", "empty_kernel", "", {}, "hot"))

    def test_paged_decode_shape(self):
        f = sbresults.parse_name("attention/paged_splitk/bf16/decode/b64_hq32_hkv8_d128_q1_kv16384_p16_zipf/cold")
        self.assertEqual(f["shape"], {"batch": 64, "heads_q": 32, "heads_kv": 8, "head_dim": 128, "q_len": 1,
                                      "kv_len": 16384, "page_size": 16, "lengths": "zipf", "causal": False})
        f = sbresults.parse_name("attention/paged_splitk/bf16/decode/b64_hq32_hkv8_d128_q1_kv16384_p16_eq_fp8/cold")
        self.assertEqual((f["shape"]["lengths"], f["shape"]["kv_cache"]), ("eq", "fp8"))
        with self.assertRaisesRegex(sbresults.ResultsError, "bad shape token 'normal'"):
            sbresults.parse_name("attention/paged_splitk/bf16/decode/b64_hq32_hkv8_d128_q1_kv16384_p16_normal/cold")

    def test_context_is_the_first_files(self):
        self.assertEqual(self.results.context["gpu_name"], "NVIDIA H200")
        self.assertNotIn("json_schema_version", self.results.context)
        self.assertEqual(self.results.ceiling("copy_gbps"), 3912.4)
        self.assertIsNone(self.results.ceiling("no_such_key"))


class Formats(Tmp):
    def write(self, doc, name="run.json"):
        return gbfake.write(self.tmp / name, doc)

    def test_google_benchmark_suffixes_are_stripped(self):
        self.assertEqual(sbresults.case_name("rmsnorm/naive/bf16/t1_h64/cold/min_time:0.500/"
                                             "repeats:5/manual_time"),
                         "rmsnorm/naive/bf16/t1_h64/cold")

    def test_a_case_knows_whether_the_harness_timed_it(self):
        doc = gbfake.run([gbfake.rmsnorm(i, "bf16", 64, 1024, "cold") for i in ("naive", "vectorized")], seed=1)
        for row in doc["benchmarks"]:  # vectorized's rows as the library's own clock names them
            if "/vectorized/" in row["name"]:
                row["name"] = row["name"].replace("/manual_time", "")
                row["run_name"] = row["run_name"].replace("/manual_time", "")
        cases = sbresults.load(self.write(doc)).by_name()
        self.assertTrue(cases["rmsnorm/naive/bf16/t64_h1024/cold"].manual_time)
        self.assertFalse(cases["rmsnorm/vectorized/bf16/t64_h1024/cold"].manual_time)
        self.assertTrue(cases["rmsnorm/vectorized/bf16/t64_h1024/cold"].ok)

    def test_time_units_and_aggregates_only(self):
        doc = gbfake.run([gbfake.rmsnorm("naive", "bf16", 64, 1024, "cold")], seed=1)
        median = next(r for r in doc["benchmarks"] if r.get("aggregate_name") == "median")
        doc["benchmarks"] = [r for r in doc["benchmarks"] if r["run_type"] == "aggregate"]
        for r in doc["benchmarks"]:
            r["real_time"] *= 1000
            r["time_unit"] = "ns"
        case = sbresults.load(self.write(doc)).cases[0]
        self.assertEqual(case.times_us, [])
        self.assertAlmostEqual(case.median_us, median["real_time"] / 1000)

    def test_single_repetition_has_no_aggregates(self):
        doc = gbfake.run([gbfake.rmsnorm("naive", "bf16", 64, 1024, "cold")], seed=1, reps=1)
        case = sbresults.load(self.write(doc)).cases[0]
        self.assertEqual(case.median_us, doc["benchmarks"][0]["real_time"])
        self.assertEqual(case.counters["err"], doc["benchmarks"][0]["err"])

    def test_gb18_skipped_with_message(self):
        doc = gbfake.run([gbfake.rmsnorm("naive", "bf16", 64, 1024, "cold")], seed=1, reps=1)
        doc["benchmarks"][0].update(skipped=True, skip_message="needs sm_90a")
        case = sbresults.load(self.write(doc)).cases[0]
        self.assertTrue(case.skipped)
        self.assertEqual(case.error, "needs sm_90a")

    def test_directory_merges_files(self):
        shutil.copy(DATA / "rmsnorm_gb171.json", self.tmp)
        shutil.copy(DATA / "attention_gb183.json", self.tmp)
        self.assertEqual(len(sbresults.load(self.tmp).cases), 15)

    def assertError(self, path, *fragments):
        with self.assertRaises(sbresults.ResultsError) as cm:
            sbresults.load(path)
        for f in (str(path),) + fragments:
            self.assertIn(f, str(cm.exception))

    def test_truncated_file(self):
        text = (DATA / "rmsnorm_gb171.json").read_text()
        path = self.tmp / "cut.json"
        path.write_text(text[: len(text) // 2])
        self.assertError(path, "not valid JSON", "truncated")

    def test_missing_benchmarks(self):
        path = self.tmp / "nobench.json"
        path.write_text(json.dumps({"context": {}}))
        self.assertError(path, "'benchmarks'")

    def test_missing_key_in_a_row(self):
        doc = gbfake.run([gbfake.rmsnorm("naive", "bf16", 64, 1024, "cold")], seed=1)
        del doc["benchmarks"][2]["time_unit"]
        self.assertError(self.write(doc), "benchmarks[2]", "'time_unit'")

    def test_bad_name(self):
        doc = gbfake.run([{"name": "rmsnorm/naive/bf16/t64_hidden/cold", "us": 3.0,
                           "bytes": 1, "flops": 1}], seed=1)
        self.assertError(self.write(doc), "bad shape token 'hidden'")

    def test_different_gpus_do_not_merge(self):
        a = self.write(gbfake.run([gbfake.floor("cold")]), "a.json")
        a100 = gbfake.context(gpu_name="NVIDIA A100")
        b = self.write(gbfake.run([gbfake.floor("hot")], ctx=a100), "b.json")
        with self.assertRaisesRegex(sbresults.ResultsError, "b.json: gpu_name 'NVIDIA A100'"):
            sbresults.load([a, b])

    def test_parts_of_a_run_from_another_gpu_tree_or_protocol_do_not_merge(self):
        one = {"gpu_uuid": "GPU-1", "timing_protocol": "v26: ..."}
        a = self.write(gbfake.run([gbfake.floor("cold")], ctx=gbfake.context(**one)), "a.json")
        for key, value in (("gpu_uuid", "GPU-2"), ("git_commit", "9999999"),
                           ("kernels_fingerprint", "fedcba9876543210"), ("timing_protocol", "v10: ...")):
            with self.subTest(key=key):
                ctx = gbfake.context(**{**one, key: value})
                b = self.write(gbfake.run([gbfake.floor("hot")], ctx=ctx), "b.json")
                with self.assertRaisesRegex(sbresults.ResultsError, f"b.json: {key} '{value}' differs"):
                    sbresults.load([a, b])
        same = self.write(gbfake.run([gbfake.floor("hot")], ctx=gbfake.context(**one)), "c.json")
        self.assertEqual(len(sbresults.load([a, same]).cases), 2)

    def test_duplicate_case_across_files(self):
        case = gbfake.rmsnorm("vectorized", "bf16", 4096, 4096, "cold")
        a = self.write(gbfake.run([case]), "a.json")
        b = self.write(gbfake.run([case]), "b.json")
        with self.assertRaisesRegex(sbresults.ResultsError, "t4096_h4096/cold also appears"):
            sbresults.load([a, b])

    def test_each_binary_measures_the_floor_and_the_run_keeps_the_first(self):
        a = self.write(gbfake.run([gbfake.floor("cold")]), "a.json")
        b = self.write(gbfake.run([gbfake.floor("cold"), gbfake.rmsnorm("vectorized", "bf16", 8, 8, "cold")]), "b.json")
        run = sbresults.load([a, b])
        self.assertEqual([c.name for c in run.cases], ["floor/empty_kernel/cold", "rmsnorm/vectorized/bf16/t8_h8/cold"])


class Fingerprint(Tmp):
    def setUp(self):
        super().setUp()
        (self.tmp / "kernels" / "rmsnorm").mkdir(parents=True)
        (self.tmp / "kernels" / "rmsnorm" / "naive.cu").write_text("__global__ void k() {}\n")
        (self.tmp / "kernels" / "rmsnorm" / "variants.def").write_text("SB_VARIANT(naive, \"\")\n")
        (self.tmp / "kernels" / "common.h").write_text("#pragma once\n")
        (self.tmp / "README.md").write_text("not a kernel\n")

    def cli(self):
        out = subprocess.run([sys.executable, str(SCRIPTS / "sbresults.py"), "fingerprint",
                              str(self.tmp)], capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def test_cli_is_deterministic_and_matches_the_function(self):
        first = self.cli()
        self.assertRegex(first, r"^[0-9a-f]{16}$")
        self.assertEqual(first, self.cli())
        self.assertEqual(first, sbresults.kernels_fingerprint(self.tmp))

    def test_changes_with_kernel_sources_only(self):
        before = sbresults.kernels_fingerprint(self.tmp)
        (self.tmp / "README.md").write_text("edited\n")
        self.assertEqual(before, sbresults.kernels_fingerprint(self.tmp))
        (self.tmp / "kernels" / "rmsnorm" / "naive.cu").write_text("__global__ void k(int) {}\n")
        edited = sbresults.kernels_fingerprint(self.tmp)
        self.assertNotEqual(before, edited)
        src = self.tmp / "kernels" / "rmsnorm" / "naive.cu"
        src.rename(src.with_name("renamed.cu"))
        self.assertNotEqual(edited, sbresults.kernels_fingerprint(self.tmp))

    def test_per_op_fingerprint_ignores_other_ops(self):
        rms = sbresults.kernels_fingerprint(self.tmp, "rmsnorm")
        whole = sbresults.kernels_fingerprint(self.tmp)
        (self.tmp / "kernels" / "attention").mkdir()
        (self.tmp / "kernels" / "attention" / "manual.cu").write_text("// new op\n")
        self.assertEqual(rms, sbresults.kernels_fingerprint(self.tmp, "rmsnorm"))
        self.assertNotEqual(whole, sbresults.kernels_fingerprint(self.tmp))
        (self.tmp / "kernels" / "common").mkdir()
        (self.tmp / "kernels" / "common" / "reduce.cuh").write_text("// shared by every op\n")
        self.assertNotEqual(rms, sbresults.kernels_fingerprint(self.tmp, "rmsnorm"))

    @unittest.skipUnless(all(shutil.which(t) for t in ("find", "sort", "xargs", "sha256sum")),
                         "coreutils not available")
    def test_documented_shell_recipe_gives_the_same_value(self):
        shell = ("find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum "
                 "| cut -c1-16")
        out = subprocess.run(shell, shell=True, cwd=self.tmp / "kernels", capture_output=True,
                             text=True, check=True)
        self.assertEqual(out.stdout.strip(), sbresults.kernels_fingerprint(self.tmp))

    def test_no_kernels_directory_is_exit_2(self):
        out = subprocess.run([sys.executable, str(SCRIPTS / "sbresults.py"), "fingerprint",
                              str(self.tmp / "nowhere")], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("no kernels/ directory", out.stderr)


if __name__ == "__main__":
    unittest.main()


class Merge(unittest.TestCase):
    def test_merged_run_loads_as_the_union(self):
        import tempfile
        data = Path(__file__).resolve().parent / "data"
        a, b = data / "rmsnorm_gb171.json", data / "attention_gb183.json"
        if sbresults.load(a).context.get("gpu_name") != sbresults.load(b).context.get("gpu_name"):
            self.skipTest("fixtures name different GPUs")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run.json"
            sbresults.merge_files([a, b], out)
            merged = sbresults.load(out)
        self.assertEqual(len(merged.cases), len(sbresults.load(a).cases) + len(sbresults.load(b).cases))

    def test_the_merge_orders_the_files_as_measured_and_keeps_the_first_floor_only(self):
        import json
        import tempfile
        import gbfake
        with tempfile.TemporaryDirectory() as tmp:
            a, b, out = Path(tmp) / "a.json", Path(tmp) / "b.json", Path(tmp) / "run.json"
            a.write_text(json.dumps(gbfake.run([gbfake.floor("hot")], seed=1,
                                               ctx=gbfake.context(date="2026-11-30T16:09:00+00:00"))))
            b.write_text(json.dumps(gbfake.run([gbfake.floor("hot"), gbfake.rmsnorm("vectorized", "bf16", 8, 8, "hot")],
                                               seed=2, scale={"floor/empty_kernel/hot": 1.5},
                                               ctx=gbfake.context(date="2026-11-30T16:16:00+00:00"))))
            sbresults.merge_files([b, a], out)  # given out of order: a was measured first (its date)
            merged = {c.name: c for c in sbresults.load(out).cases}
            first = {c.name: c for c in sbresults.load(a).cases}
        self.assertEqual(merged["floor/empty_kernel/hot"].times_us, first["floor/empty_kernel/hot"].times_us)
        self.assertIn("rmsnorm/vectorized/bf16/t8_h8/hot", merged)

    def test_a_context_key_of_a_later_file_is_kept(self):
        import json
        import tempfile
        data = Path(__file__).resolve().parent / "data"
        a, b = (json.loads((data / n).read_text()) for n in ("rmsnorm_gb171.json", "attention_gb183.json"))
        b["context"]["gpu_name"] = a["context"]["gpu_name"]
        b["context"]["kv_placement"] = "one allocation, gap 4096"
        a["context"].pop("kv_placement", None)
        a["context"]["command"] = "BENCHES=bench_rmsnorm scripts/run_suite.sh"  # a run done in two parts
        b["context"]["command"] = "BENCHES=bench_attention scripts/run_suite.sh"
        a["context"]["copy_gbps"], b["context"]["copy_gbps"] = "4254.7", "4249.8"  # each binary's start-up
        with tempfile.TemporaryDirectory() as tmp:
            pa, pb, out = Path(tmp) / "a.json", Path(tmp) / "b.json", Path(tmp) / "run.json"
            pa.write_text(json.dumps(a))
            pb.write_text(json.dumps(b))
            sbresults.merge_files([pa, pb], out)
            merged = sbresults.load(out)
        self.assertEqual(merged.context["kv_placement"], "one allocation, gap 4096")
        self.assertEqual(merged.context["executable"], a["context"]["executable"])  # the first file's own keys win
        self.assertEqual(merged.context["command"], "BENCHES=bench_rmsnorm scripts/run_suite.sh")
        self.assertEqual(merged.context["command_1"], "BENCHES=bench_attention scripts/run_suite.sh")
        self.assertEqual((merged.context["copy_gbps"], merged.context["copy_gbps_1"]), ("4254.7", "4249.8"))
