// CPU tests of the attention problem: validation messages, the unmasked-pair count behind flops()
// (bottom-right causal), bytes, the registry, and the manual and wgmma_flash variants' refusals. No GPU
// needed.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "attention/attention.h"
#include "attention/wgmma_flash.h"
#include "attention_shapes.h"
#include "common/device.h"
#include "expect.h"

namespace sb::attention {
namespace {

alignas(256) char fake[256];  // never dereferenced: validation fails first

#ifndef SB_BUILT_FOR_SM90A
#define SB_BUILT_FOR_SM90A 0
#endif

Problem valid() {
  Problem p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.head_dim = 64;
  p.q_len = 16;
  p.kv_len = 16;
  p.q = p.k = p.v = fake;
  p.o = fake;
  return p;
}

void expect_invalid(const Problem& p, const std::string& field) {
  test::expect_throw_naming<std::invalid_argument>([&] { p.validate(); }, field);
  for (const Variant& v : variants()) EXPECT_THROW(run(v, p, nullptr), std::invalid_argument) << v.name;
}

TEST(AttentionProblem, BadProblemsNameTheField) {
  const std::pair<int64_t Problem::*, const char*> sizes[] = {
      {&Problem::batch, "batch"}, {&Problem::heads_q, "heads_q"}, {&Problem::heads_kv, "heads_kv"},
      {&Problem::head_dim, "head_dim"}, {&Problem::q_len, "q_len"}, {&Problem::kv_len, "kv_len"}};
  for (const auto& [field, name] : sizes) {
    Problem p = valid();
    p.*field = 0;
    expect_invalid(p, std::string(name) + " must be >= 1, got 0");
  }
  Problem p = valid();
  p = valid();
  p.heads_q = 6;
  p.heads_kv = 4;
  expect_invalid(p, "heads_q (6) must be a multiple of heads_kv (4)");
  p = valid();
  p.scale = -1;
  expect_invalid(p, "scale");
  p = valid();
  p.k = nullptr;
  expect_invalid(p, "k is null");
  p = valid();
  p.dtype = static_cast<DType>(9);
  expect_invalid(p, "dtype");
}

TEST(AttentionProblem, UnmaskedPairsBottomRightCausal) {
  Problem p = valid();
  p.q_len = p.kv_len = 4;
  EXPECT_EQ(p.unmasked_pairs(), 16);
  p.causal = true;
  EXPECT_EQ(p.unmasked_pairs(), 1 + 2 + 3 + 4);  // square: the lower triangle with the diagonal
  p.q_len = 2;
  p.kv_len = 5;  // offset 3: row 0 sees keys 0..3, row 1 sees 0..4
  EXPECT_EQ(p.unmasked_pairs(), 4 + 5);
  p.q_len = 1;
  p.kv_len = 4096;  // decode: the one query sees the whole cache
  EXPECT_EQ(p.unmasked_pairs(), 4096);
  p.q_len = 5;
  p.kv_len = 3;  // offset -2: rows 0 and 1 see nothing, rows 2..4 see 1, 2, 3 keys
  EXPECT_EQ(p.unmasked_pairs(), 0 + 0 + 1 + 2 + 3);
}

TEST(AttentionProblem, FlopsAndBytes) {
  Problem p = valid();  // b2 hq8 hkv2 d64 q16 kv16, bf16
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 64 * 2 * 8 * 16 * 16);
  p.causal = true;
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 64 * 2 * 8 * (16 * 17 / 2));
  EXPECT_EQ(p.kv_bytes(), 2u * 2 * 16 * 2 * 64 * 2);           // K and V: b * kv_len * heads_kv * d
  EXPECT_EQ(p.bytes(), 2u * 2 * 16 * 8 * 64 * 2 + p.kv_bytes());  // plus Q and O
  EXPECT_DOUBLE_EQ(p.softmax_scale(), 0.125);
  p.scale = 0.5;
  EXPECT_DOUBLE_EQ(p.softmax_scale(), 0.5);
}

TEST(AttentionRegistry, NamesAndUnknown) {
  ASSERT_FALSE(variants().empty());
  EXPECT_STREQ(variants().front().name, "manual");
  EXPECT_THROW(variant("flash4"), std::invalid_argument);
  for (const Variant& v : variants())
    EXPECT_NE(v.traits & (kForDecode | kForPrefill), kForDecode | kForPrefill) << v.name << ": made for one workload";
}

// best_variant, the pick for a caller with no preference: decode_splitk at decode, wgmma_flash at prefill
// where it runs (an sm_90 GPU and a build for sm_90a) and tiled_flash elsewhere; a problem the variants made
// for its workload refuse goes to the others; none supporting it, or an invalid problem, is an error.
TEST(AttentionBestVariant, DecodeRunsTheDecodeVariant) {
  Problem p = valid();
  p.dtype = DType::bf16;
  p.head_dim = 128;
  p.q_len = 1;
  p.kv_len = 4097;
  ASSERT_TRUE(p.decode());
  EXPECT_STREQ(best_variant(p).name, "decode_splitk");
  p.q_len = 4;  // speculative decoding: a few new tokens
  EXPECT_STREQ(best_variant(p).name, "decode_splitk");
}

TEST(AttentionBestVariant, PrefillRunsWgmmaFlashWhereItRunsElseTiledFlash) {
  Problem p = valid();
  p.dtype = DType::bf16;
  p.head_dim = 128;
  p.q_len = p.kv_len = 4096;
  p.causal = true;
  ASSERT_FALSE(p.decode());
  const bool hopper = variant("wgmma_flash").supports(p).empty();
  EXPECT_STREQ(best_variant(p).name, hopper ? "wgmma_flash" : "tiled_flash");
  p.k = fake + 8;  // neither flash kernel takes a misaligned K; manual, with a cuBLAS handle, does
  p.cublas = reinterpret_cast<cublasHandle_t>(fake);
  p.q_len = p.kv_len = 64;
  EXPECT_STREQ(best_variant(p).name, "manual");
}

TEST(AttentionBestVariant, AShapeNoFlashKernelTakesFallsBackToACorrectPath) {
  Problem p = valid();  // head_dim 64
  p.dtype = DType::f32;  // no tensor-core variant takes fp32
  p.cublas = reinterpret_cast<cublasHandle_t>(fake);
  EXPECT_STREQ(best_variant(p).name, "manual");
  p.q_len = 1;
  p.kv_len = 33;
  EXPECT_STREQ(best_variant(p).name, "manual");
  // A tiny prefill of head_dim 256 (tiled_flash and wgmma_flash: 64 or 128) goes to decode_splitk, which
  // takes up to 8 query rows against any key count.
  p = valid();
  p.dtype = DType::f16;
  p.head_dim = 256;
  p.q_len = p.kv_len = 8;
  p.causal = true;
  EXPECT_STREQ(best_variant(p).name, "decode_splitk");
}

// Every shape of bench_attention's "edge" set in every dtype has the auto-dispatch's fast path: decode_splitk
// for 16-bit decode, a flash kernel for 16-bit prefill, manual (cuBLAS, here a stand-in handle) for fp32; the
// GPU tests run every variant over the set.
TEST(AttentionBestVariant, EveryEdgeShapeHasAPath) {
  for (const bench::AttentionShape& s : bench::attention_shape_set("edge"))
    for (DType t : kAllDTypes) {
      Problem p = valid();
      p.batch = s.batch, p.heads_q = s.heads_q, p.heads_kv = s.heads_kv, p.head_dim = s.head_dim;
      p.q_len = s.q_len, p.kv_len = s.kv_len, p.causal = s.causal;
      p.dtype = t;
      p.cublas = reinterpret_cast<cublasHandle_t>(fake);
      const std::string what = s.name() + " " + std::string(name(t));
      const Variant* v = nullptr;
      EXPECT_NO_THROW(v = &best_variant(p)) << what;
      if (!v) continue;
      EXPECT_EQ(v->supports(p), "") << v->name << " " << what;
      const std::string got = v->name;
      const std::string want = t == DType::f32 ? "manual" : p.decode() ? "decode_splitk" : "a flash kernel";
      EXPECT_TRUE(got == want || (want == "a flash kernel" && (got == "tiled_flash" || got == "wgmma_flash")))
          << got << ", not " << want << ": " << what;
    }
}

TEST(AttentionBestVariant, NoVariantOrAnInvalidProblemIsAnError) {
  Problem p = valid();
  p.dtype = DType::f32;  // and no cuBLAS handle for manual
  for (const Variant& v : variants())
    test::expect_throw_naming<std::invalid_argument>([&] { best_variant(p); }, std::string(v.name) + ": ");
  test::expect_throw_naming<std::invalid_argument>([&] { best_variant(p); }, "needs a cuBLAS handle");
  p = valid();
  p.heads_kv = 3;
  test::expect_throw_naming<std::invalid_argument>([&] { best_variant(p); }, "heads_q");
}

TEST(AttentionManual, RefusesWithoutHandleOrOverBudget) {
  const Variant m = variant("manual");  // a copy: GCC 13 -Wdangling-reference flags a reference here
  Problem p = valid();
  EXPECT_NE(m.supports(p).find("cuBLAS handle"), std::string::npos);
  p.cublas = reinterpret_cast<cublasHandle_t>(fake);
  EXPECT_EQ(m.supports(p), "");
  // The ANCHORS.md prefill that PyTorch's manual path cannot hold: 1 x 32 heads x 16384^2 scores.
  p.batch = 1;
  p.heads_q = p.heads_kv = 32;
  p.head_dim = 128;
  p.q_len = p.kv_len = 16384;
  EXPECT_NE(m.supports(p).find("over the"), std::string::npos) << m.supports(p);
  // A workspace that is too small is an error, not a fault.
  p = valid();
  p.cublas = reinterpret_cast<cublasHandle_t>(fake);
  p.workspace = fake;
  p.workspace_size = 16;
  test::expect_throw_naming<std::invalid_argument>([&] { run(m, p, nullptr); }, "needed");
}

// wgmma_flash: what the problem asks for is refused first, naming it; then the hardware: a build
// without sm_90a code, or no sm_90 GPU, is a refusal with that reason, never a launch (SB_BUILT_FOR_SM90A
// mirrors the kernels' own flag: tests/CMakeLists.txt).
TEST(AttentionWgmmaFlash, RefusalsNameTheReason) {
  const Variant w = variant("wgmma_flash");
  Problem p = valid();
  p.dtype = DType::f32;
  EXPECT_NE(w.supports(p).find("fp32"), std::string::npos) << w.supports(p);
  p.dtype = DType::bf16;
  p.head_dim = 96;
  EXPECT_NE(w.supports(p).find("head_dim 96"), std::string::npos) << w.supports(p);
  p.head_dim = 128;
  p.k = fake + 8;
  EXPECT_NE(w.supports(p).find("k is not 16-byte aligned"), std::string::npos) << w.supports(p);
  p.k = fake;
  // A batch entry of K past 2^40 bytes (2^29 keys x 8,192 kv heads x 128 x 2 B = 2^50): over the tensor
  // map's stride limit.
  Problem big = p;
  big.q_len = big.kv_len = int64_t{1} << 29;
  big.heads_q = big.heads_kv = 8192;
  EXPECT_NE(w.supports(big).find("2^40 bytes"), std::string::npos) << w.supports(big);
  // Q's too (the persistent kernel copies it by TMA): 2^29 query rows x 8,192 heads x 128 x 2 B, 64 keys.
  big.kv_len = 64;
  EXPECT_NE(w.supports(big).find("2^40 bytes"), std::string::npos) << w.supports(big);
  const std::string why = w.supports(p);
  int devices = 0, major = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  (void)cudaGetLastError();
  if (devices > 0) cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (!SB_BUILT_FOR_SM90A)
    EXPECT_NE(why.find("not built for sm_90a"), std::string::npos) << why;
  else if (devices == 0)
    EXPECT_NE(why.find("none is visible"), std::string::npos) << why;
  else if (major != 9)
    EXPECT_NE(why.find("needs an sm_90 GPU"), std::string::npos) << why;
  else
    EXPECT_EQ(why, "");
}

// common/device.h's cached attributes: the device's own values, read twice alike; without a device (or
// without a driver, as in CI), device_major() is 0 (supports() then refuses with its reason) and
// device_sm_count() throws.
TEST(DeviceAttributes, AreTheDevicesOrRefusedWithoutOne) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  (void)cudaGetLastError();
  if (devices == 0) {
    EXPECT_EQ(device_major(), 0);
    EXPECT_EQ(device_major(), 0);
    EXPECT_THROW(device_sm_count(), CudaError);
    (void)cudaGetLastError();
    return;
  }
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(device_major(), prop.major);
    EXPECT_EQ(device_sm_count(), prop.multiProcessorCount);
  }
}

// wgmma_flash's warpgroups a block: two at head_dim 128; three at 64 but for causal problems shorter than
// the measured crossover (wgmma_flash.h), where the 192-row tile's diagonal and tail waste lose.
TEST(AttentionWgmmaFlash, WarpgroupsFollowHeadDimAndCausalLength) {
  Problem p = valid();
  p.head_dim = 128;
  for (bool causal : {false, true})
    for (int64_t len : {1, 512, 2047, 2048, 16384}) {
      p.causal = causal;
      p.q_len = p.kv_len = len;
      EXPECT_EQ(wgmma_flash::warpgroups(p), 2) << "d128 causal " << causal << " len " << len;
    }
  p.head_dim = 64;
  p.causal = false;
  for (int64_t len : {1, 512, 1024, 2048, 16384}) {
    p.q_len = p.kv_len = len;
    EXPECT_EQ(wgmma_flash::warpgroups(p), 3) << "d64 unmasked len " << len;
  }
  p.causal = true;
  for (int64_t len : {int64_t{1}, int64_t{512}, int64_t{1024}, wgmma_flash::kThreeWarpgroupMinCausalLen - 1}) {
    p.q_len = p.kv_len = len;
    EXPECT_EQ(wgmma_flash::warpgroups(p), 2) << "d64 causal len " << len;
  }
  for (int64_t len : {wgmma_flash::kThreeWarpgroupMinCausalLen, int64_t{16384}}) {
    p.q_len = p.kv_len = len;
    EXPECT_EQ(wgmma_flash::warpgroups(p), 3) << "d64 causal len " << len;
  }
  // The rule reads the query length: a short causal chunk against a long cache keeps two.
  p.q_len = 1024;
  p.kv_len = 65536;
  EXPECT_EQ(wgmma_flash::warpgroups(p), 2);
}

// The K/V tiles of 128 keys one head's Q tiles visit, counted by hand.
TEST(AttentionWgmmaFlash, KvTilesPerHeadCountsTheVisibleTiles) {
  Problem p = valid();
  p.head_dim = 64;
  p.causal = false;
  p.q_len = 1100;  // three warpgroups: 6 Q tiles of 192 rows
  p.kv_len = 1025;  // 9 K/V tiles (the last has one key)
  ASSERT_EQ(wgmma_flash::warpgroups(p), 3);
  EXPECT_EQ(wgmma_flash::kv_tiles_per_head(p), 6 * 9);
  // Causal, q_len == kv_len, two warpgroups (128-row Q tiles): Q tile m sees keys up to 128 m + 127, that
  // is m + 1 tiles: 1 + 2 + 3 + 4.
  p.causal = true;
  p.q_len = p.kv_len = 512;
  ASSERT_EQ(wgmma_flash::warpgroups(p), 2);
  EXPECT_EQ(wgmma_flash::kv_tiles_per_head(p), 10);
  // Causal, three warpgroups (2,100 rows: 11 Q tiles of 192, the last of 180): tile m's last row is
  // min(192 m + 191, 2099), which sees keys up to itself: ceil((row + 1) / 128) tiles:
  // 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17 = 102.
  p.q_len = p.kv_len = 2100;
  ASSERT_EQ(wgmma_flash::warpgroups(p), 3);
  EXPECT_EQ(wgmma_flash::kv_tiles_per_head(p), 102);
  // Bottom-right, q_len < kv_len: 300 rows against 1,000 keys, row i sees keys up to i + 700; tiles 0-2
  // (rows 0-127, 128-255, 256-299) end at keys 827, 955, 999: 7, 8, 8 tiles (of 8).
  p.q_len = 300;
  p.kv_len = 1000;
  ASSERT_EQ(wgmma_flash::warpgroups(p), 2);
  EXPECT_EQ(wgmma_flash::kv_tiles_per_head(p), 7 + 8 + 8);
  // q_len > kv_len: 600 rows against 100 keys, row i sees keys up to i - 500; tiles 0-2 (rows up to 127,
  // 255, 383) see none, tile 3 (rows 384-511) keys up to 11 and tile 4 (512-599) up to 99: one tile each.
  p.q_len = 600;
  p.kv_len = 100;
  EXPECT_EQ(wgmma_flash::kv_tiles_per_head(p), 2);
}

// wgmma_flash's persistent blocks: from kPersistentMinWaves work items an SM, where an item visits at most
// kPersistentMaxMeanTiles K/V tiles on average at head_dim 64 (two or three warpgroups),
// kPersistentMaxMeanTilesD128 at 128; never past 2^31 - 1 items or without an SM count.
TEST(AttentionWgmmaFlash, PersistentWithEnoughShortItems) {
  constexpr int kSms = 132;
  Problem p = valid();  // batch 2, 8 q heads
  p.head_dim = 64;
  p.causal = true;
  p.q_len = p.kv_len = 512;  // 4 tiles of 128 rows: 4 x 8 x 2 = 64 items
  EXPECT_EQ(wgmma_flash::work_items(p), 64);
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  p.batch = 33;  // 4 x 8 x 33 = 1,056 items = 8 an SM
  EXPECT_EQ(wgmma_flash::work_items(p), 1056);
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  EXPECT_FALSE(wgmma_flash::persistent(p, 0)) << "no SM count: one block an item";
  // The threshold: kPersistentMinWaves items an SM.
  p.batch = 1;
  p.heads_q = p.heads_kv = wgmma_flash::kPersistentMinWaves * kSms / 4;  // x 4 tiles = the threshold
  EXPECT_EQ(wgmma_flash::work_items(p), int64_t{wgmma_flash::kPersistentMinWaves} * kSms);
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  p.heads_q = p.heads_kv = p.heads_q - 1;
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  // At head_dim 128 too, up to kPersistentMaxMeanTilesD128 tiles an item: causal s512 visits 2.5 on
  // average, s1024 4.5, s2048 8.5; unmasked, kv_len / 128 each.
  p.heads_q = p.heads_kv = 64;
  p.batch = 8;
  ASSERT_TRUE(wgmma_flash::persistent(p, kSms));
  p.head_dim = 128;
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  p.q_len = p.kv_len = 1024;
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  p.q_len = p.kv_len = 2048;
  EXPECT_EQ(wgmma_flash::kv_tiles_per_head(p), 136);  // 16 Q tiles, 8.5 each
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  p.causal = false;
  p.q_len = 512;
  p.kv_len = 128 * wgmma_flash::kPersistentMaxMeanTilesD128;
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  p.kv_len += 1;  // one more tile
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  p.head_dim = 96;  // only 64 and 128 have a kernel
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  p.causal = true;
  p.q_len = p.kv_len = 512;
  // Three warpgroups too: unmasked, and causal from kThreeWarpgroupMinCausalLen rows.
  p.head_dim = 64;
  p.causal = false;
  ASSERT_EQ(wgmma_flash::warpgroups(p), 3);
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  p.causal = true;
  p.q_len = p.kv_len = wgmma_flash::kThreeWarpgroupMinCausalLen;
  ASSERT_EQ(wgmma_flash::warpgroups(p), 3);
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  // The tile rule: unmasked, an item visits every one of kv_len / 128 tiles. 64 an item is the limit.
  p.causal = false;
  p.q_len = 8192;
  p.kv_len = 128 * wgmma_flash::kPersistentMaxMeanTiles;
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  p.kv_len += 1;  // one more tile
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  // Causal, the mean counts: q_len 16,384 visits 65.5 tiles an item on average (one block an item);
  // 8,192 visits 33.2.
  p.causal = true;
  p.q_len = p.kv_len = 16384;
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  p.q_len = p.kv_len = 8192;
  EXPECT_TRUE(wgmma_flash::persistent(p, kSms));
  // A short causal chunk against a long cache: two warpgroups, but each item visits ~512 tiles.
  p.q_len = 1024;
  p.kv_len = 65536;
  ASSERT_EQ(wgmma_flash::warpgroups(p), 2);
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
  // Items are counted in tiles of 128 rows (two warpgroups): a 129-row problem has two a head.
  p.q_len = p.kv_len = 129;
  EXPECT_EQ(wgmma_flash::work_items(p), 2 * 64 * 8);
  // Past 2^31 - 1 items the counter would overflow: one block an item.
  p.q_len = p.kv_len = 2047;  // 16 tiles
  p.heads_q = p.heads_kv = 65535;
  p.batch = 65535;
  EXPECT_GE(wgmma_flash::work_items(p), int64_t{1} << 31);
  EXPECT_FALSE(wgmma_flash::persistent(p, kSms));
}

}  // namespace
}  // namespace sb::attention
