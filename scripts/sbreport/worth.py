"""When is a CUDA kernel worth writing? Per op and regime, this run's fastest kernel of ours against the fastest of
each other kind of implementation (torch.compile, a hand-written Triton kernel, FlexAttention, eager PyTorch) at
the same shapes, and the lines of code each kind takes, counted in this checkout's files."""
from __future__ import annotations

import ast
import io
import re
import statistics
import tokenize
from pathlib import Path

from .common import in_main_tables, is_ours, shape_key, usable

ROOT = Path(__file__).resolve().parents[2]
RMSNORM_FAMILY = ("rmsnorm", "fused_add_rmsnorm", "rmsnorm_backward")
OP_ORDER = (*RMSNORM_FAMILY, "attention")
DECODE_ROWS = 256  # the RMSNorm shapes of decode batches: up to 256 rows (rmsnorm_shapes.cpp's default set)
# The kinds a row is set against ours, in column order: (name, predicate on a case).
KINDS = (
    ("torch.compile", lambda c: c.impl.startswith("torch_compile")),
    ("Triton", lambda c: c.is_triton),
    ("FlexAttention", lambda c: c.impl == "torch_flex_attention"),
    ("eager PyTorch", lambda c: c.is_torch and not c.impl.startswith("torch_compile")
     and c.impl != "torch_flex_attention"),
)
PYTHON_ROWS = re.compile(r"torch_compile.*|torch_flex_attention|triton.*|solbench_op")
# What each kind's code is, per op: (file relative to the checkout, a top-level function of it or None for the
# whole file). torch.compile's rows compile a function of bench/pybench/compiled.py; the backward's compiles the
# forward (autograd derives the backward).
COMPILED = "bench/pybench/compiled.py"
SOURCES = {
    ("rmsnorm", "torch.compile"): [(COMPILED, "rms_norm"), (COMPILED, "rms_norm_composite")],
    ("fused_add_rmsnorm", "torch.compile"): [(COMPILED, "fused_add_rms_norm")],
    ("rmsnorm_backward", "torch.compile"): [(COMPILED, "rms_norm")],
    ("attention", "torch.compile"): [(COMPILED, "attention_composite_for")],
    ("attention", "FlexAttention"): [(COMPILED, "flex_for"), ("bench/pybench/attention.py", "block_mask_of")],
    ("rmsnorm", "Triton"): [("bench/triton_kernels/rmsnorm_triton.py", None)],
    ("fused_add_rmsnorm", "Triton"): [("bench/triton_kernels/fused_add_rmsnorm_triton.py", None)],
    ("rmsnorm_backward", "Triton"): [("bench/triton_kernels/rmsnorm_backward_triton.py", None)],
}


def regime(case) -> str:
    if case.op == "attention":
        return case.workload
    return f"decode (≤ {DECODE_ROWS} rows)" if case.shape.get("rows", 0) <= DECODE_ROWS else \
        f"prefill (> {DECODE_ROWS} rows)"


def has_python_rows(cases) -> bool:
    return any(PYTHON_ROWS.fullmatch(c.impl) for c in cases)


def groups(cases) -> dict:
    """(op, regime, dtype, mode) -> {shape label: {impl: case}} of the ops of OP_ORDER, in that order."""
    out = {}
    for c in sorted((c for c in cases if c.op in OP_ORDER and in_main_tables(c)),
                    key=lambda c: (OP_ORDER.index(c.op), c.workload != "prefill", c.shape.get("rows", 0) > DECODE_ROWS,
                                   c.dtype, c.mode, shape_key(c))):
        out.setdefault((c.op, regime(c), c.dtype, c.mode), {}).setdefault(c.shape_label, {})[c.impl] = c
    return out


def fastest(cases, keep):
    return min((c for c in cases if usable(c) and keep(c)), key=lambda c: c.median_us, default=None)


def compare(shapes: dict) -> dict:
    """Over a group's shapes: which kind is fastest at each (ours among them) and, per kind, the speedups of our
    fastest kernel over that kind's fastest (their time over ours) where both ran."""
    wins = {"ours": 0, **{k: 0 for k, _ in KINDS}}
    speedups = {k: [] for k, _ in KINDS}
    for by_impl in shapes.values():
        ours = fastest(by_impl.values(), is_ours)
        best = {k: fastest(by_impl.values(), keep) for k, keep in KINDS}
        ran = {k: c for k, c in [("ours", ours), *best.items()] if c is not None}
        if len(ran) < 2:
            continue
        wins[min(ran, key=lambda k: ran[k].median_us)] += 1
        for k, c in best.items():
            if ours is not None and c is not None:
                speedups[k].append(c.median_us / ours.median_us)
    return {"wins": wins, "speedups": speedups}


def _spread(values: list) -> str:
    if not values:
        return "–"
    mid = f"{statistics.median(values):.2f}×"
    return mid if len(values) == 1 else f"{mid} ({min(values):.2f}× – {max(values):.2f}×)"


def comparison_table(cases) -> list:
    kinds = [k for k, keep in KINDS if any(keep(c) for c in cases if c.op in OP_ORDER)]
    rows = []
    for (op, reg, dtype, mode), shapes in groups(cases).items():
        st = compare(shapes)
        if not any(st["speedups"][k] for k in kinds):
            continue
        compared = sum(st["wins"].values())
        wins = " / ".join(str(st["wins"][k]) for k in ("ours", *kinds))
        rows.append(f"| {op} | {reg} | {dtype} | {mode} | {compared} | {wins} | "
                    + " | ".join(_spread(st["speedups"][k]) for k in kinds) + " |")
    if not rows:
        return []
    return ["| op | regime | dtype | mode | shapes | fastest: " + " / ".join(("ours", *kinds)) + " | "
            + " | ".join(f"ours vs {k}" for k in kinds) + " |",
            "|---|---|---|---|---:|---|" + "---|" * len(kinds), *rows]


def code_lines(source: str, path: str = "") -> set:
    """The numbers of the lines of `source` that hold code: not blank, not only a comment, and (Python) not part
    of a docstring. C, C++ and CUDA comments are // and /* */; Python's are # and docstrings."""
    if not path.endswith(".py"):
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.S)
        return {i for i, line in enumerate(text.splitlines(), 1) if line.split("//")[0].strip()}
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docstrings |= set(range(body[0].lineno, body[0].end_lineno + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER)
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines |= set(range(tok.start[0], tok.end[0] + 1))
    return lines - docstrings


def count_lines(path: str, function: str | None = None, root: Path = ROOT) -> int | None:
    """Lines of code (code_lines) of a file, or of one of its top-level functions (its decorators and def line
    included); None where the file or the function is not there."""
    file = root / path
    if not file.is_file():
        return None
    source = file.read_text()
    lines = code_lines(source, path)
    if function is None:
        return len(lines)
    node = next((n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if node is None:
        return None
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return len({i for i in lines if first <= i <= node.end_lineno})


def variant_files(op: str, variant: str, root: Path = ROOT) -> list:
    """A variant's own files, relative to the checkout: kernels/<op>/<variant>.* and <variant>_* (decode_splitk's
    plan, header and split kernels), not what it shares with other variants."""
    folder = root / "kernels" / op
    found = sorted({*folder.glob(f"{variant}.*"), *folder.glob(f"{variant}_*")})
    return [str(f.relative_to(root)) for f in found if f.suffix in (".cu", ".cuh", ".cpp", ".h")]


def loc_rows(cases, root: Path = ROOT) -> list:
    """Per op of the comparison: each of our variants in the run (its own files: variant_files) and each other
    kind's code (SOURCES), as (op, implementation, where, lines of code)."""
    out = []
    for op in (op for op in OP_ORDER if any(c.op == op for c in cases)):
        for impl in dict.fromkeys(c.impl for c in cases if c.op == op and is_ours(c)):
            files = variant_files(op, impl, root)
            if files:
                lines = [count_lines(f, None, root) for f in files]
                out.append((op, f"ours: `{impl}`", ", ".join(f"`{f}`" for f in files),
                            None if None in lines else sum(lines)))
        for kind, keep in KINDS:
            if not any(c.op == op and keep(c) for c in cases):
                continue
            for path, function in SOURCES.get((op, kind), []):
                where = f"`{path}`: `{function}`" if function else f"`{path}`"
                out.append((op, kind, where, count_lines(path, function, root)))
    return out


def worth_section(cases, root: Path = ROOT) -> list:
    """The report's section, [] for a run without Python rows (bench_torch's)."""
    if not has_python_rows(cases):
        return []
    md = ["## When is a CUDA kernel worth writing?", "",
          "Per op, regime, dtype and mode, at each shape the fastest implementation of each kind: ours (a kernel of "
          "this suite, run directly or as its PyTorch operator `solbench_op`), torch.compile (its fastest mode and "
          "formulation), a hand-written Triton kernel, FlexAttention, eager PyTorch (ATen's ops and the composites). "
          "*fastest*: at how many shapes each kind is the fastest, of those where at least two kinds ran; *ours vs "
          "X*: X's time over ours (> 1: ours is faster), the median (lowest – highest) over the shapes where both "
          "ran. Regime: attention's workload; for the RMSNorm ops, decode batches (up to "
          f"{DECODE_ROWS} rows) or prefill.", ""]
    table = comparison_table(cases)
    md += table + [""] if table else ["No shape has both one of our kernels and another kind.", ""]
    rows = loc_rows(cases, root)
    if rows:
        md += ["Lines of code of each implementation (not blank, not only a comment, not a docstring), counted in "
               "this checkout: a CUDA variant's own files (not what it shares with the other variants, such as "
               "`kernels/common/`), the Triton file, the function torch.compile compiles.", "",
               "| op | implementation | code | lines |", "|---|---|---|---:|",
               *[f"| {op} | {who} | {where} | {n if n is not None else '–'} |" for op, who, where, n in rows], ""]
    return md
