// Fused residual-add + RMSNorm cases of bench_rmsnorm: every variant of kernels/fused_add_rmsnorm/variants.def
// and, with libtorch, the PyTorch eager composite, over bench_rmsnorm's shapes x dtypes x {cold, hot}.
// Case names: fused_add_rmsnorm/<impl>/<dtype>/t<rows>_h<hidden>/<mode>.
// GB/s counts the minimal traffic (4 * rows * hidden + hidden) * sizeof(dtype): x, residual and w read, residual
// and x written (fused_add_rmsnorm::Problem::bytes(): the residual's read and its write both count).
// ref_copy, a reference and not a variant: one cudaMemcpyAsync of x and residual (contiguous) from the kept
// inputs into the working buffers, 4 * rows * hidden * sizeof(dtype) bytes moved: the op's bytes but w's.
// In place: every case verifies its first run from restored inputs, then restores them again before each
// repetition's launches, which then run in place, each on the last one's outputs. The values drift (the residual
// grows by about the norm of x each launch; fp16 reaches Inf after several hundred launches at hidden 4096, and
// NaN follows), but the traffic and the instructions do not: the kernels (and PyTorch's) have no branch on a
// value, and the GPU's fp32 and conversion instructions take the same time for Inf and NaN as for finite values.
#include "fused_add_rmsnorm_bench.h"

#include <functional>
#include <memory>
#include <string>

#include "fused_add_rmsnorm/fused_add_rmsnorm.h"
#include "fused_add_rmsnorm_case.h"
#include "harness/gbench.h"
#include "harness/resident.h"
#ifdef SOLBENCH_HAVE_TORCH
#include "ref/torch/torch_baselines.h"
#include "ref/torch/torch_fused_add_rmsnorm.h"
#endif

namespace sb::bench {
namespace {

struct FusedImpl {
  std::string name;
  std::function<std::string(const fused_add_rmsnorm::Problem&)> supports;
  // The launch that is timed and, run once on restored inputs, verified: it owns what it needs.
  std::function<LaunchFn(const FusedAddRmsNormData&)> make_launch;
  CaptureFn capture = capture_cuda_graph;
  bool copy = false;  // ref_copy: verified as a copy, bytes counted as read + write of x and residual
};

std::vector<FusedImpl> implementations() {
  std::vector<FusedImpl> impls;
  for (const fused_add_rmsnorm::Variant& v : fused_add_rmsnorm::variants())
    impls.push_back({v.name, v.supports, [&v](const FusedAddRmsNormData& d) -> LaunchFn {
                       return [&v, p = d.problem()](cudaStream_t s) { fused_add_rmsnorm::run(v, p, s); };
                     }});
  auto none = [](const fused_add_rmsnorm::Problem&) { return std::string(); };
  impls.push_back({"ref_copy", none, [](const FusedAddRmsNormData& d) { return d.restore_fn(); }, capture_cuda_graph, true});
#ifdef SOLBENCH_HAVE_TORCH
  impls.push_back({"torch_eager_composite", none,
                   [](const FusedAddRmsNormData& d) -> LaunchFn {
                     return [p = d.problem()](cudaStream_t s) { torch_ref::fused_add_rms_norm_eager(p, s); };
                   },
                   torch_ref::capture_graph});
#endif
  return impls;
}

// As bench_rmsnorm's: the inputs of (shape, dtype) resident within --keep-inputs' budget.
FusedAddRmsNormData& data_for(const RmsNormShape& shape, DType dtype, double keep_inputs_gib) {
  static ResidentSet<FusedAddRmsNormData> inputs(resident_budget(keep_inputs_gib, kResidentShare));
  // The inputs and the working buffers (2 x 2 * rows * hidden) and w: Problem::bytes() to the element.
  const std::size_t bytes = fused_add_rmsnorm::Problem{shape.rows, shape.hidden, 1e-6, dtype}.bytes();
  return inputs.find_or_make(shape.name() + std::string(name(dtype)), bytes, [&] {
    const uint64_t seed = (static_cast<uint64_t>(shape.rows) << 20) ^ static_cast<uint64_t>(shape.hidden) ^
                          (static_cast<uint64_t>(dtype) << 40);
    return std::make_unique<FusedAddRmsNormData>(shape.rows, shape.hidden, dtype, 1e-6, seed, env().stream.get());
  });
}

}  // namespace

void register_fused_add_rmsnorm_cases(const Options& opt, const std::vector<RmsNormShape>& shapes) {
  static VerifiedCases verified;
  const double keep_inputs_gib = opt.keep_inputs_gib;
  register_grid(std::string("fused_add_rmsnorm"), shapes, opt.dtypes, implementations(),
                [=](const RmsNormShape& shape, DType dtype, const FusedImpl& impl, Mode mode, const std::string& base,
                    const std::string& case_name) {
    return [=](benchmark::State& st) {
      FusedAddRmsNormData& data = data_for(shape, dtype, keep_inputs_gib);
      const fused_add_rmsnorm::Problem p = data.problem();
      if (const std::string why = impl.supports(p); !why.empty()) throw Unsupported(why);
      cudaStream_t s = env().stream.get();
      const LaunchFn launch = impl.make_launch(data);
      const Check& check = verified.get(base, [&] {
        if (impl.copy)
          data.poison_work();  // the copy must overwrite it
        else
          data.restore(s);
        launch(s);
        return impl.copy ? data.verify_copy() : data.verify();
      });
      if (!check.ok) return fail_case(st, case_name, "verification failed: " + check.message);
      data.restore(s);  // each repetition starts from the inputs (the header says why in place is fine after)
      const double bytes = impl.copy ? 2.0 * static_cast<double>(data.copy_bytes()) : static_cast<double>(p.bytes());
      run_timed(st, mode, Timed{case_name, launch, impl.capture, bytes, impl.copy ? 0.0 : p.flops(), check.err});
    };
  });
}

}  // namespace sb::bench
