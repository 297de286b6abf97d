// libsolbench_pybench.so: the suite's harness (bench_main, run_timed, the cold and hot protocols) for cases
// whose implementation is Python: torch.compile, Triton, FlexAttention, the solbench operators. bench/bench_torch.py
// loads it with ctypes after importing torch, names its implementations (solbench_pybench_add_impl), and calls
// solbench_pybench_main with two callbacks:
//   setup(case_name, stream, &handle, &err, msg, msg_len): builds the case's inputs and callable on `stream` (the
//     harness's, PyTorch's current stream for the call), verifies it once, and returns 0 with a handle and the
//     error over tolerance, 2 (Unsupported: a skip with msg as the reason) or 1 (a failed case, msg the reason);
//     it may add counters with solbench_pybench_counter while it runs;
//   launch(handle, msg, msg_len): one call of the case's callable; 0, 2 or 1 as above.
// Python exceptions never cross into C++: the callbacks catch them and return a code and a message.
// The grid, the case names, the bytes and FLOPs are the C++ benches': register_grid and the problem structs of
// kernels/, so a Python row is named and counted as the C++ rows of the same op, shape and dtype. Each launch runs
// with PyTorch's current stream set to the harness's stream (CUDAStreamGuard, as the libtorch baselines), and hot
// mode captures through torch_ref::capture_graph, whose private pool serves the allocations made in capture.
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attention/attention.h"
#include "attention_case.h"
#include "attention_shapes.h"
#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "harness/gbench.h"
#include "paged_shapes.h"
#include "pybench_shapes.h"
#include "ref/torch/torch_baselines.h"
#include "ref/torch/torch_common.h"
#include "rmsnorm/rmsnorm.h"
#include "rmsnorm_backward/rmsnorm_backward.h"
#include "rmsnorm_shapes.h"

#define SB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using sb::DType;
using namespace sb::bench;

// The callbacks' return codes.
constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUnsupported = 2;
constexpr std::size_t kMessageBytes = 2048;

using SetupFn = int (*)(const char* case_name, void* stream, int64_t* handle, double* err, char* msg, size_t msg_len);
using LaunchCallback = int (*)(int64_t handle, char* msg, size_t msg_len);

SetupFn g_setup = nullptr;
LaunchCallback g_launch = nullptr;
std::map<std::string, std::vector<std::string>> g_impls;     // op -> implementation names, in order added
std::vector<std::pair<std::string, std::string>> g_context;  // the driver's run-context entries
Counters* g_setup_counters = nullptr;                        // the counters of the setup call in progress

// The ops a Python implementation can join, each with the shape grammar its C++ bench reads.
const char* const kOps[] = {"rmsnorm", "fused_add_rmsnorm", "rmsnorm_backward", "attention", "paged_attention", "e2e"};

void write_message(const std::string& what, char* msg, size_t len) {
  if (msg && len) std::snprintf(msg, len, "%s", what.c_str());
}

// One case's set-up and one-time verification in Python, on the harness's stream.
struct Prepared {
  int rc = kFailed;
  int64_t handle = -1;
  double err = 0;
  std::string message;
  Counters counters;
};

Prepared python_setup(const std::string& case_name, cudaStream_t stream) {
  Prepared p;
  char msg[kMessageBytes] = "";
  c10::cuda::CUDAStreamGuard guard(sb::torch_ref::external_stream(stream));
  g_setup_counters = &p.counters;
  p.rc = g_setup(case_name.c_str(), stream, &p.handle, &p.err, msg, sizeof msg);
  g_setup_counters = nullptr;
  p.message = msg;
  return p;
}

// The case's Python callable as the harness launches it: PyTorch's current stream is the one the harness
// passes (a cold launch, a warm-up launch or a graph capture: all the harness's stream).
LaunchFn python_launch(int64_t handle) {
  return [handle](cudaStream_t s) {
    c10::cuda::CUDAStreamGuard guard(sb::torch_ref::external_stream(s));
    char msg[kMessageBytes] = "";
    const int rc = g_launch(handle, msg, sizeof msg);
    if (rc == kUnsupported) throw Unsupported(std::string("PyTorch refused the timed call: ") + msg);
    if (rc != kOk) throw std::runtime_error(msg);
  };
}

// The body of every Python case: set-up and verification (Python), then the harness's timed loop.
void run_python_case(benchmark::State& st, Mode mode, const std::string& case_name, double bytes, double flops) {
  const Prepared p = python_setup(case_name, env().stream.get());
  if (p.rc == kUnsupported) throw Unsupported(p.message);
  if (p.rc != kOk) return fail_case(st, case_name, p.message.empty() ? "set-up failed (no message)" : p.message);
  run_timed(st, mode, Timed{case_name, python_launch(p.handle), sb::torch_ref::capture_graph, bytes, flops, p.err,
                            p.counters});
}

// register_grid's implementation: a name.
struct PyImpl {
  std::string name;
};

std::vector<PyImpl> impls_of(const std::string& op) {
  std::vector<PyImpl> out;
  for (const std::string& name : g_impls[op]) out.push_back({name});
  return out;
}

// The bytes and FLOPs of a case, from its op's problem struct: the C++ benches' denominators.
std::pair<double, double> rmsnorm_family_counts(const std::string& op, const RmsNormShape& s, DType dtype) {
  if (op == "rmsnorm") {
    const sb::rmsnorm::Problem p{s.rows, s.hidden, 1e-6, dtype};
    return {static_cast<double>(p.bytes()), p.flops()};
  }
  if (op == "fused_add_rmsnorm") {
    const sb::fused_add_rmsnorm::Problem p{s.rows, s.hidden, 1e-6, dtype};
    return {static_cast<double>(p.bytes()), p.flops()};
  }
  // As bench_rmsnorm's backward cases: the problem carries the forward's saved rstd (its bytes and its FLOPs
  // count it); bytes() and flops() read only whether the pointer is set.
  static const float saved_rstd = 0.0f;
  sb::rmsnorm_backward::Problem p;
  p.rows = s.rows;
  p.hidden = s.hidden;
  p.dtype = dtype;
  p.rstd = &saved_rstd;
  return {static_cast<double>(p.bytes()), p.flops()};
}

void register_rmsnorm_family(const std::string& op, const std::vector<RmsNormShape>& shapes,
                             const std::vector<DType>& dtypes) {
  register_grid(op, shapes, dtypes, impls_of(op),
                [op](const RmsNormShape& shape, DType dtype, const PyImpl&, Mode mode, const std::string&,
                     const std::string& case_name) {
                  const auto [bytes, flops] = rmsnorm_family_counts(op, shape, dtype);
                  return [=](benchmark::State& st) { run_python_case(st, mode, case_name, bytes, flops); };
                });
}

// As bench_attention names and counts its cases: attention/<impl>/<dtype>/<workload>/<shape>/<mode>; GB/s of
// K and V at decode shapes, of Q, K, V and O at prefill shapes.
void register_attention(const std::vector<AttentionShape>& shapes, const std::vector<DType>& dtypes) {
  for (const AttentionShape& shape : shapes)
    for (DType dtype : dtypes)
      for (const PyImpl& impl : impls_of("attention")) {
        const sb::attention::Problem p = problem_of(dims_of(shape), dtype);
        const double bytes = static_cast<double>(shape.decode() ? p.kv_bytes() : p.bytes()), flops = p.flops();
        const std::string base = "attention/" + impl.name + "/" + std::string(sb::name(dtype)) + "/" +
                                 shape.workload() + "/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name,
                        [=](benchmark::State& st) { run_python_case(st, mode, case_name, bytes, flops); });
        }
      }
}

// As bench_attention names and counts its paged cases: attention/<impl>/<dtype>/decode/<paged shape>/<mode>, in
// the bytes and FLOPs of the sequences' own keys.
void register_paged_attention(const std::vector<PagedShape>& shapes, const std::vector<DType>& dtypes) {
  for (const PagedShape& shape : shapes)
    for (DType dtype : dtypes) {
      const std::pair<double, double> work = useful_work(shape, dtype);
      for (const PyImpl& impl : impls_of("paged_attention")) {
        const std::string base =
            "attention/" + impl.name + "/" + std::string(sb::name(dtype)) + "/decode/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name,
                        [=](benchmark::State& st) { run_python_case(st, mode, case_name, work.first, work.second); });
        }
      }
    }
}

// As bench_e2e names and counts its layer cases: e2e/<impl>/<dtype>/<prefill|decode>/<shape>/<mode>, the layer's
// least bytes and FLOPs (layer_shapes.h).
void register_layer(const std::vector<LayerShape>& shapes, const std::vector<DType>& dtypes) {
  for (const LayerShape& shape : shapes)
    for (DType dtype : dtypes) {
      const double bytes = static_cast<double>(shape.bytes(dtype)), flops = shape.flops();
      for (const PyImpl& impl : impls_of("e2e")) {
        const std::string base =
            "e2e/" + impl.name + "/" + std::string(sb::name(dtype)) + "/" + shape.workload() + "/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name,
                        [=](benchmark::State& st) { run_python_case(st, mode, case_name, bytes, flops); });
        }
      }
    }
}

void register_cases(const Options& opt) {
  if (opt.split_sweep_all) throw UsageError("--split-sweep is bench_attention's (decode_splitk's split counts)");
  if (opt.keep_inputs_gib >= 0)
    throw UsageError("--keep-inputs is the C++ binaries'; bench_torch keeps the inputs of one shape at a time");
  const PyShapes shapes = parse_pybench_shapes(opt.shapes.empty() ? "default" : opt.shapes);
  // The Python rows' launch floor (cases.py's PYTHON_LAUNCH_FLOOR), beside bench_main's C++ floors.
  for (Mode mode : {Mode::cold, Mode::hot}) {
    const std::string case_name = std::string("floor/python_launch/") + mode_name(mode);
    register_case(case_name, [=](benchmark::State& st) { run_python_case(st, mode, case_name, 0, 0); });
  }
  for (const char* op : {"rmsnorm", "fused_add_rmsnorm", "rmsnorm_backward"})
    register_rmsnorm_family(op, shapes.rmsnorm, opt.dtypes);
  register_attention(shapes.attention, opt.dtypes);
  register_paged_attention(shapes.paged, opt.dtypes);
  register_layer(shapes.layer, opt.dtypes);
}

std::string shapes_grammar() {
  return "                  bench_torch reads every grammar: each item of SPEC is an RMSNorm shape or set\n"
         "                  (for the rmsnorm, fused_add_rmsnorm and rmsnorm_backward cases), an attention\n"
         "                  shape or set (for the attention cases), or both (the sets both have: default,\n"
         "                  anchors, smoke, edge), a paged decode shape or set (the paged_attention\n"
         "                  rows), a decoder-layer shape or set (the e2e rows). An item none reads is an\n"
         "                  error.\n"
         "                  RMSNorm:\n" +
         rmsnorm_shapes_grammar() + "                  Attention:\n" + attention_shapes_grammar() +
         paged_shapes_grammar() + "                  Decoder layer (the e2e cases):\n" + layer_shapes_grammar();
}

}  // namespace

// Adds implementation `impl` to op `op` (rmsnorm, fused_add_rmsnorm, rmsnorm_backward, attention,
// paged_attention: the rows at paged shapes, named attention/<impl>/...; e2e: the decoder layer): its cases are
// registered for every shape and dtype of the run. Before solbench_pybench_main. Returns 0, or 2 for an unknown op,
// an empty name or one with '/' (the reason in msg).
SB_EXPORT int solbench_pybench_add_impl(const char* op, const char* impl, char* msg, size_t msg_len) {
  const std::string o = op ? op : "", name = impl ? impl : "";
  bool known = false;
  for (const char* k : kOps) known = known || o == k;
  if (!known) {
    write_message("unknown op '" + o + "'", msg, msg_len);
    return kUnsupported;
  }
  if (name.empty() || name.find('/') != std::string::npos) {
    write_message("implementation name '" + name + "' is empty or has '/'", msg, msg_len);
    return kUnsupported;
  }
  g_impls[o].push_back(name);
  return kOk;
}

// A run-context entry of the driver's (Python, triton and PyTorch versions, the operator library), recorded after
// the harness's own. Before solbench_pybench_main.
SB_EXPORT void solbench_pybench_add_context(const char* key, const char* value) {
  g_context.emplace_back(key ? key : "", value ? value : "");
}

// A counter of the case whose setup callback is running (compile time, recompiles). Returns 0, or 1 outside a
// setup call.
SB_EXPORT int solbench_pybench_counter(const char* name, double value) {
  if (!g_setup_counters || !name) return kFailed;
  g_setup_counters->emplace_back(name, value);
  return kOk;
}

// The libtorch this library was built against (TORCH_VERSION, e.g. "2.11.0"): the driver refuses a Python whose
// torch is another, since the two would not share PyTorch's current stream.
SB_EXPORT const char* solbench_pybench_torch_version() { return sb::torch_ref::version(); }

// --shapes=SPEC as bench_torch reads it (parse_pybench_shapes), as JSON: {"rmsnorm": [{"name": ..., "rows": ...,
// "hidden": ...}, ...], "attention": [{"name": ..., "workload": ..., "batch": ..., ...}, ...]}. Writes it (or, for
// a malformed SPEC, the reason) to out (len bytes, NUL-terminated). Returns 0, 2 for a malformed SPEC, or 1 when
// the text needs more than len bytes (*needed: the bytes it needs).
SB_EXPORT int solbench_pybench_shapes(const char* spec, char* out, size_t len, size_t* needed) {
  std::string text;
  int rc = kOk;
  try {
    text = pybench_shapes_json(parse_pybench_shapes(spec ? spec : ""));
  } catch (const UsageError& e) {
    text = e.what();
    rc = kUnsupported;
  }
  if (needed) *needed = text.size() + 1;
  if (!out || len < text.size() + 1) return kFailed;
  std::snprintf(out, len, "%s", text.c_str());
  return rc;
}

// bench_main with the implementations added and the two callbacks: flags, listing (no GPU needed), the GPU check
// (77 without one), the ceilings, the run context, the cases. Returns bench_main's exit status.
SB_EXPORT int solbench_pybench_main(int argc, char** argv, SetupFn setup, LaunchCallback launch) {
  if (!setup || !launch) {
    std::fprintf(stderr, "bench_torch: error: solbench_pybench_main needs both callbacks\n");
    return kUsageExit;
  }
  g_setup = setup;
  g_launch = launch;
  try {
    return bench_main(argc, argv,
                      {"bench_torch", shapes_grammar(), sb::torch_ref::version(), register_cases, [] { return g_context; }});
  } catch (const std::exception& e) {  // nothing may unwind into ctypes
    std::fprintf(stderr, "bench_torch: error: %s\n", e.what());
    return 1;
  }
}
