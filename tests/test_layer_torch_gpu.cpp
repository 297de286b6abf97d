// bench_e2e's decoder layer (bench/layer.h): every implementation of it passes its check against
// the layer in fp32 at small shapes, a layer is ready for its first pass however large the one built
// before it was, and a rebuilt layer adopts its references only from a layer of the same weights and
// inputs. Built only with libtorch (SOLBENCH_HAVE_TORCH).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "attention/attention.h"
#include "attention_case.h"
#include "gpu.h"
#include "harness/device.h"
#include "layer_shapes.h"
#include "ref/torch/torch_attention.h"
#include "layer.h"

namespace sb::bench {
namespace {

void expect_every_layer_passes(Layer& layer, const std::string& what, cudaStream_t stream) {
  for (const LayerImpl impl : kLayerImpls) {
    SCOPED_TRACE(what + " " + layer_impl_name(impl));
    ASSERT_STREQ(layer.supports(impl), "");
    const char* refused = "";
    const LayerCheck c = layer.verify(impl, stream, &refused);
    ASSERT_STREQ(refused, "");
    EXPECT_STREQ(c.nan_in, "");
    EXPECT_TRUE(c.ok) << "max |out - ref32| " << c.max_abs_err << " against " << c.tolerance;
    EXPECT_GT(c.max_abs_err, 0) << "no rounding at all: the check compared a tensor with itself?";
  }
}

TEST(LayerTorch, EveryLayerPassesItsCheckAtTheSmokeShapes) {
  SB_REQUIRE_GPU();
  Stream stream;
  for (const DType dtype : {DType::f16, DType::bf16})
    for (const LayerShape& shape : layer_shape_set("smoke")) {
      Layer layer(shape, dtype, 5, stream.get());
      expect_every_layer_passes(layer, shape.name() + " " + std::string(name(dtype)), stream.get());
    }
}

// Our layer's attention: decode_splitk at decode shapes; at prefill, wgmma_flash where it supports the
// layer's attention (an sm_90 GPU, a build for sm_90a), else tiled_flash: attention_variant() says which.
TEST(LayerTorch, OurLayerRunsTheAttentionVariantItShould) {
  SB_REQUIRE_GPU();
  Stream stream;
  const auto& variants = attention::variants();
  auto index = [&](const char* name) { return static_cast<int>(&attention::variant(name) - variants.data()); };
  for (const LayerShape& shape : layer_shape_set("smoke")) {
    Layer layer(shape, DType::bf16, 5, stream.get());
    SCOPED_TRACE(shape.name());
    if (shape.decode()) {
      EXPECT_EQ(layer.attention_variant(), index("decode_splitk"));
      continue;
    }
    // The layer's prefill attention as a problem (causal, GQA), with stand-in aligned pointers: supports()
    // reads the shape, the dtype, the alignment and the device, never the data.
    alignas(256) static char stand_in[256];
    attention::Problem p = problem_of(
        {shape.batch, shape.heads_q, shape.heads_kv, shape.head_dim, shape.q_len, shape.kv_len, true}, DType::bf16);
    p.q = p.k = p.v = stand_in;
    p.o = stand_in;
    const bool wgmma = attention::variant("wgmma_flash").supports(p).empty();
    EXPECT_EQ(layer.attention_variant(), index(wgmma ? "wgmma_flash" : "tiled_flash"));
  }
}

// A layer's tensors are written on the suite's stream: written on the legacy default stream, which the
// suite's non-blocking stream does not wait for, the next layer after a large one was released would read
// weights still being written on its first pass, and its fp32 reference would come out NaN.
TEST(LayerTorch, ALayerBuiltAfterALargerOneIsReadyForItsFirstPass) {
  SB_REQUIRE_GPU();
  Stream stream;
  {
    Layer big({4096, 32, 8, 128, 14336, 64, 1, 16384}, DType::bf16, 1, stream.get());
    const char* refused = "";
    EXPECT_TRUE(big.verify(LayerImpl::torch_eager, stream.get(), &refused).ok);
    ASSERT_STREQ(refused, "");
  }
  torch_ref::release_cached_memory();
  Layer next({8192, 64, 8, 128, 28672, 1, 1, 32768}, DType::bf16, 2, stream.get());
  const char* refused = "";
  const LayerCheck c = next.verify(LayerImpl::torch_eager, stream.get(), &refused);
  ASSERT_STREQ(refused, "");
  EXPECT_STREQ(c.nan_in, "");
  EXPECT_TRUE(c.ok) << "max |out - ref32| " << c.max_abs_err << " against " << c.tolerance;
}

// bench_e2e keeps a layer's references while it rebuilds the layer (layer_for): a layer rebuilt from the
// same seed adopts them, after a pass that overwrote its caches' new-token positions, and every
// implementation passes against them; a layer from another seed refuses them and computes its own.
TEST(LayerTorch, ReferencesAreKeptOnlyForTheSameWeightsAndInputs) {
  SB_REQUIRE_GPU();
  Stream stream;
  for (const LayerShape& shape : layer_shape_set("smoke")) {
    SCOPED_TRACE(shape.name());
    std::shared_ptr<LayerReferences> references;
    {
      Layer first(shape, DType::bf16, 5, stream.get());
      EXPECT_EQ(first.take_references(stream.get()), nullptr);  // none before verify()
      expect_every_layer_passes(first, "first", stream.get());
      references = first.take_references(stream.get());
      ASSERT_NE(references, nullptr);
      EXPECT_EQ(first.take_references(stream.get()), nullptr);  // moved out
    }
    Layer same(shape, DType::bf16, 5, stream.get());
    ASSERT_STREQ(same.forward(LayerImpl::solbench, stream.get()), "");
    EXPECT_TRUE(same.adopt_references(references, stream.get()));
    expect_every_layer_passes(same, "the same seed", stream.get());
    Layer other(shape, DType::bf16, 6, stream.get());
    EXPECT_FALSE(other.adopt_references(references, stream.get()));
    expect_every_layer_passes(other, "another seed", stream.get());
    EXPECT_FALSE(other.adopt_references(nullptr, stream.get()));
  }
}

TEST(LayerTorch, Fp32IsRefusedWithTheReason) {
  SB_REQUIRE_GPU();
  Stream stream;
  try {
    Layer layer(layer_shape_set("smoke")[0], DType::f32, 1, stream.get());
    FAIL() << "an fp32 layer was built";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sb::bench
