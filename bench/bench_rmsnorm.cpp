// RMSNorm benchmarks: every variant of kernels/rmsnorm/variants.def and, with libtorch, the PyTorch
// baselines, over shapes x dtypes x {cold, hot}. Case names: rmsnorm/<impl>/<dtype>/t<rows>_h<hidden>/<mode>.
// The backward's cases (rmsnorm_backward/...) come from bench_rmsnorm_backward.cpp.
// GB/s counts the minimal traffic (2 * rows * hidden + hidden) * sizeof(dtype) (RmsNormProblem::bytes()).
// ref_copy, a reference and not a variant: cudaMemcpyAsync of x into y (2 * rows * hidden * sizeof(dtype)
// bytes), timed the same way at every shape: the speed of light a kernel of that shape can reach under
// the same protocol (launch floor and cold flush included), where the copy ceiling is a 1 GiB copy.
// ref_copy_kernel: the same copy by a plain kernel of 16-byte loads and stores (harness/fill.h), since
// in a CUDA graph (hot mode) a memcpy node may run on a copy engine instead: what a kernel pays to move
// these bytes, launch included (the hot floor of the decode shapes).
// The fused residual-add + RMSNorm cases (fused_add_rmsnorm/...) over the same shapes: fused_add_rmsnorm_bench.cpp.
#include <memory>

#include "common/check.h"
#include "fused_add_rmsnorm_bench.h"
#include "harness/fill.h"
#include "harness/gbench.h"
#include "harness/resident.h"
#include "rmsnorm/rmsnorm.h"
#include "rmsnorm_backward_case.h"
#include "rmsnorm_case.h"
#include "rmsnorm_shapes.h"
#ifdef SOLBENCH_HAVE_TORCH
#include "ref/torch/torch_baselines.h"
#endif

namespace sb::bench {
namespace {

using ProblemFn = std::function<void(const rmsnorm::Problem&, cudaStream_t)>;

struct Impl {
  std::string name;
  std::function<std::string(const rmsnorm::Problem&)> supports;
  ProblemFn launch;     // what is timed
  ProblemFn write_y;    // what is verified: the same computation, leaving its result in problem.y
  CaptureFn capture = capture_cuda_graph;
  bool copy = false;    // ref_copy: y = x, verified as a copy, bytes counted as read x + write y
};

std::size_t x_bytes(const rmsnorm::Problem& p) {
  return static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(p.hidden) * size_bytes(p.dtype);
}

std::vector<Impl> implementations() {
  std::vector<Impl> impls;
  for (const rmsnorm::Variant& v : rmsnorm::variants()) {
    auto run = [&v](const rmsnorm::Problem& p, cudaStream_t s) { rmsnorm::run(v, p, s); };
    impls.push_back({v.name, v.supports, run, run});
  }
  auto none = [](const rmsnorm::Problem&) { return std::string(); };
  auto copy = [](const rmsnorm::Problem& p, cudaStream_t s) {
    SB_CUDA_CHECK(cudaMemcpyAsync(p.y, p.x, x_bytes(p), cudaMemcpyDeviceToDevice, s));
  };
  impls.push_back({"ref_copy", none, copy, copy, capture_cuda_graph, true});
  auto copy_by_kernel = [](const rmsnorm::Problem& p, cudaStream_t s) { copy_kernel(p.y, p.x, x_bytes(p), s); };
  impls.push_back({"ref_copy_kernel", none, copy_by_kernel, copy_by_kernel, capture_cuda_graph, true});
#ifdef SOLBENCH_HAVE_TORCH
  impls.push_back({"torch_rms_norm", none,
                   [](const rmsnorm::Problem& p, cudaStream_t s) { torch_ref::rms_norm(p, s, false); },
                   [](const rmsnorm::Problem& p, cudaStream_t s) { torch_ref::rms_norm(p, s, true); },
                   torch_ref::capture_graph});
  impls.push_back({"torch_composite", none,
                   [](const rmsnorm::Problem& p, cudaStream_t s) { torch_ref::rms_norm_composite(p, s, false); },
                   [](const rmsnorm::Problem& p, cudaStream_t s) { torch_ref::rms_norm_composite(p, s, true); },
                   torch_ref::capture_graph});
#endif
  return impls;
}

// The inputs of (shape, dtype), resident within --keep-inputs' budget (harness/resident.h): the interleaved
// repetitions run a shape's cases far apart, and with one shape's inputs kept at a time nearly every
// repetition would rebuild them.
RmsNormData& data_for(const RmsNormShape& shape, DType dtype, double keep_inputs_gib) {
  static ResidentSet<RmsNormData> inputs(resident_budget(keep_inputs_gib, kResidentShare));
  const std::size_t bytes = rmsnorm::Problem{shape.rows, shape.hidden, 1e-6, dtype}.bytes();  // x, w and y
  return inputs.find_or_make(shape.name() + std::string(name(dtype)), bytes, [&] {
    const uint64_t seed = static_cast<uint64_t>(shape.rows) * 1000003u ^ static_cast<uint64_t>(shape.hidden) * 7919u ^
                          static_cast<uint64_t>(dtype);
    return std::make_unique<RmsNormData>(shape.rows, shape.hidden, dtype, 1e-6, seed, env().stream.get());
  });
}

void register_cases(const Options& opt) {
  if (opt.split_sweep_all) throw UsageError("--split-sweep is bench_attention's (decode_splitk's split counts)");
  const std::vector<RmsNormShape> shapes = parse_rmsnorm_shapes(opt.shapes.empty() ? "default" : opt.shapes);
  static VerifiedCases verified;
  const double keep_inputs_gib = opt.keep_inputs_gib;
  register_grid(std::string("rmsnorm"), shapes, opt.dtypes, implementations(),
                [=](const RmsNormShape& shape, DType dtype, const Impl& impl, Mode mode, const std::string& base,
                    const std::string& case_name) {
    return [=](benchmark::State& st) {
      RmsNormData& data = data_for(shape, dtype, keep_inputs_gib);
      const rmsnorm::Problem p = data.problem();
      if (const std::string why = impl.supports(p); !why.empty()) throw Unsupported(why);
      const Check& check = verified.get(base, [&] {
        data.poison_output();
        impl.write_y(p, env().stream.get());
        return impl.copy ? data.verify_copy() : data.verify();
      });
      if (!check.ok) return fail_case(st, case_name, "verification failed: " + check.message);
      const double bytes = impl.copy ? 2.0 * static_cast<double>(x_bytes(p)) : static_cast<double>(p.bytes());
      run_timed(st, mode,
                Timed{case_name, [launch = impl.launch, p](cudaStream_t s) { launch(p, s); }, impl.capture,
                      bytes, impl.copy ? 0.0 : p.flops(), check.err});
    };
  });
  register_rmsnorm_backward_cases(opt);
  register_fused_add_rmsnorm_cases(opt, shapes);  // fused_add_rmsnorm/...: bench/fused_add_rmsnorm_bench.cpp
}

}  // namespace
}  // namespace sb::bench

int main(int argc, char** argv) {
#ifdef SOLBENCH_HAVE_TORCH
  const std::string torch_version = sb::torch_ref::version();
#else
  const std::string torch_version;
#endif
  return sb::bench::bench_main(argc, argv, {"bench_rmsnorm", sb::bench::rmsnorm_shapes_grammar(), torch_version, sb::bench::register_cases, {}});
}
