"""The GPU entry scripts on a machine without a GPU: each says so and exits 3, never a silent pass.
A fake nvidia-smi that fails stands first on PATH, so the result is the same on a GPU machine."""
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]


class ExperimentPatches(unittest.TestCase):
    def test_every_candidate_patch_still_applies(self):
        patches = sorted((SCRIPTS.parent / "experiments").glob("*.patch"))
        if not patches:
            self.skipTest("no candidate patches in experiments/ now")
        for p in patches:
            with self.subTest(patch=p.name):
                r = subprocess.run(["patch", "--dry-run", "-p1", "-d", str(SCRIPTS.parent), "-i", str(p)],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, f"{p.name} no longer applies:\n{r.stdout}{r.stderr}")


class WithoutGpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        fake = Path(self.tmp.name) / "nvidia-smi"
        fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
        fake.chmod(0o755)
        self.env = dict(os.environ, PATH=f"{self.tmp.name}:{os.environ['PATH']}")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args, env=None):
        return subprocess.run(["bash", *map(str, args)], capture_output=True, text=True, env=env or self.env,
                              timeout=60)

    def test_each_entry_script_exits_3_and_says_why(self):
        out = Path(self.tmp.name) / "out"
        for script, args in (("run_suite.sh", []), ("gpu_run.sh", [out]), ("gpu_regress.sh", []),
                             ("gpu_experiments.sh", [out, "SB_DECODE_EXPERIMENT=1"])):
            with self.subTest(script=script):
                r = self.run_script(SCRIPTS / script, *args)
                self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
                self.assertIn("no NVIDIA GPU", r.stderr)

    def test_experiments_with_a_bad_setting_is_a_usage_error(self):
        for var, value, message in (("BENCH", "bench_gemm", "BENCH must be bench_attention or bench_rmsnorm"),
                                    ("PASSES", "two", "PASSES must be a positive integer, got 'two'"),
                                    ("NCU_CACHE", "flush", "NCU_CACHE must be all or none, got 'flush'"),
                                    ("NCU_REPLAY", "range", "NCU_REPLAY must be kernel or application, got 'range'")):
            with self.subTest(var=var):
                r = self.run_script(SCRIPTS / "gpu_experiments.sh", Path(self.tmp.name) / "out", "SB_X=1",
                                    env=dict(self.env, **{var: value}))
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(message, r.stderr)

    def test_experiments_without_a_define_is_a_usage_error(self):
        r = self.run_script(SCRIPTS / "gpu_experiments.sh", Path(self.tmp.name) / "out")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("name at least one DEFINE", r.stderr)


if __name__ == "__main__":
    unittest.main()
