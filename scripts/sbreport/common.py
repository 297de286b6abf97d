"""What every part of the report shares: case predicates, grouping, number formatting, JSON input."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sbresults  # noqa: E402

MODE_ORDER = ("cold", "hot")
OP_ORDER = ("rmsnorm", "attention", "e2e")  # the teaching path; other ops follow in order of appearance
KERNELS = Path(__file__).resolve().parents[2] / "kernels"
VARIANT_LINE = re.compile(r"^SB_VARIANT\((\w+)", re.MULTILINE)
CEILING_OF = {"GB/s": "copy_gbps", "TFLOP/s": "gemm_tflops"}
CEILING_NAME = {"copy_gbps": "copy", "gemm_tflops": "GEMM"}
# A forced split count of a split-KV variant: decode_splitk_s8 is decode_splitk with 8 splits.
FORCED_SPLITS = re.compile(r"(?P<variant>.+)_s(?P<splits>\d+)")
# A launch floor of a variant: floor/decode_splitk_launch/... floors decode_splitk.
LAUNCH_FLOOR = re.compile(r"(?P<variant>.+)_launch")
# Past 10x the speed of light a figure is a broken measurement (e.g. a CUDA graph that captured
# nothing), not a fast kernel: shown flagged, left out of comparisons and plots.
IMPLAUSIBLE_SOL_PCT = 1000
# The references a row's cells are set against, with the word a cell uses: ref_copy, a copy of an RMSNorm
# case's bytes; ref_kv_read, a read of a decode case's K and V by a kernel that computes nothing.
BYTES_REFERENCES = {"ref_copy": "copy", "ref_kv_read": "read"}
# References that are a time and nothing else: ref_rest_of_layer (bench_e2e) is there to be subtracted
# from a layer's time, and its rate is no figure of merit. Its cells show the time and the check; it is
# left out of the plots.
TIME_ONLY_REFERENCES = ("ref_rest_of_layer",)


class ReportError(ValueError):
    """A malformed input file next to the run (anchors, cross-check, README); the message names it."""


def forced_splits(case) -> int | None:
    """The split count a sweep case forces (decode_splitk_s8: 8), None for any other case."""
    m = FORCED_SPLITS.fullmatch(case.impl)
    return int(m["splits"]) if m else None


def floored_variant(case) -> str | None:
    """The variant a launch-floor case floors (floor/decode_splitk_launch/...: decode_splitk), else None."""
    m = LAUNCH_FLOOR.fullmatch(case.impl) if case.op == "floor" else None
    return m["variant"] if m else None


def implausible(case) -> bool:
    return case.counters.get("sol_pct", 0) > IMPLAUSIBLE_SOL_PCT


def usable(case) -> bool:
    """A good case with a believable figure: the ones compared and plotted."""
    return case.ok and not implausible(case)


def is_ours(case) -> bool:
    """A kernel of this suite (a variant, or the variants behind the PyTorch operator, solbench_op): not PyTorch,
    not a Triton kernel, not a reference."""
    return not case.is_torch and not case.is_triton and not case.is_reference


def is_triton_impl(impl: str) -> bool:
    return impl == sbresults.TRITON_PREFIX or impl.startswith(sbresults.TRITON_PREFIX + "_")


def in_main_tables(case) -> bool:
    return case.op != "floor" and forced_splits(case) is None


def headline_metric(op: str, workload: str) -> str:
    return "TFLOP/s" if op in ("attention", "e2e") and workload in ("prefill", "train_step") else "GB/s"


def _teaching_order() -> dict:
    """(op, variant) -> (the op's place among kernels/*/variants.def, the variant's line in it: the teaching
    order), where the checkout has them. Keyed by op: two ops may both have a variant of one name."""
    order = {}
    for op_index, path in enumerate(sorted(KERNELS.glob("*/variants.def"))):
        for line, name in enumerate(VARIANT_LINE.findall(path.read_text())):
            order[(path.parent.name, name)] = (op_index, line)
    return order


def impl_order(cases) -> list:
    """Our variants (in variants.def order, op by op, then in order of first appearance), then the PyTorch
    baselines, then the Triton kernels, then the references."""
    impls = list(dict.fromkeys(c.impl for c in cases))
    taught = _teaching_order()
    rank = {}
    for c in cases:
        if (c.op, c.impl) in taught:
            rank[c.impl] = min(rank.get(c.impl, taught[(c.op, c.impl)]), taught[(c.op, c.impl)])
    untaught = (len(taught), 0)
    kind = (sbresults.TORCH_PREFIX, sbresults.REF_PREFIX)
    ours = sorted((i for i in impls if not i.startswith(kind) and not is_triton_impl(i)),
                  key=lambda i: rank.get(i, untaught))
    return ours + [i for i in impls if i.startswith(sbresults.TORCH_PREFIX)] + \
        [i for i in impls if is_triton_impl(i)] + [i for i in impls if i.startswith(sbresults.REF_PREFIX)]


def shape_key(case) -> tuple:
    """Cases in shape order: each field's number (a length distribution by its place in LENGTH_DISTS, a KV cache by
    its place in KV_CACHES), -1 where the shape has no such field, then the label."""
    def value(field):
        v = case.shape.get(field, -1)
        if v == -1:
            return v
        if field == "lengths":
            return sbresults.LENGTH_DISTS.index(v)
        return sbresults.KV_CACHES.index(v) if field == "kv_cache" else v
    return tuple(value(f) for f in sbresults.SHAPE_FIELDS) + (case.shape_label,)


def group_cases(cases) -> dict:
    """(op, workload, dtype, mode) -> cases of the main tables, in OP_ORDER, sbresults.WORKLOADS,
    sbresults.DTYPES and MODE_ORDER order (anything else after, in order of first appearance)."""
    groups = {}
    for c in cases:
        if in_main_tables(c):
            groups.setdefault((c.op, c.workload, c.dtype, c.mode), []).append(c)
    orders = [OP_ORDER, sbresults.WORKLOADS, sbresults.DTYPES, MODE_ORDER]
    first = {k: i for i, k in enumerate(groups)}

    def rank(key):
        return tuple((o.index(p) if p in o else len(o)) for o, p in zip(orders, key)) + (first[key],)
    return dict(sorted(groups.items(), key=lambda kv: rank(kv[0])))


def title(key) -> str:
    """'attention · decode · bf16 · cold' for a group key; empty parts (RMSNorm's workload) left out."""
    return " · ".join(p for p in key if p)


def slug(key) -> str:
    return "_".join(p for p in key if p)


def page_of(op: str, workload: str) -> str:
    """The detail page of an op and workload, relative to RESULTS_DIR: report/attention_decode.md."""
    return f"report/{slug((op, workload))}.md"


def digits(x: float) -> int:
    return 0 if abs(x) >= 100 else 1 if abs(x) >= 10 else 2


def fmt(x: float, unit: str) -> str:
    return f"{x:,.{digits(x)}f} {unit}".rstrip()


def pct(x: float) -> str:
    """A percentage already in percent: 0 decimals from 10 up, 1 below."""
    return f"{x:.{0 if x >= 10 else 1}f}%"


def short(message: str, limit: int = 70) -> str:
    message = message.replace("|", "\\|").replace("\n", " ")
    return message if len(message) <= limit else message[:limit - 1] + "…"


def not_ok(case) -> str:
    """The cell of a missing, skipped or failed case; "" for a good one."""
    if case is None:
        return "–"
    if case.skipped:
        return f"skipped: {short(case.error.removeprefix(sbresults.SKIP_PREFIX).strip())}"
    return "" if case.ok else f"**FAILED**: {short(case.error)}"


def time_text(case, bold: bool) -> str:
    time = fmt(case.median_us, "µs")
    return f"**{time}**" if bold else time


def read_json(path: Path) -> dict:
    """A JSON object file (plain, .xz or .gz); a ReportError naming the file when it is not one."""
    try:
        doc = json.loads(sbresults.read_text(path))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: not a JSON object")
    return doc
