// The training step (bench/train_model.h): our RMSNorm's autograd Function gives y, dx and dw within the suite's
// RMSNorm tolerances of the fp64 reference, as at::rms_norm's autograd does on the same inputs; the small
// config's loss falls with either norm, and ours stays on PyTorch's loss curve within bf16's noise
// (verify_training's rule). Built only with libtorch (SOLBENCH_HAVE_TORCH).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpu.h"
#include "ref/cpu/rmsnorm_backward_ref.h"
#include "ref/cpu/rmsnorm_ref.h"
#include "rmsnorm_backward_case.h"
#include "rmsnorm_case.h"
#include "train_config.h"
#include "train_model.h"
#include "train_norm.h"

namespace sb::bench {
namespace {

at::ScalarType scalar(DType t) { return t == DType::f32 ? at::kFloat : t == DType::f16 ? at::kHalf : at::kBFloat16; }

std::vector<double> host_doubles(const at::Tensor& t) {
  const at::Tensor d = t.detach().to(at::kDouble).cpu().contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

struct NormOutputs {
  at::Tensor y, dx, dw;
};

// y = norm(x, w) and its gradients for the upstream gradient dy, through autograd.
NormOutputs run_norm(TrainNorm norm, const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& dy) {
  const at::Tensor x = x_in.detach().clone().requires_grad_(true);
  const at::Tensor w = w_in.detach().clone().requires_grad_(true);
  const at::Tensor y = train_rms_norm(norm, x, w, kTrainEps);
  y.backward(dy);
  return {y.detach(), x.grad(), w.grad()};
}

// The largest error over its tolerance (<= 1 passes) of y, dx and dw against the fp64 reference computed from
// the inputs as the norm sees them: x and dy in the compute dtype, w rounded to it. `dtype` sets the
// tolerances: the dtype the norm computes and rounds in.
struct NormErrors {
  double y = 0, dx = 0, dw = 0;
};
NormErrors errors(const NormOutputs& got, const at::Tensor& x, const at::Tensor& w_rounded, const at::Tensor& dy,
                  DType dtype) {
  const int64_t hidden = x.size(-1), rows = x.numel() / hidden;
  const std::vector<double> hx = host_doubles(x), hw = host_doubles(w_rounded), hdy = host_doubles(dy);
  const std::vector<double> y = host_doubles(got.y), dx = host_doubles(got.dx), dw = host_doubles(got.dw);
  std::vector<double> ref_y(hidden), ref_dx(hidden), dx_scale(hidden), dw_sum(hidden, 0.0), dw_abs(hidden, 0.0);
  NormErrors e;
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = hx.data() + r * hidden;
    ref::rmsnorm_row(xr, hw.data(), ref_y.data(), hidden, kTrainEps);
    ref::rmsnorm_backward_row(xr, hw.data(), hdy.data() + r * hidden, hidden, kTrainEps,
                              {ref_dx.data(), dw_sum.data(), dw_abs.data(), dx_scale.data()});
    for (int64_t i = 0; i < hidden; ++i) {
      const std::size_t k = static_cast<std::size_t>(r * hidden + i);
      e.y = std::max(e.y, error_vs_tolerance(y[k], ref_y[i], rmsnorm_tolerance(dtype, hidden, ref_y[i])));
      e.dx = std::max(e.dx, error_vs_tolerance(dx[k], ref_dx[i],
                                               rmsnorm_backward_dx_tolerance(dtype, hidden, ref_dx[i], dx_scale[i])));
    }
  }
  for (int64_t i = 0; i < hidden; ++i)
    e.dw = std::max(e.dw, error_vs_tolerance(dw[i], dw_sum[i],
                                             rmsnorm_backward_dw_tolerance(dtype, rows, hidden, dw_sum[i], dw_abs[i])));
  return e;
}

// Inputs as the suite draws them (x, dy ~ N(0, 1), w ~ N(1, 0.5^2)), over odd and tail sizes and the two
// configs' hidden sizes, one leading batch dimension included (rows are every dimension but the last).
TEST(TrainNorm, OurAutogradFunctionMatchesTheReferenceAsAtRmsNormDoes) {
  SB_REQUIRE_GPU();
  const std::vector<std::vector<int64_t>> shapes = {{37, 1000}, {2, 150, 256}, {64, 2048}, {3, 5, 7}};
  for (const DType dtype : {DType::f32, DType::bf16, DType::f16})
    for (const std::vector<int64_t>& shape : shapes) {
      SCOPED_TRACE(std::string(name(dtype)) + " " + c10::str(at::IntArrayRef(shape)));
      at::manual_seed(7);
      const auto opts = at::TensorOptions().device(at::kCUDA).dtype(scalar(dtype));
      const at::Tensor x = at::randn(shape, opts.dtype(at::kFloat)).to(scalar(dtype));
      const at::Tensor w = (1 + 0.5 * at::randn({shape.back()}, opts.dtype(at::kFloat))).to(scalar(dtype));
      const at::Tensor dy = at::randn(shape, opts.dtype(at::kFloat)).to(scalar(dtype));
      const NormOutputs ours = run_norm(TrainNorm::solbench, x, w, dy);
      const NormOutputs theirs = run_norm(TrainNorm::torch, x, w, dy);
      for (const at::Tensor& t : {ours.y, ours.dx, ours.dw}) ASSERT_EQ(t.scalar_type(), scalar(dtype));
      const NormErrors e = errors(ours, x, w, dy, dtype), t = errors(theirs, x, w, dy, dtype);
      EXPECT_LE(e.y, 1.0) << "ours: y";
      EXPECT_LE(e.dx, 1.0) << "ours: dx";
      EXPECT_LE(e.dw, 1.0) << "ours: dw";
      EXPECT_LE(t.y, 1.0) << "at::rms_norm: y";
      EXPECT_LE(t.dx, 1.0) << "at::rms_norm: dx";
      EXPECT_LE(t.dw, 1.0) << "at::rms_norm: dw";
    }
}

// Under autocast a bf16 x may meet an fp32 weight: ours computes in bf16 with the weight rounded to it and
// returns the weight's gradient in fp32, the weight's dtype.
TEST(TrainNorm, AnFp32WeightIsCastToXsDtypeAndItsGradientComesBackInFp32) {
  SB_REQUIRE_GPU();
  at::manual_seed(8);
  const auto f32 = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
  const at::Tensor x = at::randn({33, 512}, f32).to(at::kBFloat16);
  const at::Tensor w = 1 + 0.5 * at::randn({512}, f32);
  const at::Tensor dy = at::randn({33, 512}, f32).to(at::kBFloat16);
  const NormOutputs ours = run_norm(TrainNorm::solbench, x, w, dy);
  EXPECT_EQ(ours.y.scalar_type(), at::kBFloat16);
  EXPECT_EQ(ours.dx.scalar_type(), at::kBFloat16);
  ASSERT_EQ(ours.dw.scalar_type(), at::kFloat);
  const NormErrors e = errors(ours, x, w.to(at::kBFloat16), dy, DType::bf16);
  EXPECT_LE(e.y, 1.0);
  EXPECT_LE(e.dx, 1.0);
  EXPECT_LE(e.dw, 1.0);
}

TEST(TrainNorm, BadInputsAreRefusedWithTheReason) {
  SB_REQUIRE_GPU();
  const auto cuda = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
  auto refusal = [](const at::Tensor& x, const at::Tensor& w) -> std::string {
    try {
      train_rms_norm(TrainNorm::solbench, x, w, kTrainEps);
    } catch (const c10::Error& e) {
      return e.what_without_backtrace();
    }
    return "";
  };
  EXPECT_NE(refusal(at::ones({4, 8}), at::ones({8})).find("CUDA tensors"), std::string::npos);
  EXPECT_NE(refusal(at::ones({4, 8}, cuda), at::ones({7}, cuda)).find("w must be [8]"), std::string::npos);
  EXPECT_NE(refusal(at::ones({4, 8}, cuda.dtype(at::kDouble)), at::ones({8}, cuda.dtype(at::kDouble))).find("dtype"),
            std::string::npos);
}

// The small config: from ln(1024) the loss of both bf16 runs falls below its bar, and ours stays within
// verify_training's tolerance of the fp32 run (twice PyTorch's bf16 run's distance from it, + 1e-4).
TEST(TrainStep, SmallConfigLearnsWithEitherNormAndOursStaysOnPyTorchsCurve) {
  SB_REQUIRE_GPU();
  Stream stream;
  const TrainConfig& c = train_config("small");
  const TrainCheck check = verify_training(c, 1, stream.get());
  SCOPED_TRACE(check.message);
  ASSERT_EQ(check.torch_loss.size(), static_cast<std::size_t>(c.verify_steps));
  ASSERT_EQ(check.solbench_loss.size(), check.torch_loss.size());
  ASSERT_EQ(check.fp32_loss.size(), check.torch_loss.size());
  // An untrained model guesses uniformly over the vocabulary.
  EXPECT_NEAR(check.torch_loss.front(), std::log(static_cast<double>(c.vocab)), 0.5);
  for (const auto* loss : {&check.torch_loss, &check.solbench_loss})
    EXPECT_LT(loss->back(), c.loss_drop * loss->front());
  EXPECT_LE(check.err, 1.0);
  EXPECT_GT(check.tolerance, 1e-4) << "the bf16 run matched the fp32 run exactly: was autocast on?";
  EXPECT_TRUE(check.ok);
}

// A trainer's bookkeeping: steps, tokens, a loss that exists only after a step, and a peak of allocated
// memory at least the size of the weights, gradients and AdamW's moments.
TEST(TrainStep, TrainerCountsStepsAndHoldsItsState) {
  SB_REQUIRE_GPU();
  Stream stream;
  const TrainConfig& c = train_config("small");
  Trainer t(c, TrainNorm::solbench, TrainPrecision::bf16_autocast, 2, 3, stream.get());
  EXPECT_TRUE(std::isnan(t.last_loss(stream.get())));
  reset_peak_memory();
  t.step(stream.get());
  t.step(stream.get());
  EXPECT_EQ(t.steps(), 2);
  EXPECT_EQ(t.tokens_per_step(), 2 * c.seq);
  EXPECT_TRUE(std::isfinite(t.last_loss(stream.get())));
  EXPECT_GE(peak_memory_bytes(), static_cast<std::size_t>(16 * c.parameters()));
  EXPECT_GE(t.sdpa_backend(stream.get()), 0);
}

}  // namespace
}  // namespace sb::bench
