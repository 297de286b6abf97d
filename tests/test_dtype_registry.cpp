// CPU tests of the dtype table and the RMSNorm registry: no GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/dtype.h"
#include "expect.h"
#include "rmsnorm/rmsnorm.h"

namespace sb {
namespace {

TEST(DType, NamesSizesAndParsingRoundTrip) {
  EXPECT_EQ(name(DType::f32), "fp32");
  EXPECT_EQ(name(DType::f16), "fp16");
  EXPECT_EQ(name(DType::bf16), "bf16");
  EXPECT_EQ(size_bytes(DType::f32), 4u);
  EXPECT_EQ(size_bytes(DType::bf16), 2u);
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(name(t)), t);
  EXPECT_FALSE(parse_dtype("float32").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
}

TEST(DType, UnitRoundoffMatchesMantissaWidth) {
  EXPECT_EQ(unit_roundoff(DType::f32), std::ldexp(1.0, -24));  // 23 stored bits + 1
  EXPECT_EQ(unit_roundoff(DType::f16), std::ldexp(1.0, -11));  // 10 + 1
  EXPECT_EQ(unit_roundoff(DType::bf16), std::ldexp(1.0, -8));  // 7 + 1
}

// The registry is the X-macro expansion of variants.def: same names, same order, nothing else.
TEST(RmsNormRegistry, MatchesVariantsDefInOrder) {
  const std::vector<std::string> names = test::variants_def_names(SOLBENCH_SOURCE_DIR "/kernels/rmsnorm/variants.def");
  ASSERT_EQ(names.size(), rmsnorm::variants().size());
  std::set<std::string> unique;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const rmsnorm::Variant& v = rmsnorm::variants()[i];
    EXPECT_EQ(names[i], v.name);
    EXPECT_TRUE(unique.insert(v.name).second) << "duplicate variant " << v.name;
    EXPECT_GT(std::string(v.summary).size(), 10u) << v.name << " needs a summary";
    EXPECT_EQ(&rmsnorm::variant(v.name), &v);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "block_reduce", "warp_shuffle", "vectorized"}));
}

// The message lists the known names: the PyTorch ops pass it on as the answer to a mistyped name.
TEST(RmsNormRegistry, UnknownVariantIsAnErrorListingTheKnownNames) {
  test::expect_throw_naming<std::invalid_argument>(
      [] { rmsnorm::variant("fastest"); },
      "unknown variant 'fastest' (known: naive, block_reduce, warp_shuffle, vectorized)");
}

// best_variant: the last variant in teaching order that supports the problem (vectorized, unless a
// pointer is misaligned for its 16-byte accesses); an invalid problem is an error naming the field.
TEST(RmsNormBestVariant, VectorizedElseTheLastVariantThatSupportsIt) {
  alignas(256) static char buf[256];  // never dereferenced
  rmsnorm::Problem p;
  p.rows = 4096;
  p.hidden = 4096;
  p.dtype = DType::bf16;
  p.x = p.w = p.y = buf;
  EXPECT_STREQ(rmsnorm::best_variant(p).name, "vectorized");
  p.x = buf + 2;
  const rmsnorm::Variant& fallback = rmsnorm::best_variant(p);
  EXPECT_STRNE(fallback.name, "vectorized");
  EXPECT_EQ(fallback.supports(p), "");
  EXPECT_EQ(&fallback, &rmsnorm::variants()[rmsnorm::variants().size() - 2]);
  p.rows = 0;
  test::expect_throw_naming<std::invalid_argument>([&] { rmsnorm::best_variant(p); }, "rows");
}

}  // namespace
}  // namespace sb
