// Attention benchmarks: every variant of kernels/attention/variants.def and, with libtorch, PyTorch's
// SDPA with each backend forced and the manual composite, over shapes x dtypes x {cold, hot}.
// Case names: attention/<impl>/<dtype>/<prefill|decode>/b.._hq.._hkv.._d.._q.._kv..[_causal]/<mode>.
// Prefill is reported in TFLOP/s (AttentionProblem::flops(): 4 * head_dim per unmasked pair); decode
// in GB/s of K + V (kv_bytes()), the traffic that bounds it. At decode shapes, ref_kv_read, a reference and
// not a variant: a plain kernel that reads K and V once and computes nothing (harness/fill.h), timed the
// same way: what reading the bytes alone costs under the suite's protocol, launch and cold L2 included;
// and ref_kv_stream, the same read in decode_splitk's order and blocks where it does not split KV.
#include <algorithm>
#include <map>
#include <memory>
#include <regex>
#include <utility>
#include <vector>

#include "attention/attention.h"
#include "attention/decode_splitk.h"
#include "attention_case.h"
#include "attention_shapes.h"
#include "common/check.h"
#include "harness/cli.h"
#include "paged_attention/paged_attention.h"
#include "paged_case.h"
#include "paged_shapes.h"
#include "harness/gbench.h"
#include "harness/resident.h"
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
  bool sweep_only = false;  // a num_splits sweep row: registered at the sweep shapes only
  std::function<Counters(const attention::Problem&)> counters = nullptr;  // added to its cases
  bool decode_only = false;  // registered at decode shapes only
  // Its own verification in place of write_o and the attention reference (a reference that writes no O).
  std::function<Check(const attention::Problem&, cudaStream_t)> check = nullptr;
  bool is_reference() const { return name.rfind("ref_", 0) == 0; }
};

// decode_splitk's split count: the heuristic's (0) or forced, as recorded in the `splits` counter.
attention::Problem with_splits(attention::Problem p, int64_t n) {
  p.num_splits = n;
  return p;
}

// The num_splits sweep: decode_splitk forced to each of these split counts, at the ANCHORS.md decode
// shapes in bf16 (--split-sweep=all: at every decode shape and dtype of the run), cold only, so the report
// can set the heuristic's choice against the best one.
constexpr int64_t kSweepSplits[] = {1, 2, 4, 8, 16, 32, 64, 128};

bool is_sweep_case(const AttentionShape& shape, DType dtype, bool everywhere) {
  static const std::vector<AttentionShape> anchors = parse_attention_shapes("anchors");
  if (!shape.decode()) return false;
  if (everywhere) return true;
  if (dtype != DType::bf16) return false;
  for (const AttentionShape& a : anchors)
    if (a.name() == shape.name()) return true;
  return false;
}

#ifdef SOLBENCH_HAVE_TORCH
// A PyTorch call that refuses while being timed (out of memory in a graph capture, say) did no work:
// the case becomes a skip with PyTorch's reason instead of a time for nothing.
void timed_call(const char* refusal) {
  if (*refusal) throw Unsupported(std::string("PyTorch refused the timed call: ") + refusal);
}
#endif

std::vector<Impl> implementations() {
  std::vector<Impl> impls;
  for (const attention::Variant& v : attention::variants()) {
    auto run = [&v](const attention::Problem& p, cudaStream_t s) { attention::run(v, p, s); };
    impls.push_back({v.name, v.supports, v.workspace_bytes, run,
                     [run](const attention::Problem& p, cudaStream_t s) {
                       run(p, s);
                       return std::string();
                     }});
    if (!(v.traits & attention::kTakesNumSplits)) continue;
    // The split count its plan runs (decode_splitk's: the one variant that splits KV).
    auto splits = [](const attention::Problem& p) {
      return Counters{{"splits", static_cast<double>(attention::decode_splitk::make_plan(p, env().device.sm_count).num_splits)}};
    };
    impls.back().counters = splits;
    for (const int64_t n : kSweepSplits) {
      auto forced = [&v, n](const attention::Problem& p, cudaStream_t s) { attention::run(v, with_splits(p, n), s); };
      Impl sweep{std::string(v.name) + "_s" + std::to_string(n),
                 v.supports,
                 [&v, n](const attention::Problem& p) { return v.workspace_bytes(with_splits(p, n)); },
                 forced,
                 [forced](const attention::Problem& p, cudaStream_t s) {
                   forced(p, s);
                   return std::string();
                 }};
      sweep.sweep_only = true;
      sweep.counters = [splits, n](const attention::Problem& p) { return splits(with_splits(p, n)); };
      impls.push_back(std::move(sweep));
    }
  }
#ifdef SOLBENCH_HAVE_TORCH
  auto none = [](const attention::Problem&) { return std::string(); };
  auto no_workspace = [](const attention::Problem&) { return std::size_t{0}; };
  for (torch_ref::SdpaBackend b : {torch_ref::SdpaBackend::flash, torch_ref::SdpaBackend::efficient,
                                   torch_ref::SdpaBackend::cudnn, torch_ref::SdpaBackend::math}) {
    impls.push_back({torch_ref::sdpa_backend_name(b), none, no_workspace,
                     [b](const attention::Problem& p, cudaStream_t s) { timed_call(torch_ref::sdpa(p, b, s, false)); },
                     [b](const attention::Problem& p, cudaStream_t s) { return std::string(torch_ref::sdpa(p, b, s, true)); },
                     torch_ref::capture_graph});
  }
  impls.push_back({"torch_manual_composite", none, no_workspace,
                   [](const attention::Problem& p, cudaStream_t s) { timed_call(torch_ref::manual_composite(p, s, false)); },
                   [](const attention::Problem& p, cudaStream_t s) {
                     return std::string(torch_ref::manual_composite(p, s, true));
                   },
                   torch_ref::capture_graph});
#endif
  Impl read{"ref_kv_read", kv_read_supports, kv_read_workspace_bytes, launch_kv_read, nullptr};
  read.decode_only = true;
  read.check = check_kv_read;
  impls.push_back(std::move(read));
  Impl stream{"ref_kv_stream", kv_stream_supports, kv_stream_workspace_bytes, launch_kv_stream, nullptr};
  stream.decode_only = true;
  stream.check = check_kv_stream;
  impls.push_back(std::move(stream));
  return impls;
}

// The inputs of (shape, dtype), with a workspace sized for the hungriest implementation that supports the
// shape; a shape that does not fit in the free device memory throws Unsupported with the reason (a skip, not
// a failure). By default only the running shape's inputs are kept (--keep-inputs=GIB keeps others resident,
// harness/resident.h): keeping more buys no time, and PyTorch's baselines at the largest prefill shapes (the
// manual composite asks for 32 GiB at once) need the memory. Inputs dropped leave their fp64 reference on
// the host (AttentionData::take_reference) for the inputs rebuilt from the same seed to adopt
// (adopt_reference keeps it only for inputs with the same word sums): the interleaved repetitions rebuild
// a shape's inputs once per implementation, and computing the reference again each time would take more
// than the timed calls.
AttentionData& data_for(const AttentionShape& shape, DType dtype, const std::vector<Impl>& impls,
                        double keep_inputs_gib) {
  static std::map<std::string, AttentionData::Reference> references;
  static ResidentSet<AttentionData> inputs(resident_budget(keep_inputs_gib, 0.0),
                                           [](const std::string& key, AttentionData& data) {
                                             references[key] = data.take_reference();
                                           });
  const std::string k = shape.name() + std::string(name(dtype));
  if (AttentionData* kept = inputs.find(k)) return *kept;
  const std::size_t bytes = problem_of(dims_of(shape), dtype).bytes();  // Q, K, V and O
  std::size_t free_bytes = 0, total = 0;
  for (bool alone : {false, true}) {
    if (alone) inputs.clear();
    inputs.make_room(bytes);
#ifdef SOLBENCH_HAVE_TORCH
    torch_ref::release_cached_memory();  // what the PyTorch baselines kept
#endif
    SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    if (bytes <= free_bytes || inputs.size() == 0) break;
  }
  if (bytes > free_bytes)
    throw Unsupported("Q, K, V and O need " + std::to_string(bytes >> 20) + " MiB, " + std::to_string(free_bytes >> 20) +
                      " MiB free");
  auto data = std::make_unique<AttentionData>(dims_of(shape), dtype, std::hash<std::string>{}(k), env().stream.get());
  if (const auto known = references.find(k); known != references.end()) data->adopt_reference(std::move(known->second));
  const attention::Problem p = data->problem();
  std::size_t workspace = 0;
  for (const Impl& i : impls)
    if (i.supports(p).empty()) workspace = std::max(workspace, i.workspace_bytes(p));
  data->reserve_workspace(workspace);
  return *inputs.insert(k, std::move(data), bytes + workspace);
}

// decode_splitk's launch floor at a decode shape: empty kernels with its plan's grids, clusters and shared
// memory (decode_splitk::launch_floor), cold and hot, as floor/decode_splitk_launch/<dtype>/decode/<shape>.
// Nothing to verify: the kernels do no work. Counters: the plan's splits, the clusters it launches and how
// many of them the GPU holds at once (0 and 0 for a plan without clusters).
void register_launch_floor(const AttentionShape& shape, DType dtype, const std::vector<Impl>& impls,
                           double keep_inputs_gib) {
  namespace ds = attention::decode_splitk;
  // Registered where decode_splitk runs its tensor-core kernel: the dtype rule and the plan's kernel choice
  // need the shape only (Plan::tensor_cores does not depend on the SM count), not a GPU.
  const attention::Problem dims = problem_of(dims_of(shape), dtype);
  if (!ds::supports(dims).empty() || !ds::make_plan(dims, 1).tensor_cores) return;
  for (Mode mode : {Mode::cold, Mode::hot}) {
    const std::string case_name = "floor/decode_splitk_launch/" + std::string(name(dtype)) + "/decode/" +
                                  shape.name() + "/" + mode_name(mode);
    register_case(case_name, [=, &impls](benchmark::State& st) {
      const attention::Problem p = data_for(shape, dtype, impls, keep_inputs_gib).problem();
      if (const std::string why = ds::launch_floor_supports(p); !why.empty()) throw Unsupported(why);
      const ds::Plan plan = ds::make_plan(p, env().device.sm_count);
      const int cluster = ds::cluster_blocks(plan);
      const int64_t clusters = cluster > 0 ? p.batch * p.heads_kv * plan.row_blocks * plan.num_splits / cluster : 0;
      const int active = cluster > 0 ? ds::max_active_clusters(p, cluster) : 0;
      const Counters counters{{"splits", static_cast<double>(plan.num_splits)},
                              {"clusters", static_cast<double>(clusters)},
                              {"max_active_clusters", static_cast<double>(active)}};
      auto floor = [p](cudaStream_t s) { ds::launch_floor(p, s); };
      run_timed(st, mode, Timed{case_name, floor, capture_cuda_graph, 0, 0, 0, counters});
    });
  }
}

// Paged decode (kernels/paged_attention) at the --shapes items written as paged shapes (paged_shapes.h):
// attention/<impl>/<dtype>/decode/<shape>_p<page>_<dist>/<mode>. The rows: every paged variant on the ragged
// batch (bench/paged_case.h: each sequence checked against its own reference), ref_kv_read over the pages the
// sequences own (the bytes floor: each page's owned rows read once, nothing computed), and decode_splitk_padded, our
// contiguous decode_splitk on the batch padded to its longest sequence (what an engine without ragged batches
// reads), verified on its own inputs. Both are counted in the bytes and FLOPs of the sequences' own keys, so
// GB/s and TFLOP/s compare the useful work. At an FP8 shape (_fp8: an e4m3 cache, bench/paged_case.h) the
// paged variants and ref_kv_read run on the e4m3 pools, counted in their bytes; the padded row is left to the
// shape's 16-bit twin.
bool is_paged_item(const std::string& item) {
  static const std::regex paged(R"(.*_p[0-9]+_[a-z]+(_fp8)?)");
  return item == "paged" || std::regex_match(item, paged);
}

// The inputs of one paged (shape, dtype) at a time.
PagedData& paged_data_for(const PagedShape& shape, DType dtype) {
  static std::string key;
  static std::unique_ptr<PagedData> data;
  const std::string k = shape.name() + std::string(name(dtype));
  if (key != k) {
    data.reset();
    key.clear();
    const AttentionShape& d = shape.dims;
    data = std::make_unique<PagedData>(PagedDims{d.heads_q, d.heads_kv, d.head_dim, d.q_len, d.causal}, dtype,
                                       shape.lengths(), shape.page_size, std::hash<std::string>{}(k),
                                       env().stream.get(), shape.kv_cache());
    std::size_t workspace = paged_kv_read_workspace_bytes(data->problem());
    for (const paged_attention::Variant& v : paged_attention::variants())
      if (v.supports(data->problem()).empty()) workspace = std::max(workspace, v.workspace_bytes(data->problem()));
    data->reserve_workspace(workspace);
    key = k;
  }
  return *data;
}

void register_paged(const std::vector<PagedShape>& shapes, const Options& opt, const std::vector<Impl>& impls,
                    VerifiedCases& verified) {
  const Impl* padded = nullptr;
  for (const Impl& i : impls)
    if (i.name == "decode_splitk") padded = &i;
  for (const PagedShape& shape : shapes)
    for (DType dtype : opt.dtypes) {
      const std::string tail = "/" + std::string(name(dtype)) + "/decode/" + shape.name();
      for (const paged_attention::Variant& v : paged_attention::variants()) {
        const std::string base = "attention/" + std::string(v.name) + tail;
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name, [=, &v, &verified](benchmark::State& st) {
            PagedData& data = paged_data_for(shape, dtype);
            const paged_attention::Problem p = data.problem();
            if (const std::string why = v.supports(p); !why.empty()) throw Unsupported(why);
            const Check& c = verified.get(base, [&] {
              data.poison_output();
              paged_attention::run(v, p, env().stream.get());
              return data.verify();
            });
            if (!c.ok) return fail_case(st, case_name, "verification failed: " + c.message);
            run_timed(st, mode,
                      Timed{case_name, [&v, p](cudaStream_t s) { paged_attention::run(v, p, s); }, capture_cuda_graph,
                            static_cast<double>(p.kv_bytes()), p.flops(), c.err, Counters{}});
          });
        }
      }
      const std::string read_base = "attention/ref_kv_read" + tail;
      for (Mode mode : {Mode::cold, Mode::hot}) {
        const std::string case_name = read_base + "/" + mode_name(mode);
        register_case(case_name, [=, &verified](benchmark::State& st) {
          PagedData& data = paged_data_for(shape, dtype);
          const paged_attention::Problem p = data.problem();
          const Check& c = verified.get(read_base, [&] { return data.check_kv_read(); });
          if (!c.ok) return fail_case(st, case_name, "verification failed: " + c.message);
          run_timed(st, mode,
                    Timed{case_name, [p](cudaStream_t s) { launch_paged_kv_read(p, s); }, capture_cuda_graph,
                          static_cast<double>(p.kv_bytes()), 0.0, c.err, Counters{}});
        });
      }
      if (!padded || shape.fp8) continue;  // an FP8 shape's 16-bit comparison is its twin's rows
      const std::string base = "attention/decode_splitk_padded" + tail;
      for (Mode mode : {Mode::cold, Mode::hot}) {
        const std::string case_name = base + "/" + mode_name(mode);
        register_case(case_name, [=, &impls, &verified](benchmark::State& st) {
          const auto [bytes, flops] = useful_work(shape, dtype);  // the ragged batch's own keys
          AttentionData& data = data_for(shape.dims, dtype, impls, opt.keep_inputs_gib);
          const attention::Problem p = data.problem();
          if (const std::string why = padded->supports(p); !why.empty()) throw Unsupported(why);
          const Check& c = verified.get(base, [&] {
            data.poison_output();
            padded->write_o(p, env().stream.get());
            return data.verify();
          });
          if (!c.ok) return fail_case(st, case_name, "verification failed: " + c.message);
          run_timed(st, mode,
                    Timed{case_name, [launch = padded->launch, p](cudaStream_t s) { launch(p, s); }, padded->capture,
                          bytes, flops, c.err, padded->counters ? padded->counters(p) : Counters{}});
        });
      }
    }
}

void register_cases(const Options& opt) {
  std::string attention_spec, paged_spec;
  for (const std::string& item : split_list(opt.shapes.empty() ? "default" : opt.shapes, "--shapes"))
    (is_paged_item(item) ? paged_spec : attention_spec) += (item + ",");
  const std::vector<AttentionShape> shapes =
      attention_spec.empty() ? std::vector<AttentionShape>{} : parse_attention_shapes(attention_spec);
  const std::vector<PagedShape> paged = paged_spec.empty() ? std::vector<PagedShape>{} : parse_paged_shapes(paged_spec);
  static const std::vector<Impl> impls = implementations();
  static VerifiedCases verified;
  const double keep_inputs_gib = opt.keep_inputs_gib;
  for (const AttentionShape& shape : shapes) {
    for (DType dtype : opt.dtypes) {
      for (const Impl& impl : impls) {
        if (impl.sweep_only && !is_sweep_case(shape, dtype, opt.split_sweep_all)) continue;
        if (impl.decode_only && !shape.decode()) continue;
        const std::string base = "attention/" + impl.name + "/" + std::string(name(dtype)) + "/" + shape.workload() +
                                 "/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          if (impl.sweep_only && mode == Mode::hot) continue;  // the sweep compares split counts, cold
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name, [=, &impl](benchmark::State& st) {
            AttentionData& data = data_for(shape, dtype, impls, keep_inputs_gib);
            const attention::Problem p = data.problem();
            if (const std::string why = impl.supports(p); !why.empty()) throw Unsupported(why);
            const Check& c = verified.get(base, [&] {
              data.poison_output();
              if (impl.check) return impl.check(p, env().stream.get());
              if (const std::string refused = impl.write_o(p, env().stream.get()); !refused.empty())
                return Check{false, 0, "skipped: " + refused};
              return data.verify();
            });
            if (c.message.rfind("skipped: ", 0) == 0) throw Unsupported(c.message.substr(9));
            if (!c.ok) return fail_case(st, case_name, "verification failed: " + c.message);
            const double bytes = static_cast<double>(shape.decode() ? p.kv_bytes() : p.bytes());
            run_timed(st, mode,
                      Timed{case_name, [launch = impl.launch, p](cudaStream_t s) { launch(p, s); }, impl.capture, bytes,
                            impl.is_reference() ? 0.0 : p.flops(), c.err,
                            impl.counters ? impl.counters(p) : Counters{}});
          });
        }
      }
      if (shape.decode()) register_launch_floor(shape, dtype, impls, keep_inputs_gib);
    }
  }
  register_paged(paged, opt, impls, verified);
}

}  // namespace
}  // namespace sb::bench

int main(int argc, char** argv) {
#ifdef SOLBENCH_HAVE_TORCH
  const std::string torch_version = sb::torch_ref::version();
#else
  const std::string torch_version;
#endif
  return sb::bench::bench_main(argc, argv,
                               {"bench_attention", sb::bench::attention_shapes_grammar() + sb::bench::paged_shapes_grammar(),
                                torch_version, sb::bench::register_cases, {}});
}
