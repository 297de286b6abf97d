// Attention benchmarks: every variant of kernels/attention/variants.def and, with libtorch, PyTorch's
// SDPA with each backend forced and the manual composite, over shapes x dtypes x {cold, hot}.
// Case names: attention/<impl>/<dtype>/<prefill|decode>/b.._hq.._hkv.._d.._q.._kv..[_causal]/<mode>.
// Prefill is reported in TFLOP/s (AttentionProblem::flops(): 4 * head_dim per unmasked pair); decode
// in GB/s of K + V (kv_bytes()), the traffic that bounds it.
#include <algorithm>
#include <map>
#include <memory>

#include "attention/attention.h"
#include "attention_case.h"
#include "attention_shapes.h"
#include "common/check.h"
#include "harness/gbench.h"
#ifdef SOLBENCH_HAVE_TORCH
#include "ref/torch/torch_attention.h"
#include "ref/torch/torch_baselines.h"
#endif

namespace sb::bench {
namespace {

using ProblemFn = std::function<void(const attention::Problem&, cudaStream_t)>;

struct Impl {
  std::string name;
  std::function<std::string(const attention::Problem&)> supports;
  std::function<std::size_t(const attention::Problem&)> workspace_bytes;
  ProblemFn launch;                                                   // what is timed
  std::function<std::string(const attention::Problem&, cudaStream_t)> write_o;  // verified; "" or a refusal
  CaptureFn capture = capture_cuda_graph;
};

std::vector<Impl> implementations() {
  std::vector<Impl> impls;
  for (const attention::Variant& v : attention::variants()) {
    auto run = [&v](const attention::Problem& p, cudaStream_t s) { attention::run(v, p, s); };
    impls.push_back({v.name, v.supports, v.workspace_bytes, run,
                     [run](const attention::Problem& p, cudaStream_t s) {
                       run(p, s);
                       return std::string();
                     }});
  }
#ifdef SOLBENCH_HAVE_TORCH
  auto none = [](const attention::Problem&) { return std::string(); };
  auto no_workspace = [](const attention::Problem&) { return std::size_t{0}; };
  for (torch_ref::SdpaBackend b : {torch_ref::SdpaBackend::flash, torch_ref::SdpaBackend::efficient,
                                   torch_ref::SdpaBackend::cudnn, torch_ref::SdpaBackend::math}) {
    impls.push_back({torch_ref::sdpa_backend_name(b), none, no_workspace,
                     [b](const attention::Problem& p, cudaStream_t s) { torch_ref::sdpa(p, b, s, false); },
                     [b](const attention::Problem& p, cudaStream_t s) { return std::string(torch_ref::sdpa(p, b, s, true)); },
                     torch_ref::capture_graph});
  }
  impls.push_back({"torch_manual_composite", none, no_workspace,
                   [](const attention::Problem& p, cudaStream_t s) { torch_ref::manual_composite(p, s, false); },
                   [](const attention::Problem& p, cudaStream_t s) {
                     return std::string(torch_ref::manual_composite(p, s, true));
                   },
                   torch_ref::capture_graph});
#endif
  return impls;
}

AttentionDims dims_of(const AttentionShape& s) {
  return {s.batch, s.heads_q, s.heads_kv, s.head_dim, s.q_len, s.kv_len, s.causal};
}

// Inputs and references live while consecutive cases share (shape, dtype); the workspace is sized for
// the hungriest implementation that supports the shape. A shape that does not fit in the free device
// memory is null with the reason in *why (a skip, not a failure).
AttentionData* data_for(const AttentionShape& shape, DType dtype, const std::vector<Impl>& impls, std::string* why) {
  static std::unique_ptr<AttentionData> data;
  static std::string key;
  const std::string k = shape.name() + std::string(name(dtype));
  if (!data || key != k) {
    data.reset();
    key.clear();
#ifdef SOLBENCH_HAVE_TORCH
    torch_ref::release_cached_memory();  // what the previous shape's PyTorch baselines kept
#endif
    const std::size_t tensors = 2 * static_cast<std::size_t>(shape.batch * shape.heads_q * shape.q_len * shape.head_dim) +
                                2 * static_cast<std::size_t>(shape.batch * shape.heads_kv * shape.kv_len * shape.head_dim);
    std::size_t free_bytes = 0, total = 0;
    SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    if (tensors * size_bytes(dtype) > free_bytes) {
      *why = "Q, K, V and O need " + std::to_string((tensors * size_bytes(dtype)) >> 20) + " MiB, " +
             std::to_string(free_bytes >> 20) + " MiB free";
      return nullptr;
    }
    data = std::make_unique<AttentionData>(dims_of(shape), dtype, std::hash<std::string>{}(k), env().stream.get());
    key = k;
    const attention::Problem p = data->problem();
    std::size_t workspace = 0;
    for (const Impl& i : impls)
      if (i.supports(p).empty()) workspace = std::max(workspace, i.workspace_bytes(p));
    data->reserve_workspace(workspace);
  }
  return data.get();
}

void register_cases(const Options& opt) {
  const std::vector<AttentionShape> shapes = parse_attention_shapes(opt.shapes.empty() ? "default" : opt.shapes);
  static const std::vector<Impl> impls = implementations();
  static std::map<std::string, Check> verified;  // one verification per impl x dtype x shape
  for (const AttentionShape& shape : shapes) {
    for (DType dtype : kAllDTypes) {
      for (const Impl& impl : impls) {
        const std::string base = "attention/" + impl.name + "/" + std::string(name(dtype)) + "/" + shape.workload() +
                                 "/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name, [=, &impl](benchmark::State& st) {
            std::string no_room;
            AttentionData* data = data_for(shape, dtype, impls, &no_room);
            if (!data) return skip_unsupported(st, no_room);
            const attention::Problem p = data->problem();
            if (const std::string why = impl.supports(p); !why.empty()) return skip_unsupported(st, why);
            auto it = verified.find(base);
            if (it == verified.end()) {
              data->poison_output();
              Check c;
              if (const std::string refused = impl.write_o(p, env().stream.get()); !refused.empty()) {
                c.message = "skipped: " + refused;
              } else {
                c = data->verify();
              }
              it = verified.emplace(base, c).first;
            }
            const Check& c = it->second;
            if (c.message.rfind("skipped: ", 0) == 0) return skip_unsupported(st, c.message.substr(9));
            if (!c.ok) return fail_case(st, case_name, "verification failed: " + c.message);
            const double bytes = static_cast<double>(shape.decode() ? p.kv_bytes() : p.bytes());
            run_timed(st, mode,
                      Timed{case_name, [launch = impl.launch, p](cudaStream_t s) { launch(p, s); }, impl.capture, bytes,
                            p.flops(), c.err});
          });
        }
      }
    }
  }
}

}  // namespace
}  // namespace sb::bench

int main(int argc, char** argv) {
  sb::bench::BenchSpec spec;
  spec.binary = "bench_attention";
  spec.shapes_grammar = sb::bench::attention_shapes_grammar();
#ifdef SOLBENCH_HAVE_TORCH
  spec.torch_version = sb::torch_ref::version();
#endif
  spec.register_cases = sb::bench::register_cases;
  return sb::bench::bench_main(argc, argv, spec);
}
