// CPU tests of the --shapes grammar and the flag extraction (the bench binaries' exit-2 paths are
// tested end to end by test_bench_cli.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "expect.h"
#include "harness/cli.h"
#include "harness/resident.h"
#include "rmsnorm_shapes.h"

namespace sb::bench {
namespace {

TEST(RmsNormShapes, ExplicitShapesBothSpellings) {
  const auto s = parse_rmsnorm_shapes("4096x8192,t1_h4096,3x7");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (RmsNormShape{4096, 8192}));
  EXPECT_EQ(s[1], (RmsNormShape{1, 4096}));
  EXPECT_EQ(s[2].name(), "t3_h7");
}

TEST(RmsNormShapes, NamedSetsAndDeduplication) {
  const auto anchors = parse_rmsnorm_shapes("anchors");
  EXPECT_EQ(anchors.size(), 7u);
  // Every ANCHORS.md shape is in the default set.
  const auto def = rmsnorm_shape_set("default");
  for (const auto& a : anchors) EXPECT_NE(std::find(def.begin(), def.end(), a), def.end()) << a.name();
  // From one token to at least 64k tokens.
  EXPECT_EQ(std::min_element(def.begin(), def.end(), [](auto& a, auto& b) { return a.rows < b.rows; })->rows, 1);
  EXPECT_GE(std::max_element(def.begin(), def.end(), [](auto& a, auto& b) { return a.rows < b.rows; })->rows, 65536);
  EXPECT_EQ(parse_rmsnorm_shapes("anchors,1x4096,anchors").size(), 7u);
}

// The "edge" set holds the shape classes of the peers' RMSNorm tests (vLLM, FlashInfer, Liger-Kernel, QuACK),
// and parsing it gives it back unchanged (no repeats).
TEST(RmsNormShapes, EdgeSetHoldsThePeersClasses) {
  const auto edge = rmsnorm_shape_set("edge");
  EXPECT_EQ(parse_rmsnorm_shapes("edge"), edge);
  auto has = [&](const char* what, auto pred) {
    EXPECT_TRUE(std::any_of(edge.begin(), edge.end(), pred)) << what;
  };
  has("hidden 1", [](const RmsNormShape& s) { return s.hidden == 1; });
  has("hidden 7", [](const RmsNormShape& s) { return s.hidden == 7; });
  has("odd hidden over 5000", [](const RmsNormShape& s) { return s.hidden % 2 == 1 && s.hidden > 5000; });
  has("hidden 2 mod 8", [](const RmsNormShape& s) { return s.hidden % 8 == 2; });
  has("hidden 4 mod 8", [](const RmsNormShape& s) { return s.hidden % 8 == 4; });
  has("over 256 rows of an odd hidden", [](const RmsNormShape& s) { return s.rows > 256 && s.hidden % 2 == 1; });
  for (int64_t rows : {1, 2, 3, 17})
    has(("a model-sized hidden at " + std::to_string(rows) + " rows").c_str(),
        [&](const RmsNormShape& s) { return s.rows == rows && s.hidden >= 4096; });
  has("one row of 262144", [](const RmsNormShape& s) { return s.rows == 1 && s.hidden == 262144; });
  has("rows of 262144", [](const RmsNormShape& s) { return s.rows > 1 && s.hidden == 262144; });
  has("one row of 2^20", [](const RmsNormShape& s) { return s.rows == 1 && s.hidden == 1048576; });
  has("rows of 2^20", [](const RmsNormShape& s) { return s.rows > 1 && s.hidden == 1048576; });
  has("an odd row near 2^20", [](const RmsNormShape& s) { return s.hidden > 1000000 && s.hidden % 2 == 1; });
  const std::string g = rmsnorm_shapes_grammar();
  EXPECT_NE(g.find("edge"), std::string::npos) << g;
}

TEST(RmsNormShapes, MalformedValuesAreUsageErrors) {
  test::expect_each_throws_naming<UsageError>("--shapes", parse_rmsnorm_shapes, {
      {"", "empty"},
      {",,", "empty"},
      {"4096", "'4096' is neither a shape"},
      {"4096x", "hidden in '4096x'"},
      {"x8192", "rows in 'x8192'"},
      {"0x8192", "out of range"},
      {"4x-8", "is not a positive integer"},
      {"4x8.5", "is not a positive integer"},
      {"4x99999999999999999999", "is not a positive integer"},
      {"4x2000000000", "out of range"},
      {"t4_w8", "neither a shape"},
      {"llama", "neither a shape"}
  });
}

struct Argv {
  explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(args.size());
  }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
  int argc;
};

TEST(Options, OurFlagsAreRemovedOthersKept) {
  Argv a({"bench", "--shapes=1x8", "--benchmark_filter=rmsnorm", "--profile"});
  const Options o = extract_options(&a.argc, a.ptrs.data());
  EXPECT_EQ(o.shapes, "1x8");
  EXPECT_TRUE(o.profile);
  EXPECT_FALSE(o.list_only);
  ASSERT_EQ(a.argc, 2);
  EXPECT_STREQ(a.ptrs[1], "--benchmark_filter=rmsnorm");
  EXPECT_EQ(a.ptrs[2], nullptr);
}

TEST(Options, DtypesDefaultToAllAndKeepTheSuiteOrder) {
  Argv all({"bench"});
  EXPECT_EQ(extract_options(&all.argc, all.ptrs.data()).dtypes, (std::vector<DType>{DType::f32, DType::f16, DType::bf16}));
  Argv some({"bench", "--dtypes=bf16,fp16,bf16"});
  EXPECT_EQ(extract_options(&some.argc, some.ptrs.data()).dtypes, (std::vector<DType>{DType::f16, DType::bf16}));
  EXPECT_EQ(some.argc, 1);
}

TEST(Options, SplitSweepIsAnchorsUnlessAll) {
  Argv none({"bench"});
  EXPECT_FALSE(extract_options(&none.argc, none.ptrs.data()).split_sweep_all);
  Argv anchors({"bench", "--split-sweep=anchors"});
  EXPECT_FALSE(extract_options(&anchors.argc, anchors.ptrs.data()).split_sweep_all);
  Argv all({"bench", "--split-sweep=all"});
  EXPECT_TRUE(extract_options(&all.argc, all.ptrs.data()).split_sweep_all);
  EXPECT_EQ(all.argc, 1);
}

TEST(Options, KeepInputsIsGibOfDeviceMemoryOrTheBinarysShareOfIt) {
  auto gib = [](const char* flag) {
    Argv a({"bench", flag});
    const double v = extract_options(&a.argc, a.ptrs.data()).keep_inputs_gib;
    EXPECT_EQ(a.argc, 1) << flag;
    return v;
  };
  Argv none({"bench"});
  EXPECT_LT(extract_options(&none.argc, none.ptrs.data()).keep_inputs_gib, 0);
  EXPECT_EQ(gib("--keep-inputs=0"), 0.0);
  EXPECT_EQ(gib("--keep-inputs=20"), 20.0);
  EXPECT_EQ(gib("--keep-inputs=0.5"), 0.5);
  EXPECT_EQ(gib("--keep-inputs=.25"), 0.25);
  const std::size_t gib141 = std::size_t{141} << 30;
  EXPECT_EQ(resident_budget_bytes(-1, gib141), gib141 / 3);
  EXPECT_EQ(resident_budget_bytes(0, gib141), 0u);
  EXPECT_EQ(resident_budget_bytes(0.5, gib141), std::size_t{1} << 29);
  EXPECT_EQ(resident_budget_bytes(200, gib141), std::size_t{200} << 30);  // the budget, not what fits
  EXPECT_EQ(resident_budget_bytes(-1, gib141, 0.0), 0u);                // bench_attention's default
  EXPECT_EQ(resident_budget_bytes(2, gib141, 0.0), std::size_t{2} << 30);  // its --keep-inputs
}

TEST(Options, ListTestsIsSeenButLeftForGoogleBenchmark) {
  Argv a({"bench", "--benchmark_list_tests=true"});
  EXPECT_TRUE(extract_options(&a.argc, a.ptrs.data()).list_only);
  EXPECT_EQ(a.argc, 2);
}

// bench_main records in the run context whether Google Benchmark runs the repetitions in random order: the
// flag as Google Benchmark reads it, the last one given winning (bench_main's default, =true, comes first).
TEST(Options, RandomInterleavingIsReadAsGoogleBenchmarkReadsItAndLeftForIt) {
  auto read = [](std::vector<std::string> flags) {
    flags.insert(flags.begin(), "bench");
    Argv a(flags);
    const Options o = extract_options(&a.argc, a.ptrs.data());
    EXPECT_EQ(a.argc, static_cast<int>(flags.size()));  // none of them removed
    return o.random_interleaving;
  };
  EXPECT_FALSE(read({}));
  EXPECT_TRUE(read({"--benchmark_enable_random_interleaving"}));
  for (const char* yes : {"true", "1", "t", "y", "Yes", "TRUE", "on", ""})
    EXPECT_TRUE(read({std::string("--benchmark_enable_random_interleaving=") + yes})) << yes;
  for (const char* no : {"false", "0", "f", "F", "n", "N", "No", "OFF"})
    EXPECT_FALSE(read({std::string("--benchmark_enable_random_interleaving=") + no})) << no;
  EXPECT_FALSE(read({"--benchmark_enable_random_interleaving=true", "--benchmark_enable_random_interleaving=false"}));
  EXPECT_TRUE(read({"--benchmark_enable_random_interleaving=false", "--benchmark_enable_random_interleaving=1"}));
  EXPECT_FALSE(read({"--benchmark_enable_random_interleavingly"}));  // another flag (Google Benchmark rejects it)
}

TEST(Options, MalformedFlagsAreUsageErrors) {
  for (const char* bad : {"--shapes=", "--shapes", "--profile=1", "--dtypes", "--dtypes=", "--dtypes=,", "--dtypes=bf8",
                          "--dtypes=bf16,half", "--split-sweep", "--split-sweep=", "--split-sweep=decode", "--keep-inputs",
                          "--keep-inputs=", "--keep-inputs=-1", "--keep-inputs=+2", "--keep-inputs=2G", "--keep-inputs=nan",
                          "--keep-inputs=inf", "--keep-inputs= 2", "--keep-inputs=1e300"}) {
    Argv a({"bench", bad});
    EXPECT_THROW(extract_options(&a.argc, a.ptrs.data()), UsageError) << bad;
  }
}

}  // namespace
}  // namespace sb::bench
