#include <cuda_runtime.h>
#include "ccv-cuda.h"
extern "C" int ccv_cuda_device_count (void) { int n = 0; if (cudaGetDeviceCount (&n) != cudaSuccess) return 0; return n; }
