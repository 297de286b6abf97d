"""python/setup.py: `pip install --no-build-isolation ./python` builds the operator library with CMake and puts it
in the package. Run with stand-ins for cmake and ninja (no CUDA, PyTorch or GPU needed)."""
import importlib.util
import os
import shutil
import stat
import tempfile
import unittest
import unittest.mock
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_setup():
    spec = importlib.util.spec_from_file_location("solbench_setup", ROOT / "python" / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # setup() runs only as __main__
    return module


FAKE_CMAKE = """#!/bin/sh
echo "$PWD|$*" >> "{log}"
[ -n "{fail}" ] && exit 1
case "$*" in *--build*) mkdir -p build/release/python && : > build/release/python/libsolbench_ops.so ;; esac
exit 0
"""


class BuildLibrary(unittest.TestCase):
    def setUp(self):
        self.setup_py = load_setup()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.checkout = Path(self.tmp.name) / "checkout"
        self.checkout.mkdir()
        (self.checkout / "CMakePresets.json").write_text("{}")
        self.bin = Path(self.tmp.name) / "bin"
        self.bin.mkdir()
        self.log = Path(self.tmp.name) / "cmake.log"
        self.setup_py.ROOT = self.checkout
        self.env = {k: v for k, v in os.environ.items() if k != "SOLBENCH_OPS_LIB"}
        self.env["PATH"] = str(self.bin)  # the stand-ins alone, and the mkdir the fake cmake runs
        (self.bin / "mkdir").symlink_to(shutil.which("mkdir"))

    def tool(self, name: str, text: str = "#!/bin/sh\nexit 0\n"):
        path = self.bin / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)

    def build(self):
        with unittest.mock.patch.dict(os.environ, self.env, clear=True):
            return self.setup_py.build_library("/opt/py/bin/python3")

    def test_configures_the_release_preset_with_this_python_then_builds_the_op_library(self):
        self.tool("cmake", FAKE_CMAKE.format(log=self.log, fail=""))
        self.tool("ninja")
        built = self.build()
        self.assertEqual(built, self.checkout / "build" / "release" / "python" / "libsolbench_ops.so")
        lines = self.log.read_text().splitlines()
        self.assertEqual(lines, [
            f"{self.checkout}|--preset release -DSOLBENCH_WITH_TORCH=ON -DPython3_EXECUTABLE=/opt/py/bin/python3",
            f"{self.checkout}|--build --preset release --target solbench_ops"])

    def test_a_failed_build_names_the_command(self):
        self.tool("cmake", FAKE_CMAKE.format(log=self.log, fail="yes"))
        self.tool("ninja")
        with self.assertRaisesRegex(self.setup_py.BuildError, "cmake --preset release .* failed"):
            self.build()

    def test_a_build_without_the_library_says_pytorch_was_not_found(self):
        self.tool("cmake")  # succeeds, builds nothing
        self.tool("ninja")
        with self.assertRaisesRegex(self.setup_py.BuildError, "was PyTorch found for /opt/py/bin/python3"):
            self.build()

    def test_missing_tools_are_named(self):
        self.tool("cmake")
        with self.assertRaisesRegex(self.setup_py.BuildError, "needs ninja on PATH"):
            self.build()

    def test_outside_a_checkout_it_says_so(self):
        (self.checkout / "CMakePresets.json").unlink()
        with self.assertRaisesRegex(self.setup_py.BuildError, "not a solbench checkout"):
            self.build()

    def test_a_prebuilt_library_is_taken_as_is_and_a_wrong_path_refused(self):
        lib = Path(self.tmp.name) / "libsolbench_ops.so"
        lib.write_bytes(b"")
        self.env["SOLBENCH_OPS_LIB"] = str(lib)
        self.assertEqual(self.build(), lib)  # no cmake on PATH: nothing is built
        self.env["SOLBENCH_OPS_LIB"] = str(lib) + ".missing"
        with self.assertRaisesRegex(self.setup_py.BuildError, "is not a file"):
            self.build()


if __name__ == "__main__":
    unittest.main()
