#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>

#include "ref/torch/torch_baselines.h"
#include "ref/torch/torch_common.h"

namespace sb::torch_ref {

namespace {

class TorchGraphReplay final : public bench::Replay {
 public:
  TorchGraphReplay(cudaStream_t stream, int launches, const bench::LaunchFn& launch) : launches_(launches) {
    c10::cuda::CUDAStreamGuard guard(external_stream(stream));
    graph_.capture_begin();
    try {
      for (int i = 0; i < launches; ++i) launch(stream);
    } catch (...) {
      // A launch that throws mid-capture (PyTorch out of memory in the graph's pool, say) must not
      // leave the stream capturing: end the capture, drop its error, and report the original one.
      try {
        graph_.capture_end();
      } catch (...) {
      }
      (void)cudaGetLastError();
      throw;
    }
    graph_.capture_end();
  }
  void replay(cudaStream_t stream) override {
    c10::cuda::CUDAStreamGuard guard(external_stream(stream));
    graph_.replay();
  }
  int launches() const override { return launches_; }

 private:
  int launches_;
  at::cuda::CUDAGraph graph_;
};

}  // namespace

std::unique_ptr<bench::Replay> capture_graph(cudaStream_t stream, int launches, const bench::LaunchFn& launch) {
  return std::make_unique<TorchGraphReplay>(stream, launches, launch);
}

}  // namespace sb::torch_ref
