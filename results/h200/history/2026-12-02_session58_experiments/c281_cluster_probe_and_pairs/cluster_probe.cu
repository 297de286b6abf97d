// Session 58 probe (c281): how many clusters of N blocks, one block an SM (116 KB of shared memory, 128 threads), the
// H200 runs at once (cudaOccupancyMaxActiveClusters), and when each block of a 128-block grid of clusters of 4 starts
// and ends (globaltimer, smid): a tail wave shows as clusters that start after others end.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__global__ void spin(unsigned long long* rec, unsigned long long ns) {
  extern __shared__ char smem[];
  const unsigned long long t0 = gt();
  while (gt() - t0 < ns) smem[threadIdx.x] = 1;
  if (threadIdx.x == 0) { rec[3 * blockIdx.x] = t0; rec[3 * blockIdx.x + 1] = gt(); rec[3 * blockIdx.x + 2] = smid(); }
}
int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  printf("SMs %d\n", sms);
  CK(cudaFuncSetAttribute(spin, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const int smems[] = {0, 48 * 1024, 100 * 1024, 116 * 1024, 200 * 1024};
  CK(cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  for (int s : smems) for (int n : {1, 2, 4, 8, 16}) {
    cudaLaunchConfig_t cfg = {}; cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeClusterDimension; a[0].val.clusterDim.x = n; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(n * 64); cfg.blockDim = dim3(128); cfg.dynamicSmemBytes = s; cfg.attrs = a; cfg.numAttrs = 1;
    int c = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&c, spin, &cfg);
    printf("smem %3d KB cluster %2d: max active clusters %d (%d blocks) %s\n", s / 1024, n, c, c * n, e == cudaSuccess ? "" : cudaGetErrorString(e));
    cudaGetLastError();
  }
  unsigned long long* rec; CK(cudaMalloc(&rec, 3 * 132 * 8 * sizeof(unsigned long long)));
  for (int n : {1, 2, 4}) {
    cudaLaunchConfig_t cfg = {}; cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeClusterDimension; a[0].val.clusterDim.x = n; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(128); cfg.blockDim = dim3(128); cfg.dynamicSmemBytes = 116 * 1024; cfg.attrs = a; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, spin, rec, 100000ull)); CK(cudaDeviceSynchronize());
    unsigned long long h[3 * 128]; CK(cudaMemcpy(h, rec, sizeof h, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ull, t1 = 0; for (int b = 0; b < 128; ++b) { if (h[3*b] < t0) t0 = h[3*b]; if (h[3*b+1] > t1) t1 = h[3*b+1]; }
    int late = 0; for (int b = 0; b < 128; ++b) if (h[3*b] - t0 > 50000) ++late;
    printf("128 blocks, clusters of %d, 116 KB, 100-us spin: span %.1f us, blocks starting >50 us late: %d\n  smid:", n, (t1 - t0) / 1e3, late);
    for (int b = 0; b < 128; ++b) printf(" %llu%s", h[3*b+2], h[3*b] - t0 > 50000 ? "*" : "");
    printf("\n");
  }
  return 0;
}
