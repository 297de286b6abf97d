"""The main() of the Python test files ctest runs: unittest's, exiting 1 when a test failed and 77 (ctest:
Skipped) when every test skipped, after printing "<file>: SKIPPED: <the reasons>"."""
import pathlib
import sys
import unittest

NO_TESTS_RAN_EXIT = 77


def main(module: str, file: str) -> None:
    result = unittest.main(module=module, exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun and len(result.skipped) == result.testsRun:
        reasons = sorted({why for _, why in result.skipped})
        print(f"{pathlib.Path(file).name}: SKIPPED: {'; '.join(reasons)}")
        sys.exit(NO_TESTS_RAN_EXIT)
