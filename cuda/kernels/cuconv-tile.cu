/* gst-cudaconvolve: the host half of the tile toolkit: the device's
 * shared memory, and the kernels' dynamic shared memory limit in every
 * context they run in.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <mutex>

#include <cuda.h>               /* the driver's types; nothing links libcuda */
#include <cuda_runtime.h>

#include "cuconv-tile.cuh"

namespace cuconv {

/* Attribute a of the current device. */
static cudaError_t
device_attribute (cudaDeviceAttr a, int *v)
{
  int dev;
  const cudaError_t e = cudaGetDevice (&dev);

  if (e != cudaSuccess)
    return e;
  return cudaDeviceGetAttribute (v, a, dev);
}

cudaError_t
device_smem_optin (int *bytes)
{
  return device_attribute (cudaDevAttrMaxSharedMemoryPerBlockOptin, bytes);
}

cudaError_t
device_sm_count (int *sms)
{
  return device_attribute (cudaDevAttrMultiProcessorCount, sms);
}

cudaError_t
device_cc_major (int *major)
{
  return device_attribute (cudaDevAttrComputeCapabilityMajor, major);
}

bool
device_takes_pdl (void)
{
  int major;

  if (device_cc_major (&major) != cudaSuccess) {
    cudaGetLastError ();        /* not sticky: an ordinary launch */
    return false;
  }
  return major >= 9;
}

int
fill_two_waves (int tile_h, int min_h, int cols, int rows)
{
  int sms;

  if (device_sm_count (&sms) != cudaSuccess) {
    cudaGetLastError ();        /* not sticky: the tallest tile serves */
    return tile_h;
  }
  while (tile_h / 2 >= min_h &&
      (long long) cols * ((rows + tile_h - 1) / tile_h) < 2LL * sms)
    tile_h /= 2;
  return tile_h;
}

/* The driver's cuCtxGetCurrent and cuCtxGetId (CUDA 12.0), through the
 * runtime's entry point table, so that the engine does not link libcuda. */
typedef CUresult (CUDAAPI * CtxGetCurrent) (CUcontext *);
typedef CUresult (CUDAAPI * CtxGetId) (CUcontext, unsigned long long *);

struct DriverContextCalls
{
  CtxGetCurrent get_current = NULL;
  CtxGetId get_id = NULL;
  DriverContextCalls ()
  {
    cudaDriverEntryPointQueryResult q;
    void *f;

    if (cudaGetDriverEntryPointByVersion ("cuCtxGetCurrent", &f, 12000,
            cudaEnableDefault, &q) == cudaSuccess
        && q == cudaDriverEntryPointSuccess)
      get_current = (CtxGetCurrent) f;
    if (cudaGetDriverEntryPointByVersion ("cuCtxGetId", &f, 12000,
            cudaEnableDefault, &q) == cudaSuccess
        && q == cudaDriverEntryPointSuccess)
      get_id = (CtxGetId) f;
    cudaGetLastError ();
  }
};

/* The id of the context current on this thread: unique for the life of
 * the process, unlike a CUcontext, whose address a later context may
 * reuse.  0 when none is current or the driver cannot say. */
static unsigned long long
current_context_id (void)
{
  static const DriverContextCalls drv;  /* thread-safe initialisation */
  CUcontext ctx = NULL;
  unsigned long long id = 0;

  if (!drv.get_current || !drv.get_id
      || drv.get_current (&ctx) != CUDA_SUCCESS || !ctx
      || drv.get_id (ctx, &id) != CUDA_SUCCESS)
    return 0;
  return id;
}

/* SmemLimit.raised packs a context id and a byte count. */
constexpr int BYTES_BITS = 20;
constexpr unsigned long long BYTES_MASK = (1ull << BYTES_BITS) - 1;

/* The limit is raised to the most any launch of the kernel has needed
 * (capped by the device), never lowered: so a launch that finds its
 * context and enough bytes in SmemLimit.raised, however stale, is allowed
 * them.  Two threads may both raise it (the second call is redundant); the
 * mutex only keeps SmemLimit.most and the value set in step. */
cudaError_t
allow_smem (const void *kernel, int bytes, SmemLimit & limit)
{
  static std::mutex raising;
  const unsigned long long id = current_context_id ();
  const bool known = id != 0 && id < (1ull << (64 - BYTES_BITS));
  int optin, v;
  cudaError_t e;

  if (known) {
    const unsigned long long r = limit.raised.load (std::memory_order_acquire);

    if ((r >> BYTES_BITS) == id && (int) (r & BYTES_MASK) >= bytes)
      return cudaSuccess;
  }

  std::lock_guard < std::mutex > hold (raising);
  e = device_smem_optin (&optin);
  if (e != cudaSuccess)
    return e;
  v = limit.most.load (std::memory_order_relaxed);
  if (bytes > v) {
    v = bytes;
    limit.most.store (v, std::memory_order_relaxed);
  }
  /* a smaller device than the one that needed the most: as much as it
   * has (a launch asking more than that fails below) */
  if (v > optin)
    v = bytes > optin ? bytes : optin;
  e = cudaFuncSetAttribute (kernel,
      cudaFuncAttributeMaxDynamicSharedMemorySize, v);
  if (e != cudaSuccess)
    return e;
  if (known && (unsigned long long) v <= BYTES_MASK)
    limit.raised.store (id << BYTES_BITS | (unsigned long long) v,
        std::memory_order_release);
  return cudaSuccess;
}

}                               /* namespace cuconv */
