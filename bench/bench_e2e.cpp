// End-to-end benchmarks: one Llama-style decoder layer (layer.h) run with PyTorch's
// RMSNorm and attention and with solbench's, everything else (projections, RoPE, the KV cache write,
// SiLU, residual adds) the same PyTorch ops, over layer shapes x dtypes x {cold, hot}. It answers what the
// kernels of this suite buy inside a model, where the projections take most of the time. Built only with
// libtorch: the layer is PyTorch.
// Case names: e2e/<impl>/<dtype>/<prefill|decode>/h.._hq.._hkv.._d.._f.._b.._q.._kv../<mode>, impl one of
// solbench, solbench_norms and solbench_attention (ours in part), torch_eager, torch_sdpa_flash and
// ref_rest_of_layer (the layer without its norms and attention: a reference). Decode is reported in GB/s
// of the layer's least traffic (its weights, the KV cache, the input and output: LayerShape::bytes),
// prefill in TFLOP/s of its projections and attention.
// ref_rest_of_layer carries what it moves and computes (LayerShape::rest_bytes, projection_flops); the
// report shows its time only, which is what it is for: a layer's time less its own.
// With --shapes naming them (train, train_<config>, smoke: train_config.h), bf16 only, also one training
// step of a Llama-style model with PyTorch's RMSNorm and with ours (train_bench.h): e2e/train_step/<impl>/
// bf16/<config>/cold, impl torch or solbench. The default set leaves them out: the 1b config's step takes
// most of an 80 GB GPU and a minute or two of the run for a different question (what our norms buy in
// training throughput) from the layer's.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/gbench.h"
#include "harness/resident.h"
#include "layer_shapes.h"
#include "ref/torch/torch_attention.h"
#include "ref/torch/torch_baselines.h"
#include "layer.h"
#include "train_bench.h"
#include "train_config.h"
#include "verify.h"

namespace sb::bench {
namespace {

// Each implementation's check at each (shape, dtype), keyed by layer_key + "/" + its name: one verification,
// kept for every repetition.
std::map<std::string, Check> verified;

std::string layer_key(const LayerShape& shape, DType dtype) { return shape.name() + std::string(name(dtype)); }

// Whether an implementation that runs this layer is still to be verified: only then are its references
// worth keeping across a rebuild.
bool verification_pending(const Layer& layer, const std::string& key) {
  for (const LayerImpl impl : kLayerImpls)
    if (!*layer.supports(impl) && !verified.count(key + "/" + layer_impl_name(impl))) return true;
  return false;
}

// The resident layers, once layer_for has made them (drop_layers empties it).
ResidentSet<Layer>* resident_layers = nullptr;

// The layer of (shape, dtype); Unsupported with the reason when it cannot be built (fp32, or PyTorch out of
// memory). Layers stay resident within --keep-inputs' budget (harness/resident.h): the interleaved repetitions
// run a shape's cases far apart, and with one layer kept at a time nearly every repetition would rebuild its
// weights and caches, which takes longer than the timed calls. A layer dropped while one of its
// implementations is unverified leaves its references on the host (a fingerprint of its weights and inputs
// with them) for the layer rebuilt from the same seed to adopt, so that they are computed once per shape. A
// layer that does not fit beside the others is built again after all are dropped.
Layer& layer_for(const LayerShape& shape, DType dtype, double keep_inputs_gib) {
  static std::map<std::string, std::shared_ptr<LayerReferences>> references;
  static ResidentSet<Layer> layers(resident_budget(keep_inputs_gib, kResidentShare), [](const std::string& key, Layer& layer) {
    if (verification_pending(layer, key))
      references[key] = layer.take_references(env().stream.get());
    else
      references.erase(key);
  });
  resident_layers = &layers;
  const std::string k = layer_key(shape, dtype);
  if (Layer* kept = layers.find(k)) return *kept;
  const std::size_t bytes = shape.bytes(dtype);
  for (int attempt = 0;; ++attempt) {
    layers.make_room(bytes);
    torch_ref::release_cached_memory();
    try {
      auto layer = std::make_unique<Layer>(shape, dtype, std::hash<std::string>{}(k), env().stream.get());
      if (const auto known = references.find(k); known != references.end())
        layer->adopt_references(std::move(known->second), env().stream.get());
      return *layers.insert(k, std::move(layer), bytes);
    } catch (const std::invalid_argument& e) {  // fp32: no layer to build
      throw Unsupported(e.what());
    } catch (const std::exception& e) {
      if (attempt == 0 && layers.size() > 0) {  // out of memory beside the resident layers: again, alone
        layers.clear();
        continue;
      }
      throw Unsupported(e.what());
    }
  }
}

// Drops every resident layer (their references kept as layer_for keeps them) and returns PyTorch's cached
// blocks to the device: what a training case does when its model does not fit beside them.
void drop_layers() {
  if (resident_layers) resident_layers->clear();
  torch_ref::release_cached_memory();
}

void timed_call(const char* refusal) {
  if (*refusal) throw Unsupported(std::string("PyTorch refused the timed call: ") + refusal);
}

void register_cases(const Options& opt) {
  if (opt.split_sweep_all) throw UsageError("--split-sweep is bench_attention's (decode_splitk's split counts)");
  const std::string spec = opt.shapes.empty() ? "default" : opt.shapes;
  const std::vector<LayerShape> shapes = parse_layer_shapes(spec);
  const double keep_inputs_gib = opt.keep_inputs_gib;
  for (const LayerShape& shape : shapes) {
    for (DType dtype : opt.dtypes) {
      for (const LayerImpl impl : kLayerImpls) {
        const std::string impl_name = layer_impl_name(impl);
        const std::string base =
            "e2e/" + impl_name + "/" + std::string(name(dtype)) + "/" + shape.workload() + "/" + shape.name();
        for (Mode mode : {Mode::cold, Mode::hot}) {
          const std::string case_name = base + "/" + mode_name(mode);
          register_case(case_name, [=](benchmark::State& st) {
            Layer* layer = &layer_for(shape, dtype, keep_inputs_gib);
            if (const std::string no = layer->supports(impl); !no.empty()) throw Unsupported(no);
            const std::string verified_key = layer_key(shape, dtype) + "/" + impl_name;
            auto it = verified.find(verified_key);
            if (it == verified.end()) {
              const char* refused = "";
              const LayerCheck lc = layer->verify(impl, env().stream.get(), &refused);
              Check c;
              if (*refused) {
                c.message = std::string("skipped: PyTorch refused: ") + refused;
              } else {
                c.ok = lc.ok;
                c.err = lc.err;
                c.message = "max |out - ref32| " + std::to_string(lc.max_abs_err) + " against a tolerance of " +
                            std::to_string(lc.tolerance) +
                            (impl == LayerImpl::ref_rest_of_layer ? " (2^-5 max |ref32|)"
                                                                  : " (2 max |ref_same - ref32| + 1e-5)") +
                            (*lc.nan_in ? std::string("; NaN in ") + lc.nan_in : std::string());
              }
              it = verified.emplace(verified_key, c).first;
            }
            const Check& c = it->second;
            if (c.message.rfind("skipped: ", 0) == 0) throw Unsupported(c.message.substr(9));
            if (!c.ok) return fail_case(st, case_name, "verification failed: " + c.message);
            Counters counters;
            if (impl == LayerImpl::torch_eager || impl == LayerImpl::solbench_norms) {
              const int backend = layer->sdpa_default_backend(env().stream.get());
              counters.push_back({"sdpa_backend", static_cast<double>(backend)});
            }
            if (impl == LayerImpl::solbench || impl == LayerImpl::solbench_attention)
              counters.push_back({"attn_variant", static_cast<double>(layer->attention_variant())});
            const bool reference = impl == LayerImpl::ref_rest_of_layer;
            run_timed(st, mode,
                      Timed{case_name, [layer, impl](cudaStream_t s) { timed_call(layer->forward(impl, s)); },
                            torch_ref::capture_graph,
                            static_cast<double>(reference ? shape.rest_bytes(dtype) : shape.bytes(dtype)),
                            reference ? shape.projection_flops() : shape.flops(), c.err, counters});
          });
        }
      }
    }
  }
  // The training step runs under bf16 autocast only (train_model.h).
  if (std::find(opt.dtypes.begin(), opt.dtypes.end(), DType::bf16) != opt.dtypes.end())
    register_train_cases(train_configs_in_spec(spec), drop_layers);
}

}  // namespace
}  // namespace sb::bench

int main(int argc, char** argv) {
  return sb::bench::bench_main(
      argc, argv, {"bench_e2e", sb::bench::layer_shapes_grammar(), sb::torch_ref::version(), sb::bench::register_cases, {}});
}
