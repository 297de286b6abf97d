#!/usr/bin/env bash
# The regression gate on a machine with a GPU: a fresh run of the benchmarks (no sanitizer, no
# cross-check) checked against a stored baseline.
#   scripts/gpu_regress.sh [BASELINE]        (default results/<gpu>/baseline.json)
# Extra flags for regress.py go in REGRESS_ARGS (e.g. REGRESS_ARGS='--threshold 0.03'); BENCH_ARGS
# narrows the run (e.g. BENCH_ARGS='--benchmark_filter=vectorized'). Exit: regress.py's status
# (1 = regression), or the run's if it failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_regress.sh: no NVIDIA GPU here; on a CPU-only CI use: python3 scripts/regress.py BASELINE RUN" >&2
  exit 3
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed -E 's/^NVIDIA //; s/[^A-Za-z0-9]+/_/g' | tr 'A-Z' 'a-z')
baseline=${1:-$root/results/$gpu/baseline.json}
out=$(mktemp -d)
SKIP_SANITIZER=1 SKIP_CROSSCHECK=1 SUITE_COMMAND=scripts/gpu_regress.sh "$root/scripts/gpu_run.sh" "$out" || { echo "gpu_regress.sh: the run failed; see $out" >&2; exit 1; }
python3 "$root/scripts/regress.py" "$baseline" "$out" --fingerprint-check "$root" ${REGRESS_ARGS:-}
