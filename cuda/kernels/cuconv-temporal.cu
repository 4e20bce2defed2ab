/* gst-cudaconvolve: the temporal denoise on the GPU (docs/design.md,
 * "Temporal denoise"): one launch for every plane of a frame, a thread
 * for 16 bytes of a row read and written as one vector each, the integer
 * arithmetic of cuconv_temporal_rows (cuconv-temporal.c) to the bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"
#include "cuconv-tile.cuh"

namespace cuconv {

#define TM_THREADS 1024
#define TM_PLANES CUCONV_MAX_PLANES     /* planes a launch: a whole frame */
#define TM_CHUNK 16             /* bytes a thread reads of each buffer */
#define TM_PHASES 8             /* the most bytes a pixel has: 4 x 16 bit */
/* The factors, one copy for each lane of a warp, so that a warp's 32
 * look-ups fall in 32 different banks whatever the differences. */
#define TM_LANES 32

/* One plane.  A row is cut into chunks of 16 bytes aligned in memory
 * (row_bytes from the row's first byte; the first and last chunks may be
 * partial, and a row whose input and state are not equally aligned takes
 * every chunk sample by sample); units = height * cpr. */
struct TemporalPlane
{
  const uint8_t *src;
  uint8_t *dst;                 /* the state: previous output, then new */
  size_t src_pitch;
  size_t dst_pitch;
  unsigned units;
  unsigned cpr;                 /* chunks a row */
  unsigned magic;               /* row = umulhi (unit, magic), exact; or
                                 * 0: a division */
  int row_bytes;
  int nc;
  int sb;                       /* bytes a sample: 1 or 2 */
  int shift;
  int down;                     /* depth - 8: |a - b| >> down indexes k */
  uint32_t mask;                /* 2^depth - 1 */
  int pixel;                    /* bytes a pixel: nc * sb */
  /* byte k of a chunk whose first byte is byte ph of a pixel (ph = row
   * offset % pixel) is filtered: bit k of filtered[ph]; 0 on a first
   * frame */
  uint16_t filtered[TM_PHASES];
  uint8_t filter[CUCONV_MAX_COMP];      /* component c filtered (not on a
                                         * first frame) */
};

struct TemporalParams
{
  TemporalPlane pl[TM_PLANES];
  int n;
  uint8_t k[CUCONV_TEMPORAL_LUT];
};

/* A byte mask of the 4 bits of keep: byte k 0xff where bit k is set. */
__device__ __forceinline__ uint32_t
byte_mask (uint32_t keep)
{
  return ((keep * 0x00204081u) & 0x01010101u) * 0xffu;
}

/* The definition's step for one sample, times 256: a the input, b the
 * state, lut the shared-memory address of this
 * lane's copy of the factors (entry d 128 bytes after entry d - 1).
 * 256 a + 128 + t (b - a) is 256 out + r, 0 <= r < 256, for the
 * definition's out = a + ((t (b - a) + 128) >> 8) (an arithmetic shift
 * floors, and out lies between a and b): out is this >> 8, bits 8..15
 * of it for 8-bit samples. */
__device__ __forceinline__ uint32_t
blend256 (uint32_t a, uint32_t b, int down, uint32_t lut)
{
  int t;

  /* the table is written once, before the kernel's barrier */
  asm volatile ("ld.shared.u32 %0, [%1];":"=r" (t)
      :"r" (lut + ((__usad (a, b, 0) >> down) << 7)));
  return (uint32_t) (t * ((int) b - (int) a) + (int) (a * 256 + 128));
}

/* Four 8-bit samples of a word; bytes whose bit of keep is 0 are the
 * input's. */
__device__ __forceinline__ uint32_t
blend_word8 (uint32_t in, uint32_t st, uint32_t keep, uint32_t lut)
{
  uint32_t x[4];

#pragma unroll
  for (int s = 0; s < 4; s++)
    x[s] = blend256 (__byte_perm (in, 0, 0x4440 | s), __byte_perm (st, 0,
            0x4440 | s), 0, lut);
  /* byte 1 of each: out */
  const uint32_t w = __byte_perm (__byte_perm (x[0], x[1], 0x0051),
      __byte_perm (x[2], x[3], 0x0051), 0x5410);

  return keep == 0xf ? w : (w & byte_mask (keep)) | (in & ~byte_mask (keep));
}

/* Two 16-bit samples of a word; a sample whose bits of keep (2 a
 * sample) are 0 is the input's. */
__device__ __forceinline__ uint32_t
blend_word16 (uint32_t in, uint32_t st, uint32_t keep,
    const TemporalPlane & pl, uint32_t lut)
{
  uint32_t o[2];

#pragma unroll
  for (int s = 0; s < 2; s++) {
    const uint32_t a = (in >> (16 * s + pl.shift)) & pl.mask;
    const uint32_t b = (st >> (16 * s + pl.shift)) & pl.mask;

    o[s] = blend256 (a, b, pl.down, lut) >> 8 << pl.shift;
  }
  const uint32_t w = o[0] | o[1] << 16;

  return keep == 0xf ? w : (w & byte_mask (keep)) | (in & ~byte_mask (keep));
}

/* The bytes [lo, hi) of a row, sample by sample: each sample whose first
 * byte lies there. */
__device__ void
chunk_by_sample (const TemporalPlane & pl, const uint8_t * in, uint8_t * st,
    int lo, int hi, uint32_t lut)
{
  const int sb = pl.sb;

  for (int i = (lo + sb - 1) / sb; i * sb < hi; i++) {
    const int c = pl.nc == 3 ? i % 3 : i & (pl.nc - 1);
    uint32_t w = sb == 1 ? in[i] : in[2 * i] | (uint32_t) in[2 * i + 1] << 8;

    if (pl.filter[c]) {
      const uint32_t sw = sb == 1 ? st[i] :
          st[2 * i] | (uint32_t) st[2 * i + 1] << 8;

      w = blend256 ((w >> pl.shift) & pl.mask, (sw >> pl.shift) & pl.mask,
          pl.down, lut) >> 8 << pl.shift;
    }
    st[sb * i] = (uint8_t) w;
    if (sb == 2)
      st[2 * i + 1] = (uint8_t) (w >> 8);
  }
}

/* Unit u of a plane, chunk u % cpr of row u / cpr: where it is, and
 * whether it is a whole chunk equally aligned in the input and the
 * state. */
struct Chunk
{
  const uint8_t *in;
  uint8_t *st;
  int lo;                       /* its first byte in the row: < 0, or
                                 * past row_bytes - 16, when partial */
  bool whole;
};

__device__ __forceinline__ Chunk
locate (const TemporalPlane & pl, unsigned u)
{
  const unsigned y = pl.magic ? __umulhi (u, pl.magic) : u / pl.cpr;
  Chunk c;

  c.in = pl.src + (size_t) y * pl.src_pitch;
  c.st = pl.dst + (size_t) y * pl.dst_pitch;
  c.lo = (int) ((u - y * pl.cpr) * TM_CHUNK) -
      (int) ((uintptr_t) c.in & (TM_CHUNK - 1));
  c.whole = c.lo >= 0 && c.lo + TM_CHUNK <= pl.row_bytes && !(c.lo & (pl.sb - 1)) &&
      !(((uintptr_t) c.st ^ (uintptr_t) c.in) & (TM_CHUNK - 1));
  return c;
}

/* The filtered bytes of a whole chunk. */
__device__ __forceinline__ uint32_t
chunk_filtered (const TemporalPlane & pl, int lo)
{
  return pl.filtered[pl.pixel & (pl.pixel - 1) ? lo % pl.pixel :
      lo & (pl.pixel - 1)];
}

/* A whole chunk: vi the input, vs the state, f its filtered bytes. */
__device__ __forceinline__ uint4
blend_chunk (const TemporalPlane & pl, uint4 vi, uint4 vs, uint32_t f,
    uint32_t lut)
{
  uint4 vo = vi;

  if (f == 0)
    return vo;
  if (pl.sb == 1) {
    vo.x = blend_word8 (vi.x, vs.x, f & 0xf, lut);
    vo.y = blend_word8 (vi.y, vs.y, f >> 4 & 0xf, lut);
    vo.z = blend_word8 (vi.z, vs.z, f >> 8 & 0xf, lut);
    vo.w = blend_word8 (vi.w, vs.w, f >> 12, lut);
  } else {
    vo.x = blend_word16 (vi.x, vs.x, f & 0xf, pl, lut);
    vo.y = blend_word16 (vi.y, vs.y, f >> 4 & 0xf, pl, lut);
    vo.z = blend_word16 (vi.z, vs.z, f >> 8 & 0xf, pl, lut);
    vo.w = blend_word16 (vi.w, vs.w, f >> 12, pl, lut);
  }
  return vo;
}

/* A partial or unequally aligned chunk, sample by sample. */
__device__ __noinline__ void
odd_chunk (const TemporalPlane & pl, const uint8_t * in, uint8_t * st,
    int lo, uint32_t lut)
{
  if (lo < pl.row_bytes)
    chunk_by_sample (pl, in, st, max (lo, 0), min (lo + TM_CHUNK,
            pl.row_bytes), lut);
}

/* A grid sized to the device walks every plane's units in turn, two a
 * thread at a time: both chunks' loads are issued before either is
 * written, four 16-byte loads in flight a thread. */
__global__ void
__launch_bounds__ (TM_THREADS)
temporal_kernel (const __grid_constant__ TemporalParams p)
{
  __shared__ __align__ (16) int lut[CUCONV_TEMPORAL_LUT * TM_LANES];
  const unsigned stride = gridDim.x * TM_THREADS;

  for (int e = threadIdx.x * 4; e < CUCONV_TEMPORAL_LUT * TM_LANES;
      e += TM_THREADS * 4) {
    const int t = p.k[e / TM_LANES];

    *(int4 *) (lut + e) = make_int4 (t, t, t, t);
  }
  __syncthreads ();
  const uint32_t mine = (uint32_t) __cvta_generic_to_shared (lut) +
      4 * (threadIdx.x & (TM_LANES - 1));

#pragma unroll 1
  for (int n = 0; n < p.n; n++) {
    const TemporalPlane & pl = p.pl[n];

    for (unsigned u = blockIdx.x * TM_THREADS + threadIdx.x; u < pl.units;
        u += 2 * stride) {
      const bool two = u + stride < pl.units;
      const Chunk c0 = locate (pl, u);
      const Chunk c1 = locate (pl, two ? u + stride : u);
      const uint32_t f0 = c0.whole ? chunk_filtered (pl, c0.lo) : 0;
      const uint32_t f1 = two && c1.whole ? chunk_filtered (pl, c1.lo) : 0;
      const uint4 zero = make_uint4 (0, 0, 0, 0);
      const uint4 i0 = c0.whole ? __ldcs ((const uint4 *) (c0.in + c0.lo)) :
          zero;
      const uint4 i1 = two && c1.whole ?
          __ldcs ((const uint4 *) (c1.in + c1.lo)) : zero;
      const uint4 s0 = f0 ? __ldcs ((const uint4 *) (c0.st + c0.lo)) : zero;
      const uint4 s1 = f1 ? __ldcs ((const uint4 *) (c1.st + c1.lo)) : zero;

      if (c0.whole)
        *(uint4 *) (c0.st + c0.lo) = blend_chunk (pl, i0, s0, f0, mine);
      else
        odd_chunk (pl, c0.in, c0.st, c0.lo, mine);
      if (two) {
        if (c1.whole)
          *(uint4 *) (c1.st + c1.lo) = blend_chunk (pl, i1, s1, f1, mine);
        else
          odd_chunk (pl, c1.in, c1.st, c1.lo, mine);
      }
    }
  }
}

/* The plane's entry of a launch; false for a plane with nothing to do. */
static bool
plane_entry (const CuconvPlane & pl, int first, TemporalPlane & e)
{
  const int depth = pl.depth > 8 ? pl.depth : 8;

  memset (&e, 0, sizeof (e));
  if (pl.width <= 0 || pl.height <= 0)
    return false;
  e.src = pl.src;
  e.dst = pl.dst;
  e.src_pitch = (size_t) pl.src_stride;
  e.dst_pitch = (size_t) pl.dst_stride;
  e.nc = pl.n_comp;
  e.sb = cuconv_plane_sample_bytes (&pl);
  e.row_bytes = pl.width * pl.n_comp * e.sb;
  e.shift = depth == 8 ? 0 : pl.shift;
  e.down = depth - 8;
  e.mask = (1u << depth) - 1;
  e.pixel = e.nc * e.sb;
  /* one more chunk where rows may start anywhere in one */
  e.cpr = (unsigned) ((e.row_bytes + TM_CHUNK - 1) / TM_CHUNK);
  if ((((uintptr_t) pl.src | (size_t) pl.src_stride) & (TM_CHUNK - 1)) != 0)
    e.cpr++;
  e.units = e.cpr * (unsigned) pl.height;
  /* umulhi (u, ceil (2^32 / cpr)) = u / cpr while u * cpr < 2^32 */
  if (e.cpr > 1 && (unsigned long long) e.units * e.cpr < (1ull << 32))
    e.magic = (unsigned) ((1ull << 32) / e.cpr + 1);
  for (int c = 0; c < e.nc; c++)
    e.filter[c] = !first && pl.op[c] == CUCONV_COMP_FILTER;
  for (int ph = 0; ph < e.pixel; ph++)
    for (int k = 0; k < TM_CHUNK && !first; k++) {
      const int c = (ph + k) % e.pixel / e.sb;

      if (pl.op[c] == CUCONV_COMP_FILTER)
        e.filtered[ph] |= (uint16_t) (1u << k);
    }
  return true;
}

}                               /* namespace cuconv */

using namespace cuconv;

extern "C" int
cuconv_temporal_device (const CuconvPlane * planes, int n_planes,
    const uint8_t * k, int first, void *stream, CuconvStatus * st)
{
  int n = 0, sms;
  TemporalParams p;

  for (int i = 0; i < n_planes; i++) {
    const CuconvPlane & pl = planes[i];
    const int depth = pl.depth > 8 ? pl.depth : 8;

    if (pl.n_comp < 1 || pl.n_comp > CUCONV_MAX_COMP || depth > 16)
      return fail (st, "the GPU cannot denoise this plane",
          cudaErrorInvalidValue);
  }
  cudaError_t e = device_sm_count (&sms);
  if (e != cudaSuccess)
    return fail (st, "the GPU failed to denoise a frame", e);

  memset (&p, 0, sizeof (p));
  memcpy (p.k, k, CUCONV_TEMPORAL_LUT);
  for (int i = 0; i < n_planes; i++) {
    unsigned most = 0;

    if (plane_entry (planes[i], first, p.pl[n]))
      n++;
    if (n < TM_PLANES && i + 1 < n_planes)
      continue;
    if (n == 0)
      continue;
    p.n = n;
    for (int j = 0; j < n; j++)
      most = p.pl[j].units > most ? p.pl[j].units : most;
    /* a block an SM, or fewer for a small frame: every thread has two
     * units of the largest plane */
    const unsigned blocks = (most + 2 * TM_THREADS - 1) / (2 * TM_THREADS);
    temporal_kernel <<< blocks < (unsigned) sms ? blocks : (unsigned) sms,
        TM_THREADS, 0, (cudaStream_t) stream >>> (p);
    e = cudaGetLastError ();
    if (e != cudaSuccess)
      return fail (st, "the GPU failed to denoise a frame", e);
    n = 0;
  }
  return 0;
}
