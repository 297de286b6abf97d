// Tests of the fp64 attention reference against values derived by hand (derivations in the comments).
// Layout reminder: Q, O are [batch, q_len, heads_q, head_dim]; K, V are [batch, kv_len, heads_kv, head_dim].
// A recurring trick: with key scores {0, a} the softmax weight of the second key is p = e^a / (1 + e^a),
// so a = 0 -> 1/2, a = ln 3 -> 3/4, a = -ln 3 -> 1/4, a = ln 9 -> 9/10, and O = (1 - p) v0 + p v1.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect.h"
#include "ref/cpu/attention_ref.h"

namespace {

using sb::ref::attention;
using sb::ref::attention_row;
using sb::ref::AttentionRefShape;

const double kLn3 = std::log(3.0);

using sb::test::expect_close;

template <typename F>
void expect_invalid(F call, const std::string& field) {
  sb::test::expect_throw_naming<std::invalid_argument>(call, field);
}

std::vector<double> run(const AttentionRefShape& s, const std::vector<double>& q,
                        const std::vector<double>& k, const std::vector<double>& v) {
  std::vector<double> o(s.batch * s.q_len * s.heads_q * s.head_dim, std::numeric_limits<double>::quiet_NaN());
  attention(s, q.data(), k.data(), v.data(), o.data());
  return o;
}

TEST(RefAttention, SingleKeyGivesExactlyV) {
  // One key: its weight is exp(0) / exp(0) = 1 whatever q, so every query row is exactly v.
  const AttentionRefShape s{1, 1, 1, 3, 2, 1, false, 0.5};
  const std::vector<double> q = {0.3, -2, 7, 1, 1, 1}, k = {5, -1, 2}, v = {1.25, -3, 1e-3};
  EXPECT_EQ(run(s, q, k, v), (std::vector<double>{1.25, -3, 1e-3, 1.25, -3, 1e-3}));
}

TEST(RefAttention, TwoKeysByHand) {
  // q = [1, 0], k0 = [0, 0], k1 = [ln 3, 0], scale 1: scores {0, ln 3}, weights {1/4, 3/4}.
  // v0 = [1, 2], v1 = [5, -2]: O = [1/4 + 15/4, 2/4 - 6/4] = [4, -1].
  const AttentionRefShape s{1, 1, 1, 2, 1, 2, false, 1.0};
  expect_close(run(s, {1, 0}, {0, 0, kLn3, 0}, {1, 2, 5, -2}), {4, -1});
}

TEST(RefAttention, ScaleIsHonoured) {
  // Same data as TwoKeysByHand with k1 = [2 ln 3, 0]. Scale 1/2: scores {0, ln 3} -> [4, -1] again.
  // Scale 1: scores {0, ln 9}, weights {1/10, 9/10} -> O = [0.1 + 4.5, 0.2 - 1.8] = [4.6, -1.6].
  AttentionRefShape s{1, 1, 1, 2, 1, 2, false, 0.5};
  const std::vector<double> q = {1, 0}, k = {0, 0, 2 * kLn3, 0}, v = {1, 2, 5, -2};
  expect_close(run(s, q, k, v), {4, -1});
  s.scale = 1.0;
  expect_close(run(s, q, k, v), {4.6, -1.6});
}

TEST(RefAttention, SoftmaxIsStableForLargeScores) {
  // Scores {1000, 1001}: exp(1000) overflows a double, the max-subtracted form gives weights
  // {1 / (1 + e), e / (1 + e)}. v0 = 0, v1 = 1 -> O = e / (1 + e) = 0.7310585786300049.
  const AttentionRefShape s{1, 1, 1, 1, 1, 2, false, 1.0};
  const double e = std::exp(1.0);
  expect_close(run(s, {1}, {1000, 1001}, {0, 1}), {e / (1 + e)});
  expect_close(run(s, {1}, {1000, 1001}, {0, 1}), {0.7310585786300049});
}

TEST(RefAttention, BshdLayout) {
  // batch 2, q_len 2, heads 2, kv_len 2, head_dim 1, scale 1. Every (b, h) has keys k0 = 0, k1 = 1, so
  // the scores are {0, q} and q in {0, ln 3, -ln 3} picks p in {1/2, 3/4, 1/4} (see the file comment).
  // V flat (b, j, h) = [1, 2, 4, 8, 16, 32, 64, 128], so (v0, v1) per (b, h) is
  // (1, 4), (2, 8), (16, 64), (32, 128).
  // Q flat (b, i, h) below; reading it or O as [b, h, i] would swap (i0, h1) and (i1, h0), which differ.
  //   b0 i0 h0 p 1/2: (1 + 4) / 2 = 2.5        b1 i0 h0 p 1/4: 12 + 16 = 28
  //   b0 i0 h1 p 3/4: 0.5 + 6 = 6.5            b1 i0 h1 p 1/2: (32 + 128) / 2 = 80
  //   b0 i1 h0 p 1/4: 0.75 + 1 = 1.75          b1 i1 h0 p 3/4: 4 + 48 = 52
  //   b0 i1 h1 p 1/2: (2 + 8) / 2 = 5          b1 i1 h1 p 1/4: 24 + 32 = 56
  const AttentionRefShape s{2, 2, 2, 1, 2, 2, false, 1.0};
  const std::vector<double> q = {0, kLn3, -kLn3, 0, -kLn3, 0, kLn3, -kLn3};
  const std::vector<double> k = {0, 0, 1, 1, 0, 0, 1, 1};
  const std::vector<double> v = {1, 2, 4, 8, 16, 32, 64, 128};
  expect_close(run(s, q, k, v), {2.5, 6.5, 1.75, 5, 28, 80, 52, 56});
}

TEST(RefAttention, CausalSquare) {
  // q = 0 gives equal weights over the visible keys, so row i = mean(v0..vi). v = [3, 6, 12]:
  // causal rows [3, 4.5, 7]; without the mask every row is 7.
  AttentionRefShape s{1, 1, 1, 1, 3, 3, true, 1.0};
  const std::vector<double> q = {0, 0, 0}, k = {1, 2, 3}, v = {3, 6, 12};
  expect_close(run(s, q, k, v), {3, 4.5, 7});
  s.causal = false;
  expect_close(run(s, q, k, v), {7, 7, 7});
}

TEST(RefAttention, CausalShorterQueryIsBottomRightAligned) {
  // q_len 2, kv_len 4: row i sees keys j <= i + 2. Row 0 -> mean(1, 2, 6) = 3, row 1 (the last) sees all:
  // mean(1, 2, 6, 11) = 5. Top-left alignment would give [1, 1.5] instead.
  const AttentionRefShape s{1, 1, 1, 1, 2, 4, true, 1.0};
  expect_close(run(s, {0, 0}, {1, 2, 3, 4}, {1, 2, 6, 11}), {3, 5});
}

TEST(RefAttention, CausalLongerQueryMasksFirstRowsToZero) {
  // q_len 4, kv_len 2: row i sees keys j <= i - 2. Rows 0, 1 see none -> exactly 0 (not NaN);
  // row 2 sees v0 = [2, -1]; row 3 sees mean(v0, v1) with v1 = [8, 3] -> [5, 1].
  const AttentionRefShape s{1, 1, 1, 2, 4, 2, true, 1.0};
  const std::vector<double> o = run(s, std::vector<double>(8, 0.0), {1, 1, 2, 2}, {2, -1, 8, 3});
  EXPECT_EQ(std::vector<double>(o.begin(), o.begin() + 4), (std::vector<double>{0, 0, 0, 0}));
  expect_close(std::vector<double>(o.begin() + 4, o.end()), {2, -1, 5, 1});
}

TEST(RefAttention, GroupedQueryHeadsShareKvHeads) {
  // heads_q 4, heads_kv 2: q heads 0, 1 read kv head 0; heads 2, 3 read kv head 1. head_dim 2, kv_len 2,
  // k0 = [0, 0] and k1 = [1, 0] in both kv heads; q head h = [a_h, 0] with a = [0, ln 3, -ln 3, ln 9],
  // so p = [1/2, 3/4, 1/4, 9/10]. kv head 0: v0 = [1, 0], v1 = [0, 1] -> O = [1 - p, p];
  // kv head 1: v0 = [-1, 4], v1 = [3, 0] -> O = [-1 + 4p, 4 - 4p].
  //   h0: [0.5, 0.5]  h1: [0.25, 0.75]  h2: [0, 3]  h3: [2.6, 0.4]
  // The wrong mapping h % heads_kv would send h1 to kv head 1 and h2 to kv head 0.
  const AttentionRefShape s{1, 4, 2, 2, 1, 2, false, 1.0};
  const std::vector<double> q = {0, 0, kLn3, 0, -kLn3, 0, 2 * kLn3, 0};
  const std::vector<double> k = {0, 0, 0, 0, 1, 0, 1, 0};   // [j][hkv][d]
  const std::vector<double> v = {1, 0, -1, 4, 0, 1, 3, 0};  // [j][hkv][d]
  expect_close(run(s, q, k, v), {0.5, 0.5, 0.25, 0.75, 0, 3, 2.6, 0.4});
}

TEST(RefAttention, MultiQueryHeadsShareOneKvHead) {
  // heads_q 3, heads_kv 1, head_dim 1: k = [0, 1], v = [1, 5], q = [0, ln 3, -ln 3] -> p = [1/2, 3/4, 1/4],
  // O = 1 + 4p = [3, 4, 2].
  const AttentionRefShape s{1, 3, 1, 1, 1, 2, false, 1.0};
  expect_close(run(s, {0, kLn3, -kLn3}, {0, 1}, {1, 5}), {3, 4, 2});
}

TEST(RefAttention, RowMatchesFullProblem) {
  // attention_row must reproduce attention()'s slice bit for bit, including masked rows and GQA.
  std::mt19937 gen(1234);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const AttentionRefShape& s :
       {AttentionRefShape{2, 4, 2, 8, 5, 3, true, 0.35}, AttentionRefShape{2, 4, 1, 8, 3, 7, true, 0.35},
        AttentionRefShape{1, 3, 3, 5, 4, 6, false, 0.5}}) {
    std::vector<double> q(s.batch * s.q_len * s.heads_q * s.head_dim);
    std::vector<double> k(s.batch * s.kv_len * s.heads_kv * s.head_dim), v(k.size());
    for (auto* t : {&q, &k, &v})
      for (double& x : *t) x = normal(gen);
    const std::vector<double> o = run(s, q, k, v);
    std::vector<double> row(s.head_dim);
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t i = 0; i < s.q_len; ++i)
        for (int64_t h = 0; h < s.heads_q; ++h) {
          attention_row(s, q.data(), k.data(), v.data(), b, h, i, row.data());
          const auto first = o.begin() + ((b * s.q_len + i) * s.heads_q + h) * s.head_dim;
          EXPECT_EQ(row, std::vector<double>(first, first + s.head_dim)) << b << " " << h << " " << i;
        }
  }
}

TEST(RefAttention, InvalidArgumentsNameTheField) {
  const AttentionRefShape ok{1, 2, 1, 2, 2, 2, true, 0.5};
  const std::vector<double> q(8, 1.0), k(4, 1.0), v(4, 1.0);
  std::vector<double> o(8);
  auto call = [&](const AttentionRefShape& s) { attention(s, q.data(), k.data(), v.data(), o.data()); };
  auto with = [&](auto edit) {
    AttentionRefShape s = ok;
    edit(s);
    return s;
  };
  for (int64_t bad : {0, -1}) {
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.batch = bad; })); }, "batch");
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.heads_q = bad; })); }, "heads_q");
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.heads_kv = bad; })); }, "heads_kv");
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.head_dim = bad; })); }, "head_dim");
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.q_len = bad; })); }, "q_len");
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.kv_len = bad; })); }, "kv_len");
  }
  expect_invalid([&] { call(with([](AttentionRefShape& s) { s.heads_q = 3, s.heads_kv = 2; })); },
                 "heads_kv");
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -0.125, nan, inf})
    expect_invalid([&] { call(with([&](AttentionRefShape& s) { s.scale = bad; })); }, "scale");
  expect_invalid([&] { attention(ok, nullptr, k.data(), v.data(), o.data()); }, "q must");
  expect_invalid([&] { attention(ok, q.data(), nullptr, v.data(), o.data()); }, "k must");
  expect_invalid([&] { attention(ok, q.data(), k.data(), nullptr, o.data()); }, "v must");
  expect_invalid([&] { attention(ok, q.data(), k.data(), v.data(), nullptr); }, "o must");

  auto row = [&](int64_t b, int64_t h, int64_t i, double* out) {
    attention_row(ok, q.data(), k.data(), v.data(), b, h, i, out);
  };
  expect_invalid([&] { row(-1, 0, 0, o.data()); }, "b =");
  expect_invalid([&] { row(1, 0, 0, o.data()); }, "b =");
  expect_invalid([&] { row(0, -1, 0, o.data()); }, "hq =");
  expect_invalid([&] { row(0, 2, 0, o.data()); }, "hq =");
  expect_invalid([&] { row(0, 0, -1, o.data()); }, "qi =");
  expect_invalid([&] { row(0, 0, 2, o.data()); }, "qi =");
  expect_invalid([&] { row(0, 0, 0, nullptr); }, "o_row");
  expect_invalid([&] { attention_row(ok, nullptr, k.data(), v.data(), 0, 0, 0, o.data()); }, "q must");
}

}  // namespace
