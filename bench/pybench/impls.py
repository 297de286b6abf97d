"""bench_torch's implementations of each op, in the order their cases are registered. Plain Python (no torch), so
that the scripts (the cross-check) know the rows without loading PyTorch; rmsnorm.py and attention.py build them
under these names (cases.py checks that the two agree). paged_attention's rows are attention cases at paged shapes
(paged.py)."""
IMPLEMENTATIONS = {
    "rmsnorm": ("torch_compile", "torch_compile_max_autotune", "torch_compile_composite",
                "torch_compile_composite_max_autotune", "triton", "solbench_op"),
    "fused_add_rmsnorm": ("torch_compile", "triton", "solbench_op"),
    "rmsnorm_backward": ("torch_compile", "triton", "solbench_op"),
    "attention": ("torch_compile_composite", "torch_flex_attention", "solbench_op"),
    "paged_attention": ("torch_sdpa_masked", "torch_flex_attention", "solbench_op"),
    "e2e": ("torch_compile", "solbench_op"),
}


def op_of(fields: dict) -> str:
    """The key in IMPLEMENTATIONS of a parsed case name (scripts/sbresults.py's parse_name): its op, or
    paged_attention for an attention case at a paged shape (named attention/<impl>/..., as bench_attention's)."""
    return "paged_attention" if fields["op"] == "attention" and "page_size" in fields["shape"] else fields["op"]
