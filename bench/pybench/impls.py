"""bench_torch's implementations of each op, in the order their cases are registered. Plain Python (no torch), so
that the scripts (the cross-check) know the rows without loading PyTorch; rmsnorm.py and attention.py build them
under these names (cases.py checks that the two agree)."""
IMPLEMENTATIONS = {
    "rmsnorm": ("torch_compile", "torch_compile_max_autotune", "torch_compile_composite",
                "torch_compile_composite_max_autotune", "triton", "solbench_op"),
    "fused_add_rmsnorm": ("torch_compile", "triton", "solbench_op"),
    "rmsnorm_backward": ("torch_compile", "solbench_op"),
    "attention": ("torch_compile_composite", "torch_flex_attention", "solbench_op"),
}
