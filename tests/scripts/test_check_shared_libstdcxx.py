"""tests/check_shared_libstdcxx.py on two small libraries built here: one linking libstdc++.so (passes) and one
carrying a static copy (fails). Skips without g++ or binutils."""
import importlib.util
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ("#include <sstream>\n#include <string>\n"
          "std::string f(long x) { std::ostringstream s; s << x; return s.str(); }\n")


def load_check():
    path = ROOT / "tests" / "check_shared_libstdcxx.py"
    spec = importlib.util.spec_from_file_location("check_shared_libstdcxx", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@unittest.skipIf(any(shutil.which(t) is None for t in ("g++", "readelf", "nm")), "needs g++, readelf and nm")
class CheckSharedLibstdcxx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.check = load_check()
        cls.tmp = tempfile.TemporaryDirectory()
        src = Path(cls.tmp.name) / "f.cpp"
        src.write_text(SOURCE)
        cls.shared = Path(cls.tmp.name) / "libshared.so"
        cls.static = Path(cls.tmp.name) / "libstatic.so"
        for out, flags in ((cls.shared, []), (cls.static, ["-static-libstdc++"])):
            subprocess.run(["g++", "-shared", "-fPIC", "-O1", *flags, "-o", str(out), str(src)], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_library_linking_libstdcxx_passes(self):
        self.assertEqual(self.check.problems(str(self.shared)), [])
        self.assertEqual(self.check.main(["check", str(self.shared)]), 0)

    def test_a_static_copy_fails_naming_what_it_found(self):
        found = self.check.problems(str(self.static))
        self.assertTrue(any("static copy of libstdc++" in p for p in found), found)
        self.assertEqual(self.check.main(["check", str(self.shared), str(self.static)]), 1)

    def test_usage_and_unreadable_files(self):
        self.assertEqual(self.check.main(["check"]), 2)
        self.assertEqual(self.check.main(["check", "/no/such/lib.so"]), 1)


if __name__ == "__main__":
    unittest.main()
