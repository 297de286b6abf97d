"""The solbench report: RESULTS_DIR/REPORT.md, RESULTS_DIR/report/*.md and RESULTS_DIR/plots/*.png from one run.

scripts/report.py is the command; the modules, each one part of the report:

    common       case predicates, grouping and number formatting every part shares
    tables       the per-shape tables, the summary and the per-implementation tables
    anchors      ANCHORS.md figures (RESULTS_DIR/anchors.json) beside the measured cells
    crosscheck   the PyTorch baselines timed again by triton's do_bench (RESULTS_DIR/crosscheck.json)
    splits       the split-count sweep of a split-KV variant
    floors       launch floors: a variant's launches with none of its work
    paged        paged decode: the page-size and length-distribution sweeps against the read floor and padding
    e2e          the decoder layer, and what its norms and attention cost inside it
    worth        when a CUDA kernel is worth writing: ours against torch.compile, Triton, FlexAttention, eager
    overhead     what one call costs: the PyTorch operator layer's host time against a direct kernel launch
    environment  the run context table and the warnings
    plots        matplotlib plots (metric vs a shape field, split sweep, roofline)
    render       REPORT.md and the per-op pages
    readme       the results table between markers in a README
    cli          the command line
"""
