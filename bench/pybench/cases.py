"""The Python side of every case: its set-up and verification (setup) and its timed call (launch), as the
harness calls them through libsolbench_pybench.so (pybench_capi.cpp).

setup(case_name): parses the name with the report's own grammar (scripts/sbresults.py), builds the inputs of its
op, shape and dtype (one shape's inputs are kept at a time: the harness runs one case at a time, and a case's
repetitions find the inputs their CUDA graph was captured on), builds the row on them, calls it once (its
compilation: the `compile_s` counter), verifies it once per case (both modes share it, as VerifiedCases does),
and returns a handle to its launch. A torch.compile row counts its Dynamo graphs (`graphs`, at the first call)
and any compiled after that (`recompiles`), and a launch that compiles is an error: it would time a compilation.

A Python exception becomes a return code and a message, never a crash (the callbacks cannot raise):
- a skip (Unsupported): a row that cannot run here, PyTorch or Triton refusing while the row is built or first
  called (a RuntimeError other than a CUDA error, NotImplementedError, a Triton error, out of memory), as the
  C++ PyTorch baselines skip with PyTorch's reason;
- a failed case: a verification that fails, a CUDA error, or any other exception (a bug, not a refusal).
"""
from __future__ import annotations

import gc
import sys
import time
import traceback
from pathlib import Path

import torch

from . import attention, capi, layer, paged, rmsnorm, rows
from .impls import IMPLEMENTATIONS, op_of
from .rows import Built, Unsupported, synchronize
from .verify import DTYPES, Check

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import sbresults  # noqa: E402

# op -> (its module, its implementations' builders)
OPS = {op: (module, impls) for module in (rmsnorm, attention, paged, layer) for op, impls in module.IMPLS.items()}
if {op: tuple(impls) for op, (_, impls) in OPS.items()} != IMPLEMENTATIONS:
    raise ImportError("bench/pybench: impls.py's IMPLEMENTATIONS and the builders of rmsnorm.py, attention.py, "
                      "paged.py and layer.py name different rows")


# The Python rows' launch floor: the harness's ctypes callback around one bare kernel launch from Python
# (torch.cuda._sleep(0): a pybind call that launches a spin kernel of no cycles, no dispatcher). A row's host_us
# over this floor's is what its Python call costs beyond a kernel launch; pybench_capi.cpp registers its cases.
PYTHON_LAUNCH_FLOOR = "floor/python_launch"


def python_launch_floor() -> None:
    torch.cuda._sleep(0)


def implementations() -> dict:
    """op -> implementation names, in the order the cases are registered."""
    return {op: list(impls) for op, impls in IMPLEMENTATIONS.items()}


class SetupError(Exception):
    """A fault of the driver or of its environment (never a refusal: the case fails)."""


def is_refusal(e: BaseException) -> bool:
    """Whether an exception raised while a row is built or first called is PyTorch or Triton declining the case
    (a skip) rather than an error (a failure)."""
    if isinstance(e, SetupError):
        return False
    if isinstance(e, (Unsupported, NotImplementedError, torch.cuda.OutOfMemoryError)):
        return True
    if type(e).__module__.startswith("triton"):
        return True
    return isinstance(e, RuntimeError) and "CUDA error" not in str(e)


def describe(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}" if not isinstance(e, Unsupported) else str(e)


def dynamo_graphs() -> int:
    """Dynamo graphs compiled in this process so far."""
    from torch._dynamo.utils import counters
    return int(counters["stats"]["unique_graphs"])


class Runner:
    """The callbacks' state: the kept inputs, the built rows on them, each case's verification and counters."""

    def __init__(self, harness):
        self.harness = harness
        self.key = None             # (op, shape, dtype) of the kept inputs
        self.inputs = None
        self.built = {}             # case name less mode -> Built, on the kept inputs
        self.keep = {}              # case name less mode -> what its row keeps across inputs (its compiled function)
        self.checks = {}            # case name less mode -> its verification
        self.counters = {}          # case name less mode -> {counter: value}
        self.launch_of = None       # (handle, launch) of the case last set up
        self.next_handle = 0

    # -- the callbacks -----------------------------------------------------------------------------------
    def setup(self, case_name: bytes, stream: int, handle, err, msg: int, msg_len: int) -> int:
        name = case_name.decode()
        try:
            if rows.DEVICE == "cuda" and torch.cuda.current_stream().cuda_stream != (stream or 0):
                raise SetupError("PyTorch's current stream is not the harness's: libsolbench_pybench.so and this "
                                 "Python do not share one libtorch (build it with this Python's PyTorch)")
            base = name.rsplit("/", 1)[0]
            built = self._built(name, base)
            check = self.checks[base]
            if not check.ok:
                capi.write_message(msg, msg_len, "verification failed: " + check.message)
                return capi.FAILED
            if built.restore:
                built.restore()
            for key, value in self.counters[base].items():
                self.harness.counter(key, value)
            self.next_handle += 1
            self.launch_of = (self.next_handle, self._timed(built, base))
            handle[0], err[0] = self.next_handle, check.err
            return capi.OK
        except BaseException as e:  # noqa: BLE001 - nothing may propagate into the C++ harness
            refused = is_refusal(e)
            if not refused:
                traceback.print_exc()
            self._drop_on_memory_error(e)
            capi.write_message(msg, msg_len, describe(e) if refused or isinstance(e, Unsupported)
                               else f"set-up raised {describe(e)}")
            return capi.UNSUPPORTED if refused else capi.FAILED

    def launch(self, handle: int, msg: int, msg_len: int) -> int:
        try:
            if self.launch_of is None or self.launch_of[0] != handle:
                raise SetupError(f"launch of handle {handle}, not that of the case last set up")
            self.launch_of[1]()
            return capi.OK
        except BaseException as e:  # noqa: BLE001
            capi.write_message(msg, msg_len, describe(e))
            oom = isinstance(e, torch.cuda.OutOfMemoryError)
            self._drop_on_memory_error(e)
            return capi.UNSUPPORTED if oom else capi.FAILED

    # -- building ----------------------------------------------------------------------------------------
    def _inputs(self, op: str, fields: dict, dtype: str):
        key = (op, fields["shape_label"], dtype)
        if self.key != key:
            self.key, self.inputs, self.built, self.launch_of = None, None, {}, None
            gc.collect()  # the previous shape's inputs, rows and autograd graphs, before this shape's are made
            module, shape = OPS[op][0], fields["shape"]
            if op == "paged_attention":  # the batch's lengths, as the C++ cases draw them (paged_lengths.h)
                shape = {**shape, "lengths": self.harness.shapes(fields["shape_label"])["paged"][0]["lengths"]}
            self.inputs = module.inputs(op, shape, DTYPES[dtype], f"{op}/{dtype}/{fields['shape_label']}")
            self.key = key
        return self.inputs

    def _built(self, name: str, base: str) -> Built:
        if base == PYTHON_LAUNCH_FLOOR:  # no inputs and nothing to verify, as the C++ floors
            self.checks.setdefault(base, Check())
            self.counters.setdefault(base, {})
            return self.built.setdefault(base, Built(launch=python_launch_floor, check=Check))
        fields = sbresults.parse_name(name)
        op, impl, dtype = op_of(fields), fields["impl"], fields["dtype"]
        if op not in OPS or impl not in OPS[op][1] or dtype not in DTYPES:
            raise SetupError(f"{name}: no Python implementation {impl!r} of {op!r} at dtype {dtype!r}")
        inputs = self._inputs(op, fields, dtype)
        if base in self.built:
            return self.built[base]
        first = base not in self.counters
        graphs, start = dynamo_graphs(), time.perf_counter()
        built = OPS[op][1][impl](inputs, self.keep.setdefault(base, {}), base.replace("/", "_"))
        built.launch()
        synchronize()
        counters = self.counters.setdefault(base, {"compile_s": time.perf_counter() - start})
        if built.compiled:
            counters.setdefault("graphs", dynamo_graphs() - graphs if first else 0)
            counters.setdefault("recompiles", 0)
            if not first:  # rebuilt inputs of the same shape: any graph compiled now is a recompile
                counters["recompiles"] += dynamo_graphs() - graphs
        if base not in self.checks:
            before = dynamo_graphs()
            self.checks[base] = built.check()
            synchronize()
            if built.compiled:
                counters["recompiles"] += dynamo_graphs() - before
        self.built[base] = built
        return built

    def _timed(self, built: Built, base: str):
        """The launch as the harness times it; a torch.compile row's raises if Dynamo compiles during it."""
        if not built.compiled:
            return built.launch

        def launch():
            before = dynamo_graphs()
            built.launch()
            if dynamo_graphs() != before:
                raise RuntimeError(f"{base}: Dynamo compiled a graph during a timed call (a recompile; "
                                   "torch._logging.set_logs(recompiles=True) says why)")
        return launch

    def _drop_on_memory_error(self, e: BaseException) -> None:
        """After out of memory, the kept inputs and rows go, and the allocator's cache with them."""
        if isinstance(e, torch.cuda.OutOfMemoryError):
            self.key, self.inputs, self.built, self.launch_of = None, None, {}, None
            gc.collect()
            torch.cuda.empty_cache()
