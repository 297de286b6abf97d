#include "ref/cpu/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sb::ref {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("attention reference: " + message);
}

std::string to_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void check_args(const AttentionRefShape& s, const double* q, const double* k, const double* v) {
  const std::pair<const char*, int64_t> sizes[] = {{"batch", s.batch},       {"heads_q", s.heads_q},
                                                   {"heads_kv", s.heads_kv}, {"head_dim", s.head_dim},
                                                   {"q_len", s.q_len},       {"kv_len", s.kv_len}};
  for (const auto& [name, value] : sizes)
    require(value > 0, std::string(name) + " must be > 0 (got " + std::to_string(value) + ")");
  require(s.heads_q % s.heads_kv == 0, "heads_q (" + std::to_string(s.heads_q) +
                                           ") must be a multiple of heads_kv (" + std::to_string(s.heads_kv) +
                                           ")");
  require(std::isfinite(s.scale) && s.scale > 0,
          "scale must be finite and > 0 (got " + to_text(s.scale) + ")");
  require(q != nullptr, "q must not be null");
  require(k != nullptr, "k must not be null");
  require(v != nullptr, "v must not be null");
}

void check_index(const char* name, int64_t value, int64_t size, const char* size_name) {
  const std::string range = "[0, " + std::string(size_name) + " = " + std::to_string(size) + ")";
  require(value >= 0 && value < size,
          std::string(name) + " = " + std::to_string(value) + " out of range " + range);
}

// Unchecked row. `scores` is scratch of kv_len doubles, reused across rows by attention().
void row_unchecked(const AttentionRefShape& s, const double* q, const double* k, const double* v, int64_t b,
                   int64_t hq, int64_t qi, double* o_row, std::vector<double>& scores) {
  const int64_t hkv = hq / (s.heads_q / s.heads_kv);
  const int64_t d = s.head_dim;
  const double* q_row = q + ((b * s.q_len + qi) * s.heads_q + hq) * d;
  auto kv_offset = [&](int64_t j) { return ((b * s.kv_len + j) * s.heads_kv + hkv) * d; };

  // Keys [0, visible) are attended: all of them, or up to the bottom-right aligned diagonal.
  const int64_t visible =
      s.causal ? std::clamp<int64_t>(qi + (s.kv_len - s.q_len) + 1, 0, s.kv_len) : s.kv_len;
  std::fill(o_row, o_row + d, 0.0);
  if (visible == 0) return;  // fully masked row: 0 by the suite's convention, not 0/0

  double max_score = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    const double* k_row = k + kv_offset(j);
    double dot = 0.0;
    for (int64_t e = 0; e < d; ++e) dot += q_row[e] * k_row[e];
    scores[j] = s.scale * dot;
    max_score = std::max(max_score, scores[j]);
  }
  // If any score is NaN, exp(NaN - max) is NaN and the whole row becomes NaN, as it should.
  double denom = 0.0;
  for (int64_t j = 0; j < visible; ++j) {
    const double p = std::exp(scores[j] - max_score);
    denom += p;
    const double* v_row = v + kv_offset(j);
    for (int64_t e = 0; e < d; ++e) o_row[e] += p * v_row[e];
  }
  for (int64_t e = 0; e < d; ++e) o_row[e] /= denom;
}

}  // namespace

void attention(const AttentionRefShape& shape, const double* q, const double* k, const double* v, double* o) {
  check_args(shape, q, k, v);
  require(o != nullptr, "o must not be null");
  std::vector<double> scores(shape.kv_len);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t qi = 0; qi < shape.q_len; ++qi)
      for (int64_t hq = 0; hq < shape.heads_q; ++hq) {
        double* o_row = o + ((b * shape.q_len + qi) * shape.heads_q + hq) * shape.head_dim;
        row_unchecked(shape, q, k, v, b, hq, qi, o_row, scores);
      }
}

void attention_row(const AttentionRefShape& shape, const double* q, const double* k, const double* v,
                   int64_t b, int64_t hq, int64_t qi, double* o_row) {
  check_args(shape, q, k, v);
  require(o_row != nullptr, "o_row must not be null");
  check_index("b", b, shape.batch, "batch");
  check_index("hq", hq, shape.heads_q, "heads_q");
  check_index("qi", qi, shape.q_len, "q_len");
  std::vector<double> scores(shape.kv_len);
  row_unchecked(shape, q, k, v, b, hq, qi, o_row, scores);
}

}  // namespace sb::ref
