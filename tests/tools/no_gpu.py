"""The exit codes every tool in tools/ shares: 2 with the reason for a usage error, 3 without a GPU."""
import os
import tempfile
from pathlib import Path


class ExitCodeChecks:
    """Mixed into a TestCase: run(*args, env=None) runs the tool; USAGE_ERRORS lists (args, reason)."""
    USAGE_ERRORS = ()

    def run_tool(self, *args, env=None):
        raise NotImplementedError

    def test_usage_errors_are_2_with_the_reason(self):
        for args, why in self.USAGE_ERRORS:
            with self.subTest(args=args):
                r = self.run_tool(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(why, r.stderr)

    def test_without_a_gpu_it_exits_3_and_says_why(self):
        # A failing nvidia-smi stands first on PATH, so the result is the same on a GPU machine.
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "nvidia-smi"
            fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
            fake.chmod(0o755)
            r = self.run_tool(env=dict(os.environ, PATH=f"{tmp}:{os.environ['PATH']}"))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("no NVIDIA GPU", r.stderr)
