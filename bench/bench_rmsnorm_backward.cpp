// RMSNorm backward benchmarks, registered in bench_rmsnorm: every variant of kernels/rmsnorm_backward/variants.def
// and, with libtorch, PyTorch's autograd backward, over bench_rmsnorm's shapes x dtypes x {cold, hot}. Case
// names: rmsnorm_backward/<impl>/<dtype>/t<rows>_h<hidden>/<mode>. The problem carries the forward's saved
// rstd (fp32), as a training step has it. GB/s counts the minimal traffic
// (3 * rows * hidden + 2 * hidden) * sizeof(dtype) + 4 * rows (rmsnorm_backward::Problem::bytes()).
// torch_autograd: torch::autograd::grad of at::rms_norm's output on one forward graph (retain_graph), the
// backward alone with autograd's host work (ref/torch/torch_rmsnorm_backward.h).
// ref_copy: 1.5 * rows * hidden elements copied by cudaMemcpyAsync, 3 * rows * hidden * sizeof(dtype) bytes read
// and written (copy_reference), timed the same way: the speed of light a kernel of that shape can reach.
#include <memory>

#include "harness/gbench.h"
#include "harness/resident.h"
#include "rmsnorm_backward/rmsnorm_backward.h"
#include "rmsnorm_backward_case.h"
#include "rmsnorm_shapes.h"
#ifdef SOLBENCH_HAVE_TORCH
#include "ref/torch/torch_baselines.h"
#include "ref/torch/torch_rmsnorm_backward.h"
#endif

namespace sb::bench {
namespace {

using BackwardFn = std::function<void(const rmsnorm_backward::Problem&, cudaStream_t)>;

struct Impl {
  std::string name;
  std::function<std::string(const rmsnorm_backward::Problem&)> supports;
  BackwardFn launch;   // what is timed
  BackwardFn write;    // what is verified: the same computation, leaving dx and dw in the problem's buffers
  CaptureFn capture = capture_cuda_graph;
  bool copy = false;   // ref_copy: verified as a copy, bytes copy_reference_bytes()
};

std::vector<Impl> implementations() {
  std::vector<Impl> impls;
  for (const rmsnorm_backward::Variant& v : rmsnorm_backward::variants()) {
    auto run = [&v](const rmsnorm_backward::Problem& p, cudaStream_t s) { rmsnorm_backward::run(v, p, s); };
    impls.push_back({v.name, v.supports, run, run});
  }
  auto none = [](const rmsnorm_backward::Problem&) { return std::string(); };
  impls.push_back({"ref_copy", none, copy_reference, copy_reference, capture_cuda_graph, true});
#ifdef SOLBENCH_HAVE_TORCH
  impls.push_back({"torch_autograd", none,
                   [](const rmsnorm_backward::Problem& p, cudaStream_t s) { torch_ref::rms_norm_backward_autograd(p, s, false); },
                   [](const rmsnorm_backward::Problem& p, cudaStream_t s) { torch_ref::rms_norm_backward_autograd(p, s, true); },
                   torch_ref::capture_graph});
#endif
  return impls;
}

// The inputs of (shape, dtype), resident within --keep-inputs' budget, as bench_rmsnorm's forward inputs.
RmsNormBackwardData& data_for(const RmsNormShape& shape, DType dtype, double keep_inputs_gib) {
  static ResidentSet<RmsNormBackwardData> inputs(resident_budget(keep_inputs_gib, kResidentShare));
  const std::string k = shape.name() + std::string(name(dtype));
  if (RmsNormBackwardData* kept = inputs.find(k)) return *kept;
  rmsnorm_backward::Problem size{shape.rows, shape.hidden, 1e-6, dtype};
  const std::size_t bytes = size.bytes() + rmsnorm_backward::workspace_bytes(size) + 4 * shape.rows;
  inputs.make_room(bytes);
  const uint64_t seed = static_cast<uint64_t>(shape.rows) * 1000003u ^ static_cast<uint64_t>(shape.hidden) * 7919u ^
                        static_cast<uint64_t>(dtype) ^ 0xbacc;
  return *inputs.insert(k,
                        std::make_unique<RmsNormBackwardData>(shape.rows, shape.hidden, dtype, 1e-6, seed, true,
                                                              env().stream.get()),
                        bytes);
}

}  // namespace

void register_rmsnorm_backward_cases(const Options& opt) {
  const std::vector<RmsNormShape> shapes = parse_rmsnorm_shapes(opt.shapes.empty() ? "default" : opt.shapes);
  static VerifiedCases verified;
  const double keep_inputs_gib = opt.keep_inputs_gib;
  register_grid(std::string("rmsnorm_backward"), shapes, opt.dtypes, implementations(),
                [=](const RmsNormShape& shape, DType dtype, const Impl& impl, Mode mode, const std::string& base,
                    const std::string& case_name) {
    return [=](benchmark::State& st) {
      RmsNormBackwardData& data = data_for(shape, dtype, keep_inputs_gib);
      const rmsnorm_backward::Problem p = data.problem();
      if (const std::string why = impl.supports(p); !why.empty()) throw Unsupported(why);
      const Check& check = verified.get(base, [&] {
        data.poison_outputs();
        impl.write(p, env().stream.get());
        return impl.copy ? data.verify_copy() : data.verify();
      });
      if (!check.ok) return fail_case(st, case_name, "verification failed: " + check.message);
      run_timed(st, mode,
                Timed{case_name, [launch = impl.launch, p](cudaStream_t s) { launch(p, s); }, impl.capture,
                      impl.copy ? copy_reference_bytes(p) : static_cast<double>(p.bytes()),
                      impl.copy ? 0.0 : p.flops(), check.err});
    };
  });
}

}  // namespace sb::bench
