"""Launch floors: empty kernels launched with a variant's own grids, clusters, shared memory and PDL
handshake (floor/<variant>_launch/<dtype>/<workload>/<shape>/<mode>), beside the variant's time: what its
launches cost with none of its work, and how much of its cold - hot difference they explain."""
from __future__ import annotations

from .common import floored_variant, fmt, shape_key, usable


def launch_floors(cases) -> dict:
    """(variant, workload, dtype) -> {shape label: {mode: floor case}} for the good floor cases."""
    groups = {}
    for c in cases:
        variant = floored_variant(c)
        if variant is not None and c.ok:
            groups.setdefault((variant, c.workload, c.dtype), {}).setdefault(c.shape_label, {})[c.mode] = c
    return groups


def _by_shape(shapes: dict) -> list:
    return sorted(shapes, key=lambda l: shape_key(next(iter(shapes[l].values()))))


def variant_name(floor, variant: str, mode: str, op_of: dict) -> str:
    """The case name of the variant a floor case floors, at the floor's shape and in `mode`: the floor's
    name with `floor/<variant>_launch` replaced by the variant's op and name."""
    return "/".join([op_of.get(variant, ""), variant, *floor.name.split("/")[2:-1], mode])


def ops_of(cases) -> dict:
    """variant -> its op, from the case names (a launch floor's name does not carry the op)."""
    return {c.impl: c.op for c in reversed(cases) if c.op != "floor"}


def floor_table(variant: str, shapes: dict, by_name: dict, op_of: dict) -> list:
    modes = [m for m in ("cold", "hot") if any(m in s for s in shapes.values())]
    out = ["| shape | splits | clusters | " + " | ".join(
               f"floor {m} | `{variant}` {m} | floor share {m}" for m in modes) + " |",
           "|---|---:|---:|" + "---:|" * (3 * len(modes))]
    for label in _by_shape(shapes):
        row = shapes[label]
        first = next(iter(row.values()))
        splits, clusters = first.counters.get("splits"), first.counters.get("clusters")
        active = first.counters.get("max_active_clusters")
        cells = [f"`{label}`", f"{splits:.0f}" if splits is not None else "–",
                 f"{clusters:.0f} / {active:.0f}" if clusters else "–"]
        for m in modes:
            v = by_name.get(variant_name(first, variant, m, op_of))
            fv = row[m].median_us if m in row else None
            vv = v.median_us if v is not None and v.ok else None
            cells += [fmt(fv, "µs") if fv is not None else "–", fmt(vv, "µs") if vv is not None else "–",
                      f"{fv / vv:.0%}" if fv is not None and vv else "–"]
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def cold_penalty_table(variant: str, shapes: dict, by_name: dict, cases, op_of: dict) -> list:
    """Where a cold launch's extra time goes, at each shape with the variant, its launch floor and the
    fastest PyTorch baseline timed both cold and hot: cold minus hot for the variant, for its floor (the
    launches' share) and the rest (the variant's own: mostly the flush's dirty lines written back as its
    misses evict them), beside the same difference for the PyTorch baseline that is fastest cold."""
    rows = []
    for label in _by_shape(shapes):
        fc, fh = shapes[label].get("cold"), shapes[label].get("hot")
        if fc is None or fh is None:
            continue
        vc, vh = (by_name.get(variant_name(fc, variant, m, op_of)) for m in ("cold", "hot"))
        if not all(c is not None and usable(c) for c in (vc, vh)):
            continue
        torch = [c for c in cases if c.op == vc.op and c.is_torch and c.dtype == vc.dtype and c.mode == "cold"
                 and c.workload == vc.workload and c.shape_label == label and usable(c)]
        best = min(torch, key=lambda c: c.median_us) if torch else None
        best_hot = by_name.get(best.name.removesuffix("/cold") + "/hot") if best else None
        variant_gap, floor_gap = vc.median_us - vh.median_us, fc.median_us - fh.median_us
        torch_gap = fmt(best.median_us - best_hot.median_us, "µs") \
            if best_hot is not None and usable(best_hot) else "–"
        rows.append(f"| `{label}` | {fmt(variant_gap, 'µs')} | {fmt(floor_gap, 'µs')} | "
                    f"{fmt(variant_gap - floor_gap, 'µs')} | " + (f"`{best.impl}` | {torch_gap}" if best else "– | –")
                    + " |")
    if not rows:
        return []
    return [f"Cold minus hot, `{variant}`: the variant's, its launch floor's (the launches' share), the rest "
            "(its own: at the large shapes, the flush's dirty lines written back as its misses evict them), and "
            "the fastest PyTorch baseline's (cold) for comparison.", "",
            f"| shape | `{variant}` | launch floor | rest | fastest PyTorch | its cold − hot |",
            "|---|---:|---:|---:|---|---:|", *rows, ""]


def launch_floor_section(cases, groups: dict) -> list:
    """The section for the floor groups given (launch_floors' output, or a part of it)."""
    if not groups:
        return []
    by_name, op_of = {c.name: c for c in cases}, ops_of(cases)
    md = ["## Launch floors", "",
          "Empty kernels launched with a variant's own grids, block size, dynamic shared memory, "
          "clusters and PDL handshake at each shape (`floor/<variant>_launch/...`), timed like the "
          "variant: what its launches cost with none of its work. clusters: the plan's clusters / how "
          "many the GPU holds at once (more than that run in waves).", ""]
    for (variant, workload, dtype), shapes in groups.items():
        md += [f"### `{variant}` · {workload} · {dtype}", "", *floor_table(variant, shapes, by_name, op_of),
               *cold_penalty_table(variant, shapes, by_name, cases, op_of)]
    return md
