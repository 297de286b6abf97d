#include <cstdio>
#include <cuda_runtime.h>
int main(){ size_t v=0; cudaFree(0); cudaError_t e=cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize);
 cudaDeviceProp p; cudaGetDeviceProperties(&p,0);
 printf("C++ fresh context: persisting L2 limit %zu (err %d), persistingL2CacheMaxSize %d, accessPolicyMaxWindowSize %d\n", v, (int)e, p.persistingL2CacheMaxSize, p.accessPolicyMaxWindowSize); }
