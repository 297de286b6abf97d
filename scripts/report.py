#!/usr/bin/env python3
"""Write a solbench run's report: RESULTS_DIR/REPORT.md, RESULTS_DIR/report/*.md and RESULTS_DIR/plots/*.png.

usage: python3 scripts/report.py RESULTS_DIR [--run FILE...] [--no-plots] [--readme PATH]

The report itself is the package scripts/sbreport/ (its cli module documents the options).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sbreport.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
