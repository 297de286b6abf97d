#!/usr/bin/env python3
"""Checks that shared libraries which Python loads beside PyTorch use the process's libstdc++.so.6 and carry no
copy of libstdc++ of their own.

A copy linked in (g++ falls back to libstdc++.a where its libstdc++.so link is missing, or links it where asked
with -static-libstdc++) has its own locale facets: the first number the library formats through a stream, an
error message or Google Benchmark's console, reads the wrong facet and crashes the Python process.
cmake/solbench.cmake links the shared library explicitly; this is the check that it worked.

usage: check_shared_libstdcxx.py LIBRARY...
Exit 0 when every library passes, 1 naming each that fails and why, 2 for bad usage, 77 (skipped) without
readelf or nm.
"""
import shutil
import subprocess
import sys

# Code that exists only inside libstdc++ itself: std::ostream::_M_insert<long> (an explicit instantiation the
# headers declare extern) and codecvt<char16_t, char>'s do_unshift (a member of a specialization defined in
# the library's sources). A library that defines either carries libstdc++'s code.
LIBSTDCXX_ONLY = ("_ZNSo9_M_insertIlEERSoT_", "_ZNKSt7codecvtIDsc11__mbstate_tE10do_unshiftERS0_PcS3_RS3_")


def needed(path: str) -> list:
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


def defined_symbols(path: str) -> set:
    names = set()
    for extra in (["-D"], []):  # the dynamic table, and the full one where the library is not stripped
        r = subprocess.run(["nm", *extra, "--defined-only", path], capture_output=True, text=True)
        names |= {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}
    return names


def problems(path: str) -> list:
    found = []
    if not any(n.startswith("libstdc++.so") for n in needed(path)):
        found.append("does not link libstdc++.so (no NEEDED entry)")
    copied = sorted(set(LIBSTDCXX_ONLY) & defined_symbols(path))
    if copied:
        found.append(f"defines libstdc++'s own code ({', '.join(copied)}): a static copy of libstdc++")
    return found


def main(argv: list) -> int:
    if len(argv) < 2:
        print(__doc__.split("usage: ")[1].splitlines()[0], file=sys.stderr)
        return 2
    missing = [tool for tool in ("readelf", "nm") if shutil.which(tool) is None]
    if missing:
        print(f"check_shared_libstdcxx: SKIPPED: {' and '.join(missing)} not on PATH (binutils)")
        return 77
    failed = 0
    for path in argv[1:]:
        try:
            found = problems(path)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            found = [f"could not be read: {e}"]
        print(f"{path}: {'; '.join(found) if found else 'shares libstdc++.so'}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
