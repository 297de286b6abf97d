#!/usr/bin/env python3
"""Load solbench results (Google Benchmark JSON, v1.7.1 and v1.8.3) into one Case per benchmark.

A run is one or more `--benchmark_out` JSON files (one per bench binary), or a directory of them.
Rows are grouped by `run_name`; the suffixes Google Benchmark appends (`/manual_time`,
`/repeats:5`, `/min_time:0.500`, ...) are stripped, so the case name is the one benchmarks and
tests share, e.g. `rmsnorm/vectorized/bf16/t4096_h8192/cold`. Name grammar:

    <op>/<impl>[/<dtype>][/<workload>][/<shape>]/<mode>
    bench_e2e's training steps: e2e/train_step/<impl>/<dtype>/<config>/<mode>, the workload `train_step`
                                 first and a named config (small, 1b) for the shape label, with no tokens
    shape tokens, joined by `_`: t=rows h=hidden b=batch hq=heads_q hkv=heads_kv d=head_dim
                                 f=ffn q=q_len kv=kv_len p=page_size, the flag `causal`, and
                                 paged decode's length distribution (eq, unif, zipf, onelong: `lengths`)
                                 and its FP8 cache (fp8: `kv_cache`)

A case's time is the median of its per-repetition `real_time`s (Google Benchmark's `median`
aggregate when the file holds aggregates only); its counters are those of the `median` aggregate.
A case is *failed* when a row has `error_occurred` (SkipWithError), and *skipped*, not failed,
when the message starts with `skipped:` (how a 1.7.1 binary reports a `supports()` reason) or when
Google Benchmark >= 1.8 reports `skipped` (SkipWithMessage).

A bench run cut short (a time limit, SIGTERM, Ctrl-C, a crash) leaves its `--benchmark_out` file truncated or
empty, and beside it `<out>.partial.jsonl`, which the harness appends each finished repetition to (removed when the
run ends normally): a line {"context": {...}}, then one Google Benchmark iteration row a line. A `.partial.jsonl`
given, or found beside a `--benchmark_out` file that is not valid JSON, loads in its place, its medians computed
from its repetitions (it has no aggregates); a truncated last line is left out; the run is marked incomplete
(`context["incomplete"] == "true"`, `Run.incomplete`). In a directory, a `*.json.partial.jsonl` whose `.json`
is missing is loaded too.

A file whose name ends in `.xz` (results/<gpu>/latest.json.xz, baseline.json.xz) or `.gz` is
decompressed transparently: every script that reads results goes through `read_text`, and
`write_text` compresses the same way.

CLI:
    python3 scripts/sbresults.py fingerprint REPO_ROOT     prints the kernels fingerprint
    python3 scripts/sbresults.py merge OUT PART.json...    merges the bench JSONs of one run into OUT
                                                           (OUT.json.xz is written xz-compressed)
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import lzma
import os
import re
import statistics
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

DTYPES = ("fp32", "fp16", "bf16")
WORKLOADS = ("prefill", "decode", "train_step")
TRAIN_WORKLOAD = "train_step"  # the one workload named before the implementation (see the module docstring)
SHAPE_TOKENS = {"t": "rows", "h": "hidden", "b": "batch", "hq": "heads_q", "hkv": "heads_kv",
                "d": "head_dim", "f": "ffn", "q": "q_len", "kv": "kv_len", "p": "page_size"}
LENGTH_DISTS = ("eq", "unif", "zipf", "onelong")  # bench/paged_lengths.h, in that order
KV_CACHES = ("fp8",)  # a paged shape's cache other than the dtype's (bench/paged_shapes.h's _fp8): `kv_cache`
SHAPE_FIELDS = ("rows", "hidden", "batch", "heads_q", "heads_kv", "head_dim", "ffn", "q_len", "kv_len",
                "causal", "page_size", "lengths", "kv_cache")
TORCH_PREFIX = "torch_"  # PyTorch: its ops, composites, torch.compile and FlexAttention (bench_torch's rows)
TRITON_PREFIX = "triton"  # a hand-written Triton kernel (bench_torch's `triton` rows): neither ours nor PyTorch
REF_PREFIX = "ref_"  # references that are not the op (ref_copy: a copy of the same bytes), not variants
SKIP_PREFIX = "skipped:"
PARTIAL_SUFFIX = ".partial.jsonl"
US_PER_UNIT = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
GB_NAME_SUFFIX = re.compile(r"manual_time|real_time|process_time|threads:\d+|repeats:\d+|"
                            r"iterations:\d+|min_time:[0-9.]+[sx]?|min_warmup_time:[0-9.]+")
GB_ROW_KEYS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
               "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
               "error_occurred", "error_message", "skipped", "skip_message", "iterations",
               "real_time", "cpu_time", "time_unit", "label", "allocs_per_iter", "max_bytes_used",
               "total_allocated_bytes", "net_heap_growth"}


class ResultsError(ValueError):
    """Malformed or inconsistent results; the message names the file and what is wrong."""


@dataclass
class Case:
    name: str                 # benchmark name without Google Benchmark's suffixes
    op: str
    impl: str
    dtype: str                # "" when the name has none (the launch floor)
    workload: str             # "prefill" / "decode", "" for rmsnorm
    shape: dict               # canonical SHAPE_FIELDS keys present in the name
    shape_label: str          # the shape component as written, e.g. "t4096_h8192"
    mode: str                 # "cold" / "hot"
    times_us: list = field(default_factory=list)   # per repetition, error rows excluded
    median_us: float | None = None
    counters: dict = field(default_factory=dict)   # median over repetitions
    repetitions: int = 0
    error: str = ""           # the error or skip message
    skipped: bool = False     # error is a skip reason, not a failure
    source: str = ""          # file the case came from
    manual_time: bool = True  # every row of it is Google Benchmark's /manual_time: the harness's CUDA
                              # events timed it, not the library's own clock

    @property
    def failed(self) -> bool:
        return bool(self.error) and not self.skipped

    @property
    def ok(self) -> bool:
        return not self.error and self.median_us is not None

    @property
    def is_torch(self) -> bool:
        return self.impl.startswith(TORCH_PREFIX)

    @property
    def is_triton(self) -> bool:
        return self.impl == TRITON_PREFIX or self.impl.startswith(TRITON_PREFIX + "_")

    @property
    def is_reference(self) -> bool:
        return self.impl.startswith(REF_PREFIX)


@dataclass
class Run:
    cases: list               # in order of first appearance
    context: dict             # the first file's context
    files: list

    def by_name(self) -> dict:
        return {c.name: c for c in self.cases}

    @property
    def incomplete(self) -> bool:
        """Some of its files are a run cut short (a .partial.jsonl)."""
        return self.context.get("incomplete") == "true"

    def ceiling(self, key: str) -> float | None:
        """A numeric context value (AddCustomContext stores strings), None when absent."""
        try:
            return float(self.context[key])
        except (KeyError, TypeError, ValueError):
            return None


def case_name(run_name: str) -> str:
    parts = run_name.split("/")
    while len(parts) > 1 and GB_NAME_SUFFIX.fullmatch(parts[-1]):
        parts.pop()
    return "/".join(parts)


def parse_shape(label: str) -> dict:
    shape = {}
    for token in label.split("_"):
        if token == "causal":
            shape["causal"] = True
            continue
        if token in LENGTH_DISTS:
            shape["lengths"] = token
            continue
        if token in KV_CACHES:
            shape["kv_cache"] = token
            continue
        m = re.fullmatch(r"([a-z]+)(\d+)", token)
        if not m:
            raise ResultsError(f"bad shape token {token!r} in {label!r}")
        shape[SHAPE_TOKENS.get(m[1], m[1])] = int(m[2])
    return shape


def parse_name(name: str) -> dict:
    """Split a case name into op, impl, dtype, workload, shape and mode (see module docstring)."""
    parts = name.split("/")
    if len(parts) < 3:
        raise ResultsError(f"benchmark name {name!r} is not <op>/<impl>/.../<mode>")
    op, impl, *middle, mode = parts
    if impl == TRAIN_WORKLOAD:
        if len(middle) != 3 or middle[1] not in DTYPES:
            raise ResultsError(f"benchmark name {name!r} is not <op>/{TRAIN_WORKLOAD}/<impl>/<dtype>/<config>/<mode>")
        return {"op": op, "impl": middle[0], "dtype": middle[1], "workload": TRAIN_WORKLOAD, "shape": {},
                "shape_label": middle[2], "mode": mode}
    fields = {"op": op, "impl": impl, "dtype": "", "workload": "", "shape": {}, "shape_label": "",
              "mode": mode}
    for part in middle:
        if part in DTYPES and not fields["dtype"]:
            fields["dtype"] = part
        elif part in WORKLOADS and not fields["workload"]:
            fields["workload"] = part
        elif not fields["shape_label"]:
            fields["shape"], fields["shape_label"] = parse_shape(part), part
        else:
            raise ResultsError(f"unexpected component {part!r} in benchmark name {name!r}")
    if fields["workload"]:
        fields["shape"].setdefault("causal", False)
    return fields


def _require(row: dict, key: str, where: str):
    if key not in row:
        raise ResultsError(f"{where}: missing key {key!r}")
    return row[key]


def _counters(row: dict) -> dict:
    return {k: float(v) for k, v in row.items()
            if k not in GB_ROW_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool)}


def _to_us(row: dict, where: str) -> float:
    unit = _require(row, "time_unit", where)
    if unit not in US_PER_UNIT:
        raise ResultsError(f"{where}: unknown time_unit {unit!r}")
    return float(_require(row, "real_time", where)) * US_PER_UNIT[unit]


def read_text(path: str | Path) -> str:
    """The text of a results file (UTF-8), decompressed when its name ends in `.xz` or `.gz`. A
    missing file raises the OSError that names it; a corrupt or truncated .xz or .gz, or bytes that
    are not UTF-8, raise ResultsError naming the file."""
    path = Path(path)
    opener = {".gz": ("gzip", gzip.open), ".xz": ("xz", lzma.open)}.get(path.suffix)
    try:
        if opener:
            with opener[1](path, "rt", encoding="utf-8") as f:
                return f.read()
        return path.read_text(encoding="utf-8")
    except (gzip.BadGzipFile, zlib.error, lzma.LZMAError, EOFError) as e:
        raise ResultsError(f"{path}: not a valid {opener[0]} file ({e}); truncated or corrupt?") from None
    except UnicodeDecodeError as e:
        raise ResultsError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def write_text(path: str | Path, text: str) -> None:
    """Write a results file, compressed when its name ends in `.xz` or `.gz`. The file is written
    beside its destination and renamed onto it, so a failed write leaves the old file whole."""
    path = Path(path)
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix, open)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with opener(tmp, "wt", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_partial(path: str | Path) -> dict:
    """A `.partial.jsonl` file (module docstring) as a Google Benchmark document whose context is marked
    incomplete. A last line cut short is left out; any other line that is not a JSON object is an error."""
    path = Path(path)
    lines = read_text(path).split("\n")
    rows = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            if i == len(lines) - 1:  # no newline after it: the write was cut short
                break
            raise ResultsError(f"{path}: line {i + 1} is not valid JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise ResultsError(f"{path}: line {i + 1} is not a JSON object")
        rows.append(row)
    if not rows or not isinstance(rows[0].get("context"), dict):
        raise ResultsError(f"{path}: the first line is not {{\"context\": {{...}}}}; not a partial results file")
    context = dict(rows[0]["context"], incomplete="true")
    return {"context": context, "benchmarks": rows[1:]}


def read_document(path: str | Path) -> dict:
    """The Google Benchmark document of a results file: a `.partial.jsonl` as read_partial reads it; a JSON file
    that is not valid JSON but has a `.partial.jsonl` beside it (a run cut short), that file."""
    path = Path(path)
    if path.name.endswith(PARTIAL_SUFFIX):
        return read_partial(path)
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        partial = path.with_name(path.name + PARTIAL_SUFFIX)
        if partial.is_file():
            return read_partial(partial)
        raise ResultsError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}, column "
                           f"{e.colno}); truncated or not a --benchmark_out file?") from None


def load_file(path: str | Path) -> tuple[dict, list]:
    """Parse one Google Benchmark JSON file (plain, .json.xz or .json.gz) or partial results file into
    (context, cases)."""
    path = Path(path)
    doc = read_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise ResultsError(f"{path}: no 'benchmarks' list; not a Google Benchmark JSON file")
    context = doc.get("context")
    if not isinstance(context, dict):
        raise ResultsError(f"{path}: no 'context' object; not a Google Benchmark JSON file")

    groups: dict[str, list] = {}
    for i, row in enumerate(doc["benchmarks"]):
        where = f"{path}: benchmarks[{i}]"
        if not isinstance(row, dict):
            raise ResultsError(f"{where}: not an object")
        run_name = row.get("run_name", _require(row, "name", where))
        groups.setdefault(case_name(run_name), []).append((where, row))

    cases = []
    for name, rows in groups.items():
        try:
            case = Case(name=name, source=str(path), **parse_name(name))
        except ResultsError as e:
            raise ResultsError(f"{rows[0][0]}: {e}") from None
        per_rep_counters = []
        for where, row in rows:
            if "manual_time" not in row.get("run_name", row.get("name", "")).split("/"):
                case.manual_time = False
            run_type = _require(row, "run_type", where)
            if run_type not in ("iteration", "aggregate"):
                raise ResultsError(f"{where}: unknown run_type {run_type!r}")
            case.repetitions = max(case.repetitions, int(row.get("repetitions", 1)))
            if row.get("error_occurred") or row.get("skipped"):
                message = row.get("error_message") or row.get("skip_message") or "(no message)"
                case.error = case.error or message
                case.skipped = bool(row.get("skipped")) or message.startswith(SKIP_PREFIX)
            elif run_type == "iteration":
                case.times_us.append(_to_us(row, where))
                per_rep_counters.append(_counters(row))
            elif run_type == "aggregate" and _require(row, "aggregate_name", where) == "median":
                case.median_us = _to_us(row, where)
                case.counters = _counters(row)
        if case.times_us:
            case.median_us = statistics.median(case.times_us)
            case.repetitions = len(case.times_us)
            if not case.counters:
                keys = set().union(*per_rep_counters)
                case.counters = {k: statistics.median(c[k] for c in per_rep_counters if k in c)
                                 for k in sorted(keys)}
        cases.append(case)
    return context, cases


def expand(paths) -> list[Path]:
    """Files as given; a directory stands for the *.json files directly in it and the *.json.partial.jsonl
    files whose *.json is missing (sorted)."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(list(p.glob("*.json")) +
                           [q for q in p.glob("*.json" + PARTIAL_SUFFIX)
                            if not q.with_name(q.name[:-len(PARTIAL_SUFFIX)]).exists()])
            if not found:
                raise ResultsError(f"{p}: directory holds no *.json files")
            files += found
        elif p.is_file():
            files.append(p)
        else:
            raise ResultsError(f"{p}: no such file or directory")
    return files


# The context keys that name one run: files that differ in any of them (where both record it) were measured
# on another GPU, from another tree or under another protocol, and are not merged (a run done in parts
# must be finished on the GPU and the tree that began it).
RUN_KEYS = ("gpu_name", "gpu_uuid", "git_commit", "kernels_fingerprint", "timing_protocol")


def load(paths) -> Run:
    """Load and merge the files of one run: contexts must agree on RUN_KEYS, names be unique."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = expand(paths)
    run = Run(cases=[], context={}, files=[str(f) for f in files])
    seen = {}
    for f in files:
        context, cases = load_file(f)
        if not run.context:
            run.context = context
        else:
            if context.get("incomplete") == "true":
                run.context["incomplete"] = "true"
            for key in RUN_KEYS:
                mine, first = context.get(key), run.context.get(key)
                if key == "gpu_name" or (mine is not None and first is not None):
                    if mine != first:
                        raise ResultsError(f"{f}: {key} {mine!r} differs from {first!r} in {files[0]}; "
                                           "one run = one GPU, one tree, one protocol")
        for c in cases:
            if c.name in seen and c.op == "floor":
                continue  # every bench binary measures the launch floor; the run keeps the first
            if c.name in seen:
                raise ResultsError(f"{f}: case {c.name} also appears in {seen[c.name]}")
            seen[c.name] = f
            run.cases.append(c)
    return run


def kernels_fingerprint(repo_root: str | Path, op: str | None = None) -> str:
    """Fingerprint of the kernel sources: first 16 hex digits of a sha256 over a manifest.

    With `op`, only the files an op's results depend on: kernels/<op>/, kernels/common/ and
    the files directly in kernels/ (recorded per op as kernels_fingerprint_<op>, so adding another
    op does not make this op's results stale).

    Recipe: list every regular file under REPO_ROOT/kernels (recursively, symlinks not followed or
    listed) as the path relative to kernels/ prefixed with "./"; sort these paths bytewise; for
    each, the manifest gets the line "<sha256 hex of the file's bytes>  <path>\\n" (two spaces,
    the format of `sha256sum`); the fingerprint is sha256(manifest)[:16]. Equivalent shell (for
    names without newlines or backslashes):

        cd REPO_ROOT/kernels && find . -type f -print0 | LC_ALL=C sort -z \\
            | xargs -0 sha256sum | sha256sum | cut -c1-16
    """
    root = Path(repo_root) / "kernels"
    if not root.is_dir():
        raise ResultsError(f"{root}: no kernels/ directory")
    paths = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root)
            if op is not None and len(rel.parts) > 1 and rel.parts[0] not in (op, "common"):
                continue
            if p.is_file() and not p.is_symlink():
                paths.append((b"./" + os.fsencode(rel.as_posix()), p))
    manifest = hashlib.sha256()
    for rel, p in sorted(paths):
        manifest.update(hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"  " + rel + b"\n")
    return manifest.hexdigest()[:16]


def merge_files(paths, out: str | Path) -> None:
    """Write the bench binaries' JSON files of one run as one Google Benchmark JSON file, in the order
    they were measured (context date): the first file's context (the others must name the same GPU;
    each binary's own command is kept as binary_command_<i>; a key only a later file has, such as
    bench_attention's kv_placement, is added; a later file's value that differs, such as its start-up
    ceilings or a run done in parts' other command, is kept as <key>_<i>) and all benchmark rows but a
    later file's launch-floor rows of a name an earlier file has (the first file's floor is the run's).
    The result loads like any single file; OUT ending in .xz or .gz is written compressed. A run cut short's
    partial results file is read in place of its file (read_document), and the merged context says incomplete."""
    files = expand(paths)
    load(files)  # validates: parseable, one GPU, unique case names
    # In the order they were measured (each binary's context date): the first file's context and floor
    # are the run's, and a run done in parts lists its parts' commands in the order they ran.
    docs = sorted((read_document(f) for f in files), key=lambda d: str(d.get("context", {}).get("date", "")))
    merged, seen = None, set()
    for i, doc in enumerate(docs):
        # Every binary measures the launch floor; as in load(), the run keeps the first file's. Rows of
        # one name from two files in one document would read as one case of both files' repetitions,
        # a median of two binaries' floors that neither measured.
        doc["benchmarks"] = [row for row in doc["benchmarks"]
                             if not (case_name(row.get("run_name", row.get("name", ""))) in seen
                                     and row.get("name", "").startswith("floor/"))]
        seen |= {case_name(row.get("run_name", row.get("name", ""))) for row in doc["benchmarks"]}
        if merged is None:
            merged = doc
        else:
            merged["context"][f"binary_command_{i}"] = doc.get("context", {}).get("binary_command", "")
            for key, value in doc.get("context", {}).items():
                if key not in merged["context"]:
                    merged["context"][key] = value
                elif merged["context"][key] != value and key != "binary_command":
                    # This binary's own measurement (its start-up ceilings, date, load) or a part's command.
                    merged["context"][f"{key}_{i}"] = value
            merged["benchmarks"] += doc["benchmarks"]
    write_text(out, json.dumps(merged, indent=1) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fp = sub.add_parser("fingerprint", help="print the fingerprint of REPO_ROOT/kernels",
                        description=kernels_fingerprint.__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    fp.add_argument("repo_root")
    fp.add_argument("--op", help="only the sources of this op (kernels/<op>, kernels/common, kernels/*)")
    mg = sub.add_parser("merge", help="merge the JSON files of one run into OUT", description=merge_files.__doc__)
    mg.add_argument("out")
    mg.add_argument("inputs", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            merge_files(args.inputs, args.out)
        else:
            print(kernels_fingerprint(args.repo_root, args.op))
    except (ResultsError, OSError) as e:
        print(f"sbresults.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
