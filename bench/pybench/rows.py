"""What every op's Python rows share: the prepared row (Built), the skip (Unsupported), NaN in the memory the
caching allocator hands out next, the solbench operators (their package, or the reason they cannot run), the
Triton ladder steps loaded by path, and calls of an operator bound by its schema's argument names."""
from __future__ import annotations

import importlib.util
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from .verify import Check

ROOT = Path(__file__).resolve().parents[2]
TRITON_DIR = ROOT / "bench" / "triton_kernels"
# Where the rows' tensors live: the GPU the harness times; the tests build and check rows on the CPU (inductor's
# CPU backend, triton's interpreter) by setting it to "cpu".
DEVICE = "cuda"


class Unsupported(Exception):
    """A row that cannot run at this case (its reason is the skip's): an operator not built, a refusal."""


@dataclass
class Built:
    """One row at one shape and dtype, on its inputs: `launch` is the call that is timed; `check` runs the
    verified call and checks it; `restore` (in-place rows) puts the inputs back before each repetition;
    `compiled`: a torch.compile row, whose Dynamo graphs are counted."""
    launch: Callable[[], object]
    check: Callable[[], Check]
    restore: Callable[[], None] | None = None
    compiled: bool = False


def kept(keep: dict, key: str, make: Callable[[], object]):
    """keep[key], made by make() the first time: what a row keeps across rebuilt inputs (its compiled function)."""
    if key not in keep:
        keep[key] = make()
    return keep[key]


def seed_of(name: str) -> int:
    """A stable seed from a case's op, shape and dtype: the inputs rebuilt for it are bit for bit the same."""
    return zlib.crc32(name.encode())


def normal(shape, dtype, generator, mean: float = 0.0, std: float = 1.0) -> torch.Tensor:
    """N(mean, std^2) drawn in fp32 on the current device, rounded to dtype."""
    t = torch.randn(shape, generator=generator, device=DEVICE, dtype=torch.float32)
    return (t * std + mean).to(dtype)


def generator(seed: int) -> torch.Generator:
    g = torch.Generator(device=DEVICE)
    g.manual_seed(seed)
    return g


def poison(*sizes: int) -> None:
    """Fills blocks of these sizes (bytes) from the caching allocator with 0xff bytes (NaN in fp32, fp16 and bf16)
    and frees them, so that the outputs of the next call, allocated at these sizes on this stream, start as NaN:
    an element the call leaves unwritten fails the check, as the C++ cases' poisoned outputs do."""
    blocks = [torch.full((n,), 0xFF, dtype=torch.uint8, device=DEVICE) for n in sizes if n > 0]
    del blocks


def synchronize() -> None:
    """Waits for the rows' device (the current stream's work included)."""
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def nbytes(shape, dtype) -> int:
    n = 1
    for s in shape:
        n *= s
    return n * torch.empty((), dtype=dtype).element_size()


_solbench = None


def solbench():
    """The solbench package (python/solbench, its operator library loaded), or Unsupported with the reason."""
    global _solbench
    if _solbench is None:
        sys.path.insert(0, str(ROOT / "python"))
        try:
            import solbench as package
            _solbench = package
        except Exception as e:  # noqa: BLE001 - any failure to load is the rows' skip reason
            _solbench = Unsupported(f"the solbench package does not load: {type(e).__name__}: {e}")
        finally:
            sys.path.remove(str(ROOT / "python"))
    if isinstance(_solbench, Unsupported):
        raise _solbench
    return _solbench


def solbench_op(name: str):
    """torch.ops.solbench.<name> after the package has loaded the library, or Unsupported saying it is not there."""
    solbench()
    if not hasattr(torch.ops.solbench, name):
        raise Unsupported(f"torch.ops.solbench.{name} is not registered (libsolbench_ops.so has no such operator)")
    return getattr(torch.ops.solbench, name)


_triton_modules = {}


def triton_module(stem: str):
    """bench/triton_kernels/<stem>.py, loaded by path (the folder is no package, so it never shadows an installed
    one), or Unsupported where triton is not installed."""
    if stem not in _triton_modules:
        try:
            import triton  # noqa: F401
        except ImportError as e:
            raise Unsupported(f"triton is not installed: {e}") from None
        spec = importlib.util.spec_from_file_location(f"solbench_{stem}", TRITON_DIR / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # triton's JIT reads its kernels' source through their module
        spec.loader.exec_module(module)
        _triton_modules[stem] = module
    return _triton_modules[stem]


# The argument names an operator's schema may give each value the rows pass (its own words, or PyTorch's).
ARGUMENT_NAMES = {
    "x": ("x", "input", "hidden_states"), "residual": ("residual",), "weight": ("weight", "w"),
    "eps": ("eps", "epsilon"), "dy": ("dy", "grad_out", "grad_output", "grad", "dout"),
    "rstd": ("rstd", "inv_rms", "saved_rstd"), "variant": ("variant",),
}


def bind(op, values: dict) -> tuple:
    """(kwargs, names written) to call operator `op` (an OpOverloadPacket) with `values`, matched to its default
    overload's arguments by name (ARGUMENT_NAMES); an argument with a default may be left out. Unsupported, with
    the schema, for an argument none of the values names."""
    schema = op.default._schema
    kwargs, written = {}, set()
    for arg in schema.arguments:
        key = next((k for k, names in ARGUMENT_NAMES.items() if arg.name in names and k in values), None)
        if key is None:
            if arg.has_default_value():
                continue
            raise Unsupported(f"cannot call {schema}: no value for its argument '{arg.name}'")
        kwargs[arg.name] = values[key]
        if arg.alias_info is not None and arg.alias_info.is_write:
            written.add(key)
    return kwargs, written
