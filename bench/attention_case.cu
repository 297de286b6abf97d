#include "attention_case.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "attention/decode_splitk.h"
#include "common/check.h"
#include "common/dispatch.cuh"
#include "common/vec.cuh"
#include "harness/fill.h"
#include "harness/kv_stream.h"
#include "ref/cpu/attention_ref.h"

namespace sb::bench {

namespace {

// Round a double to the dtype (through float, as the GPU stores it).
double round_to(DType t, double x) {
  return dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(to_float(from_float<T>(static_cast<float>(x))));
  });
}

// Raw elements of type `t`, as doubles.
std::vector<double> to_doubles(const std::vector<unsigned char>& raw, DType t) {
  std::vector<double> out(raw.size() / size_bytes(t));
  dispatch(t, [&](auto tag) {
    using T = decltype(tag);
    const T* v = reinterpret_cast<const T*>(raw.data());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = to_float(v[i]);
  });
  return out;
}

// `head_dim` contiguous values of the row (b, pos, head) of a BSHD tensor with `heads` heads and
// `len` positions, for positions [0, n): a strided device-to-host copy, then conversion to double.
std::vector<double> fetch_rows(const void* base, DType t, int64_t b, int64_t head, int64_t heads, int64_t len,
                               int64_t head_dim, int64_t first, int64_t n, cudaStream_t s) {
  const std::size_t elem = size_bytes(t), row = head_dim * elem, pitch = heads * head_dim * elem;
  std::vector<unsigned char> raw(n * row);
  const auto* src = static_cast<const unsigned char*>(base) + ((b * len + first) * heads + head) * row;
  SB_CUDA_CHECK(cudaMemcpy2DAsync(raw.data(), row, src, pitch, row, n, cudaMemcpyDeviceToHost, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  return to_doubles(raw, t);
}

// PyTorch's manual composite in the problem's dtype, for one query row: s = round(round(q.k) * scale)
// (the scale a double, applied in fp32),
// p = round(softmax_fp32(s)), o = round(sum p v accumulated in fp32). `visible` keys are unmasked.
std::vector<double> same_dtype_row(DType t, const std::vector<double>& q, const std::vector<double>& k,
                                   const std::vector<double>& v, int64_t d, int64_t visible, double scale) {
  std::vector<double> o(d, 0.0);
  if (visible == 0) return o;
  std::vector<float> s(visible);
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    float dot = 0.0f;
    for (int64_t e = 0; e < d; ++e) dot += static_cast<float>(q[e]) * static_cast<float>(k[j * d + e]);
    s[j] = static_cast<float>(round_to(t, round_to(t, dot) * static_cast<float>(scale)));  // tensor * double: fp32 math
    m = std::max(m, s[j]);
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < visible; ++j) sum += std::exp(s[j] - m);
  std::vector<float> acc(d, 0.0f);
  for (int64_t j = 0; j < visible; ++j) {
    const float p = static_cast<float>(round_to(t, std::exp(s[j] - m) / sum));
    for (int64_t e = 0; e < d; ++e) acc[e] += p * static_cast<float>(v[j * d + e]);
  }
  for (int64_t e = 0; e < d; ++e) o[e] = round_to(t, acc[e]);
  return o;
}

}  // namespace

std::vector<double> fetch_all(const void* device, DType t, std::size_t count, cudaStream_t stream) {
  std::vector<unsigned char> raw(count * size_bytes(t));
  SB_CUDA_CHECK(cudaMemcpyAsync(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return to_doubles(raw, t);
}

AttentionData::AttentionData(const AttentionDims& dims, DType dtype, uint64_t seed, cudaStream_t stream, float q_stddev,
                             double scale)
    : d_(dims), dtype_(dtype), scale_(scale), stream_(stream),
      q_(dims.batch * dims.q_len * dims.heads_q * dims.head_dim * size_bytes(dtype)),
      k_(dims.batch * dims.kv_len * dims.heads_kv * dims.head_dim * size_bytes(dtype)),
      v_(k_.bytes()),
      o_(q_.bytes()) {
  const std::size_t elem = size_bytes(dtype);
  fill_normal(q_.get(), q_.bytes() / elem, dtype, seed, 0.0f, q_stddev, stream);
  fill_normal(k_.get(), k_.bytes() / elem, dtype, seed ^ 0x4b, 0.0f, 1.0f, stream);
  fill_normal(v_.get(), v_.bytes() / elem, dtype, seed ^ 0x56, 0.0f, 1.0f, stream);
  poison_output();
  if (cublasCreate(&cublas_) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
}

AttentionData::~AttentionData() {
  if (cublas_) cublasDestroy(cublas_);
}

attention::Problem AttentionData::problem() const {
  attention::Problem p = problem_of(d_, dtype_);
  p.scale = scale_;
  p.q = q_.get();
  p.k = k_.get();
  p.v = v_.get();
  p.o = o_.get();
  p.workspace = ws_.get();
  p.workspace_size = ws_.bytes();
  p.cublas = cublas_;
  return p;
}

void AttentionData::reserve_workspace(std::size_t bytes) {
  if (bytes > ws_.bytes()) ws_ = DeviceBuffer(bytes);
}

void AttentionData::poison_output() { fill_nan(o_.get(), o_.bytes() / size_bytes(dtype_), dtype_, stream_); }

void AttentionData::compute_reference() {
  const int64_t total = d_.batch * d_.heads_q * d_.q_len;
  std::vector<int64_t> picks;
  if (total <= kFullCheckRows) {
    for (int64_t r = 0; r < total; ++r) picks.push_back(r);
  } else {
    for (int64_t k = 0; k < kSampledRows; ++k) picks.push_back(k * (total - 1) / (kSampledRows - 1));
  }
  const attention::Problem p = problem();
  const double scale = p.softmax_scale();
  const int64_t group = d_.heads_q / d_.heads_kv, dim = d_.head_dim;
  // The picks of one (batch, kv head) share its K and V: r enumerates (b, h, i) with i fastest, so they are
  // runs. The runs go to a few host threads (each fetches its run's K and V, then computes its rows); every
  // row lands at its pick's place, so the result is the one a single thread computes, in the same order.
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // [first, last) picks
  auto kv_of = [&](int64_t r) {
    return std::pair<int64_t, int64_t>{r / (d_.q_len * d_.heads_q), r / d_.q_len % d_.heads_q / group};
  };
  for (std::size_t a = 0; a < picks.size();) {
    std::size_t e = a + 1;
    while (e < picks.size() && kv_of(picks[e]) == kv_of(picks[a])) ++e;
    runs.emplace_back(a, e);
    a = e;
  }
  std::vector<AttentionRefRow> rows(picks.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_lock;
  auto worker = [&] {
    try {
      for (std::size_t n; (n = next.fetch_add(1)) < runs.size();) {
        const auto [b, kvh] = kv_of(picks[runs[n].first]);
        const std::vector<double> k =
            fetch_rows(k_.get(), dtype_, b, kvh, d_.heads_kv, d_.kv_len, dim, 0, d_.kv_len, stream_);
        const std::vector<double> v =
            fetch_rows(v_.get(), dtype_, b, kvh, d_.heads_kv, d_.kv_len, dim, 0, d_.kv_len, stream_);
        for (std::size_t at = runs[n].first; at < runs[n].second; ++at) {
          const int64_t r = picks[at], i = r % d_.q_len, h = r / d_.q_len % d_.heads_q;
          const std::vector<double> q = fetch_rows(q_.get(), dtype_, b, h, d_.heads_q, d_.q_len, dim, i, 1, stream_);
          // fp64 reference of this one row: a single-head problem whose query sits at the same position.
          AttentionRefRow row{b, h, i, std::vector<double>(dim), {}};
          const int64_t visible =
              d_.causal ? std::clamp<int64_t>(i + d_.kv_len - d_.q_len + 1, 0, d_.kv_len) : d_.kv_len;
          const ref::AttentionRefShape one{1, 1, 1, dim, 1, visible ? visible : 1, false, scale};
          if (visible > 0) ref::attention_row(one, q.data(), k.data(), v.data(), 0, 0, 0, row.ref.data());
          row.same = same_dtype_row(dtype_, q, k, v, dim, visible, scale);
          rows[at] = std::move(row);
        }
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_lock);
      if (!failure) failure = std::current_exception();
      next = runs.size();  // the others stop at their next run
    }
  };
  const std::size_t threads =
      std::min<std::size_t>({runs.size(), std::max(1u, std::thread::hardware_concurrency()), kReferenceThreads});
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  rows_ = std::move(rows);
}

std::string kv_read_supports(const attention::Problem& p) {
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  if (p.k == nullptr || p.v == nullptr) return "K or V is null";
  if (p.kv_bytes() % 32 != 0) return "K and V are not a multiple of 16 bytes each";
  if (!aligned(p.k) || !aligned(p.v)) return "K or V is not 16-byte aligned";
  return "";
}

std::size_t kv_read_workspace_bytes(const attention::Problem& p) {
  return sizeof(unsigned) * read_sum_blocks(p.kv_bytes());
}

void launch_kv_read(const attention::Problem& p, cudaStream_t stream) {
  if (p.workspace_size < kv_read_workspace_bytes(p))
    throw std::invalid_argument("ref_kv_read: the workspace holds fewer words than its blocks write");
  read_sum_kernel(p.k, p.kv_bytes() / 2, p.v, p.kv_bytes() / 2, static_cast<unsigned*>(p.workspace), stream);
}

namespace {
// Runs a reference that writes one word a block (the wrapping sum of the 32-bit words it read) to
// p.workspace, and checks that the words add up to CUB's sum over K and V: every byte read exactly once.
Check check_word_sums(const attention::Problem& p, unsigned blocks, void (*launch)(const attention::Problem&, cudaStream_t),
                      cudaStream_t stream) {
  // A block that writes nothing leaves 0xffffffff in its word, which the sum below does not expect.
  SB_CUDA_CHECK(cudaMemsetAsync(p.workspace, 0xff, sizeof(unsigned) * blocks, stream));
  launch(p, stream);
  std::vector<unsigned> sums(blocks);
  SB_CUDA_CHECK(cudaMemcpyAsync(sums.data(), p.workspace, sizeof(unsigned) * blocks, cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  unsigned got = 0;
  for (const unsigned x : sums) got += x;
  const unsigned want = word_sum(p.k, p.kv_bytes() / 2, stream) + word_sum(p.v, p.kv_bytes() / 2, stream);
  Check c;
  c.ok = got == want;
  c.err = c.ok ? 0.0 : 2.0;  // exact or not: no tolerance
  char msg[160];
  std::snprintf(msg, sizeof msg, "the blocks' word sums add to 0x%08x, CUB's sum over K and V is 0x%08x%s", got, want,
                c.ok ? "" : ": some bytes were not read exactly once");
  c.message = msg;
  return c;
}

int sm_count() {
  static const int sms = device_info().sm_count;  // one device a process, the harness's
  return sms;
}
unsigned kv_stream_blocks(const attention::Problem& p, const attention::decode_splitk::Plan& plan) {
  return static_cast<unsigned>(p.batch * (p.heads_kv / plan.heads_per_block));
}
// decode_splitk's plan for p where ref_kv_stream reads p as that plan's blocks would; otherwise nothing, and
// *why says why not. The one place that decides, so a launch makes the plan once.
std::optional<attention::decode_splitk::Plan> kv_stream_plan(const attention::Problem& p, std::string* why) {
  namespace ds = attention::decode_splitk;
  auto refuse = [why](std::string reason) -> std::optional<ds::Plan> {
    *why = std::move(reason);
    return std::nullopt;
  };
  if (std::string r = kv_read_supports(p); !r.empty()) return refuse(std::move(r));
  if (std::string r = ds::supports(p); !r.empty())
    return refuse("decode_splitk does not take this problem (" + r + "), and this reference reads as its blocks do");
  const ds::Plan plan = ds::make_plan(p, sm_count());
  if (plan.num_splits > 1)
    return refuse("decode_splitk splits this problem's KV (" + std::to_string(plan.num_splits) +
                  " splits); this reference reads as its unsplit blocks do (ref_kv_read reads any decode problem)");
  if (plan.row_blocks > 1)
    return refuse("decode_splitk reads this problem's K and V " + std::to_string(plan.row_blocks) +
                  " times (row blocks); this reference reads them once");
  const int64_t piece_vecs = plan.heads_per_block * p.head_dim / 8;  // decode_splitk's head dims are multiples of 8
  if (kKvStreamThreads % piece_vecs != 0)
    return refuse("a unit's piece of a key row (" + std::to_string(piece_vecs) + " 16-byte vectors) does not divide " +
                  std::to_string(kKvStreamThreads) + " threads");
  if (p.kv_len > INT_MAX || p.batch * (p.heads_kv / plan.heads_per_block) > INT_MAX)
    return refuse("kv_len or the block count exceeds 32 bits");
  why->clear();
  return plan;
}
}  // namespace

Check check_kv_read(const attention::Problem& p, cudaStream_t stream) {
  return check_word_sums(p, read_sum_blocks(p.kv_bytes()), launch_kv_read, stream);
}

std::string kv_stream_supports(const attention::Problem& p) {
  std::string why;
  kv_stream_plan(p, &why);
  return why;
}

std::size_t kv_stream_workspace_bytes(const attention::Problem& p) {
  std::string why;
  const auto plan = kv_stream_plan(p, &why);
  return plan ? sizeof(unsigned) * kv_stream_blocks(p, *plan) : 0;
}

void launch_kv_stream(const attention::Problem& p, cudaStream_t stream) {
  std::string why;
  const auto plan = kv_stream_plan(p, &why);
  if (!plan) throw std::invalid_argument("ref_kv_stream: " + why);
  const unsigned blocks = kv_stream_blocks(p, *plan);
  if (p.workspace_size < sizeof(unsigned) * blocks)
    throw std::invalid_argument("ref_kv_stream: the workspace holds fewer words than its blocks write");
  // Stages of 16 KB a block: the bytes in flight of the decode_splitk block it stands for, 48 KB for the FMA
  // kernel's one-row blocks (4 blocks an SM), 96 KB for the tensor-core kernel's.
  const int units = static_cast<int>(p.heads_kv / plan->heads_per_block);
  kv_stream_kernel(p.k, p.v, p.batch, static_cast<int>(p.kv_len), p.heads_kv * p.head_dim / 8, units,
                   static_cast<int>(plan->heads_per_block * p.head_dim / 8), plan->tensor_cores ? 6 : 3,
                   static_cast<unsigned*>(p.workspace), stream);
}

Check check_kv_stream(const attention::Problem& p, cudaStream_t stream) {
  std::string why;
  const auto plan = kv_stream_plan(p, &why);
  if (!plan) throw std::invalid_argument("ref_kv_stream: " + why);
  return check_word_sums(p, kv_stream_blocks(p, *plan), launch_kv_stream, stream);
}

namespace {
// The wrapping sum of the whole 32-bit words inside [p, p + bytes) (a 16-bit tensor of an odd element
// count ends mid-word).
double words_inside(const void* p, std::size_t bytes, cudaStream_t stream) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p), end = begin + bytes, first = (begin + 3) / 4 * 4;
  return first >= end ? 0.0 : static_cast<double>(word_sum(reinterpret_cast<const void*>(first), (end - first) / 4 * 4, stream));
}
}  // namespace

std::array<double, 7> AttentionData::inputs() const {
  return {problem().softmax_scale(),
          static_cast<double>(q_.bytes()),
          static_cast<double>(k_.bytes()),
          static_cast<double>(d_.kv_len),
          words_inside(q_.get(), q_.bytes(), stream_),
          words_inside(k_.get(), k_.bytes(), stream_),
          words_inside(v_.get(), v_.bytes(), stream_)};
}

AttentionData::Reference AttentionData::take_reference() {
  Reference r;
  if (!rows_.empty()) r.inputs = inputs();
  r.rows = std::move(rows_);
  rows_.clear();
  return r;
}

bool AttentionData::adopt_reference(Reference r) {
  if (r.rows.empty() || r.inputs != inputs()) return false;
  rows_ = std::move(r.rows);
  return true;
}

Check AttentionData::verify() {
  if (rows_.empty()) compute_reference();
  Check c{true, 0.0, ""};
  double err_ours = 0, err_same = 0;
  const AttentionRefRow* worst = nullptr;
  int64_t worst_e = 0;
  for (const AttentionRefRow& row : rows_) {
    const std::vector<double> got =
        fetch_rows(o_.get(), dtype_, row.b, row.h, d_.heads_q, d_.q_len, d_.head_dim, row.i, 1, stream_);
    for (int64_t e = 0; e < d_.head_dim; ++e) {
      const double diff = std::isfinite(got[e]) ? std::fabs(got[e] - row.ref[e]) : std::numeric_limits<double>::infinity();
      if (diff > err_ours || !worst) {
        err_ours = diff;
        worst = &row;
        worst_e = e;
      }
      err_same = std::max(err_same, std::fabs(row.same[e] - row.ref[e]));
    }
  }
  const double tolerance = 2.0 * err_same + 1e-5;
  c.err = err_ours / tolerance;
  char buf[320];
  if (!(err_ours <= tolerance)) {
    c.ok = false;
    std::snprintf(buf, sizeof buf,
                  "max |ours - ref| = %.3g > 2 * max |same-dtype - ref| + 1e-5 = %.3g (b %lld, head %lld, row %lld, "
                  "dim %lld)",
                  err_ours, tolerance, static_cast<long long>(worst->b), static_cast<long long>(worst->h),
                  static_cast<long long>(worst->i), static_cast<long long>(worst_e));
    c.message = buf;
    return c;
  }
  if (static_cast<int64_t>(rows_.size()) < d_.batch * d_.heads_q * d_.q_len) {
    if (const std::size_t bad = count_nonfinite(o_.get(), o_.bytes() / size_bytes(dtype_), dtype_, stream_); bad) {
      c.ok = false;
      c.err = std::numeric_limits<double>::infinity();
      c.message = std::to_string(bad) + " output element(s) are NaN/Inf (unwritten?); inputs are finite";
    }
  }
  return c;
}

}  // namespace sb::bench
