"""`pip install --no-build-isolation ./python`: builds libsolbench_ops.so with CMake against the PyTorch of the
Python running pip, then installs the `solbench` package with the library inside it.

The build is the checkout's release preset (build/release, PyTorch required) and only its `solbench_ops` target;
an existing build directory is reused, so a second install rebuilds only what changed. --no-build-isolation: the
library must be built against the PyTorch installed in this Python, which pip's isolated build environment does
not see (and which has no network on an offline GPU machine). SOLBENCH_OPS_LIB=/path/to/libsolbench_ops.so
installs a library built elsewhere instead of building one.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parent
LIBRARY = "libsolbench_ops.so"


class BuildError(RuntimeError):
    pass


def cmake_commands(python: str) -> list:
    """The configure and build commands, run in the checkout's root: the release preset with PyTorch required,
    CMake's Python the one running pip (whose torch gives libtorch's CMake files), the operator library alone."""
    return [["cmake", "--preset", "release", "-DSOLBENCH_WITH_TORCH=ON", f"-DPython3_EXECUTABLE={python}"],
            ["cmake", "--build", "--preset", "release", "--target", "solbench_ops"]]


def build_library(python: str = sys.executable) -> Path:
    """The library to install: $SOLBENCH_OPS_LIB if set, else the one CMake builds in build/release/python/.
    Raises BuildError saying what is missing."""
    prebuilt = os.environ.get("SOLBENCH_OPS_LIB")
    if prebuilt:
        if not Path(prebuilt).is_file():
            raise BuildError(f"SOLBENCH_OPS_LIB={prebuilt} is not a file")
        return Path(prebuilt)
    if not (ROOT / "CMakePresets.json").is_file():
        raise BuildError(f"{ROOT} is not a solbench checkout (no CMakePresets.json): build the library there, or "
                         "set SOLBENCH_OPS_LIB to a built libsolbench_ops.so")
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            raise BuildError(f"building libsolbench_ops.so needs {tool} on PATH (CMake >= 3.25, Ninja, the CUDA "
                             "toolkit); or set SOLBENCH_OPS_LIB to a built libsolbench_ops.so")
    for command in cmake_commands(python):
        print("solbench:", " ".join(command), flush=True)
        if subprocess.run(command, cwd=ROOT).returncode != 0:
            raise BuildError(f"`{' '.join(command)}` failed (its output is above)")
    built = ROOT / "build" / "release" / "python" / LIBRARY
    if not built.is_file():
        raise BuildError(f"the build finished without {built}: was PyTorch found for {python}?")
    return built


class BuildPyWithLibrary(build_py):
    """build_py, then the operator library copied into the built package (a wheel that carries it)."""

    def run(self):
        library = build_library()
        super().run()
        target = Path(self.build_lib) / "solbench" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(library, target)


class BinaryDistribution(Distribution):
    """A wheel with a compiled library in it: tagged for this Python and platform, not as pure Python."""

    def has_ext_modules(self):
        return True


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
