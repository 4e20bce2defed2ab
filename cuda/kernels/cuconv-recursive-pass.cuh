/* gst-cudaconvolve: the recursive gaussian's passes (cuconv-recursive.cu):
 * their parameters, the complex arithmetic of their states, and the
 * block's tile of samples, loaded from and stored to the plane or the
 * transposed intermediate.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_RECURSIVE_PASS_CUH__
#define __CUCONV_RECURSIVE_PASS_CUH__

#include <stdint.h>

#include <cuda_runtime.h>

#include "cuconv-recursive.h"
#include "cuconv-tile.cuh"

namespace cuconv {

constexpr int SEG = 32;         /* samples a thread (a segment) */
constexpr int NSEG = 8;         /* segments a band: warps a block */
constexpr int BAND = SEG * NSEG;
constexpr int LINES = 32;       /* lines a block: a lane each */
constexpr int TILE_PITCH = LINES + 1;   /* odd: conflict-free both ways */

/* What a pass reads or writes. */
enum RecKind
{
  REC_SRC = 0,                  /* the plane's samples (src) */
  REC_FIX16,                    /* the intermediate, 16-bit fixed point */
  REC_F32,                      /* the intermediate, float */
  REC_DST,                      /* the plane's output (dst): rounded, ops */
};

/* One pass over a plane: along its columns (lines are sample columns g,
 * sample k is row k) or its rows (lines are rows, sample k of component c
 * is at g = k nc + c).  The plane is row-major; the intermediate (mid) is
 * stored transposed: sample (row, g) at mid + g mid_pitch + row * size. */
struct RecPass
{
  const uint8_t *src;
  uint8_t *dst;
  uint8_t *mid;
  size_t src_pitch, dst_pitch, mid_pitch;
  int in_kind, out_kind;
  int rows;                     /* 1: along the rows */
  int nlines;                   /* lines (of one component, for rows) */
  int width, height, nc;
  int bytes;                    /* a plane sample's: 1 or 2 */
  int shift;                    /* a sample is (word >> shift) & mask */
  uint32_t mask, word_mask;
  uint32_t fill;                /* the FILL word, shifted */
  uint8_t op[CUCONV_MAX_COMP];
  int border;
  int sharpen;
  float amount;
  float fix_scale, fix_inv;     /* REC_FIX16: value * scale, rounded */
  int n;                        /* samples along the direction */
  void *agg;                    /* [band][2][ns][comp][line] complex R: the
                                 * bands' zero-initial totals */
  void *segs;                   /* [segment][2][ns][comp][line] complex R:
                                 * each segment's zero-initial end states */
};

/* Complex arithmetic in R (float; double from 13 bits up) --------------- */

template < typename R > struct CplxOf;
template <> struct CplxOf < float > { typedef float2 T; };
template <> struct CplxOf < double > { typedef double2 T; };
template < typename R > using Cplx = typename CplxOf < R >::T;

template < typename R > __device__ __forceinline__ Cplx < R >
cplx (R re, R im)
{
  Cplx < R > z;

  z.x = re;
  z.y = im;
  return z;
}

/* v + m u */
template < typename R > __device__ __forceinline__ Cplx < R >
cmad (Cplx < R > m, Cplx < R > u, Cplx < R > v)
{
  return cplx < R > (fma (m.x, u.x, fma (-m.y, u.y, v.x)),
      fma (m.x, u.y, fma (m.y, u.x, v.y)));
}

template < typename R > __device__ __forceinline__ Cplx < R >
cmul (Cplx < R > m, Cplx < R > u)
{
  return cmad < R > (m, u, cplx < R > (0, 0));
}

/* CuconvRecDir (seg = SEG, group = NSEG) in R: the same fields, rounded to
 * float below 13 bits, where float sums are exact enough; from 13 bits on
 * the rounding of float states near a full-range edge adds up to half an
 * LSB at sigma 256 (docs/design.md, "The recursive gaussian"), so the
 * states, the sums and every constant are double there. */
template < typename R > struct RecDir
{
  int n, n_sections, n_segs, n_groups, tail;
  R c;
  Cplx < R > p[CUCONV_REC_MAX_SECTIONS], a[CUCONV_REC_MAX_SECTIONS];
  Cplx < R > pk[CUCONV_REC_MAX_SECTIONS][CUCONV_REC_MAX_SEG + 1];
  Cplx < R > pseg[CUCONV_REC_MAX_SECTIONS][CUCONV_REC_PSEG];
  Cplx < R > pinv[CUCONV_REC_MAX_SECTIONS], clamp[CUCONV_REC_MAX_SECTIONS];
  Cplx < R > wrap[CUCONV_REC_MAX_SECTIONS], mirror_p[CUCONV_REC_MAX_SECTIONS];
  Cplx < R > mirror_d[CUCONV_REC_MAX_SECTIONS];
  Cplx < R > pgroup[CUCONV_REC_MAX_SECTIONS], pborder[CUCONV_REC_MAX_SECTIONS];
};

/* Samples -------------------------------------------------------------- */

/* The plane position (row, g) of sample k of line `line` (component c). */
__device__ __forceinline__ void
pass_pos (const RecPass & p, int line, int k, int c, int &row, int &g)
{
  if (p.rows) {
    row = line;
    g = k * p.nc + c;
  } else {
    row = k;
    g = line;
  }
}

/* The sample at (row, g) of what the pass reads, as a float. */
__device__ __forceinline__ float
rec_load (const RecPass & p, int row, int g)
{
  if (p.in_kind == REC_SRC) {
    const uint8_t *r = p.src + (size_t) row * p.src_pitch;
    return sample_to_float (p.bytes == 1 ? r[g] :
        (((const uint16_t *) r)[g] >> p.shift) & p.mask);
  }
  const uint8_t *m = p.mid + (size_t) g * p.mid_pitch;
  if (p.in_kind == REC_FIX16)
    return sample_to_float (((const uint16_t *) m)[row]) * p.fix_inv;
  return ((const float *) m)[row];
}

/* Whether memory holds the block's lines side by side (a warp then moves
 * 32 lines of one sample), rather than each line's samples. */
__device__ __forceinline__ bool
lines_adjacent (const RecPass & p, int kind)
{
  const bool plane = kind == REC_SRC || kind == REC_DST;
  return p.rows ? !plane : plane;
}

/* The block's tile ------------------------------------------------------- */

/* The block: lines line0 .. line0 + 31 of component c, band `band`. */
struct TileIdx
{
  int line0, c, band;
};

__device__ __forceinline__ TileIdx
tile_idx (const RecPass & p)
{
  TileIdx t;

  t.line0 = blockIdx.x * LINES;
  t.c = p.rows ? (int) blockIdx.z : 0;
  t.band = blockIdx.y;
  return t;
}

/* Line `line`'s component (columns: the sample column's). */
__device__ __forceinline__ int
line_comp (const RecPass & p, const TileIdx & t, int line)
{
  return p.rows ? t.c : p.nc == 1 ? 0 : line % p.nc;
}

__device__ __forceinline__ bool
line_filtered (const RecPass & p, const TileIdx & t, int line)
{
  return line < p.nlines && p.op[line_comp (p, t, line)] ==
      CUCONV_COMP_FILTER;
}

/* Where sample k of line `line` of the tile's component lies in the plane
 * (pitch, `size`-byte samples) or the intermediate: base + line * lstride
 * + k * kstride. */
struct Side
{
  const uint8_t *base;
  size_t lstride, kstride;
};

__device__ __forceinline__ Side
plane_side (const RecPass & p, const TileIdx & t, const uint8_t * plane,
    size_t pitch)
{
  if (p.rows)
    return {plane + (size_t) t.c * p.bytes, pitch, (size_t) p.nc * p.bytes};
  return {plane, (size_t) p.bytes, pitch};
}

__device__ __forceinline__ Side
mid_side (const RecPass & p, const TileIdx & t, int size)
{
  if (p.rows)
    return {p.mid + (size_t) t.c * p.mid_pitch, (size_t) size,
        (size_t) p.nc * p.mid_pitch};
  return {p.mid, p.mid_pitch, (size_t) size};
}

/* A thread's share of the tile: elements j = 0..TILE_ELEMS - 1, of lane
 * lane (j) and sample k (j) of the band.  ACROSS: a warp takes one sample
 * of the 32 lines (lane = threadIdx.x, k = threadIdx.y + NSEG j), else 32
 * samples of one line (lane = j, k = the thread's index). */
constexpr int TILE_ELEMS = LINES * BAND / (LINES * NSEG);

template < bool ACROSS > struct Share
{
  int lane0, k0;                /* element 0's lane and band sample */
  int dlane, dk;                /* their steps from j to j + 1 */
  size_t off0, doff;            /* its offset in a side, and the step */

    __device__ __forceinline__ Share (const TileIdx & t, const Side & sd)
  {
    const int tid = threadIdx.y * LINES + threadIdx.x;

    lane0 = ACROSS ? threadIdx.x : 0;
    k0 = ACROSS ? threadIdx.y : tid;
    dlane = ACROSS ? 0 : 1;
    dk = ACROSS ? NSEG : 0;
    off0 = (size_t) (t.line0 + lane0) * sd.lstride
        + (size_t) (t.band * BAND + k0) * sd.kstride;
    doff = ACROSS ? NSEG * sd.kstride : sd.lstride;
  }
};

/* The sample at a as a float, read as the pass's input kind. */
template < int KIND, int BYTES > __device__ __forceinline__ float
load_sample (const RecPass & p, const uint8_t * a)
{
  if (KIND == REC_F32)
    return __ldg ((const float *) a);
  if (KIND == REC_FIX16)
    return sample_to_float (__ldg ((const uint16_t *) a)) * p.fix_inv;
  if (BYTES == 1)
    return sample_to_float (__ldg (a));
  return sample_to_float ((__ldg ((const uint16_t *) a) >> p.shift) & p.mask);
}

/* Loads in flight a thread. */
constexpr int LOAD_BATCH = 16;

/* How many of a thread's elements, from element 0 on, lie in the plane:
 * ACROSS, the samples before the line's end, else the lines before the
 * last (0 if none, may pass TILE_ELEMS).  The others are zeros in, and
 * are not stored. */
template < bool ACROSS > __device__ __forceinline__ int
share_end (const RecPass & p, const TileIdx & t, const Share < ACROSS > &sh)
{
  if (ACROSS)
    return max (p.n - t.band * BAND - sh.k0 + NSEG - 1, 0) / NSEG;
  return p.nlines - t.line0;
}

/* The tile into ts[k][lane], zeros past the line's end and for lines not
 * filtered.  An element's address is its batch's plus a 32-bit offset and
 * its bound one count, so it costs little more than a load, a conversion
 * and a store. */
template < bool ACROSS, int KIND, int BYTES > __device__ void
load_tile_as (const RecPass & p, const TileIdx & t, const Side & sd,
    float *ts)
{
  const Share < ACROSS > sh (t, sd);
  /* what does not change along the share */
  const bool fixed_in = ACROSS ? line_filtered (p, t, t.line0 + sh.lane0) :
      t.band * BAND + sh.k0 < p.n && p.op[t.c] == CUCONV_COMP_FILTER;
  const int end = fixed_in ? share_end < ACROSS > (p, t, sh) : 0;
  const uint8_t *a = sd.base + sh.off0;
  /* a batch spans 16 steps of at most 8 rows (a component's): far less
   * than 4 GiB */
  const uint32_t step = (uint32_t) sh.doff;

#pragma unroll 1
  for (int j0 = 0; j0 < TILE_ELEMS; j0 += LOAD_BATCH) {
    const int left = end - j0;
    float v[LOAD_BATCH];

#pragma unroll
    for (int j = 0; j < LOAD_BATCH; j++)
      v[j] = j < left ? load_sample < KIND, BYTES > (p, a + j * step) : 0.0f;
    a += LOAD_BATCH * sh.doff;
#pragma unroll
    for (int j = 0; j < LOAD_BATCH; j++) {
      const int q = j0 + j;
      ts[(sh.k0 + q * sh.dk) * TILE_PITCH + sh.lane0 + q * sh.dlane] = v[j];
    }
  }
}

__device__ void
load_tile (const RecPass & p, const TileIdx & t, float *ts)
{
  if (p.in_kind == REC_FIX16)
    load_tile_as < true, REC_FIX16, 2 > (p, t, mid_side (p, t, 2), ts);
  else if (p.in_kind == REC_F32)
    load_tile_as < true, REC_F32, 4 > (p, t, mid_side (p, t, 4), ts);
  else if (!p.rows && p.bytes == 1)
    load_tile_as < true, REC_SRC, 1 > (p, t, plane_side (p, t, p.src,
            p.src_pitch), ts);
  else if (!p.rows)
    load_tile_as < true, REC_SRC, 2 > (p, t, plane_side (p, t, p.src,
            p.src_pitch), ts);
  else if (p.bytes == 1)
    load_tile_as < false, REC_SRC, 1 > (p, t, plane_side (p, t, p.src,
            p.src_pitch), ts);
  else
    load_tile_as < false, REC_SRC, 2 > (p, t, plane_side (p, t, p.src,
            p.src_pitch), ts);
}

/* The tile out from ts: to the intermediate (filtered lines only), or as
 * output words, combined, rounded and shifted, or copied or filled as the
 * line's component's op says.  A thread's elements share one op: ACROSS
 * they are one line's, and the other way only the rows write the plane,
 * all of one component; the intermediate takes the filtered lines, a bit
 * a lane of a ballot. */
template < bool ACROSS > __device__ void
store_tile_as (const RecPass & p, const TileIdx & t, const float *ts)
{
  const int size = p.out_kind == REC_F32 ? 4 : 2;
  const bool dst = p.out_kind == REC_DST;
  const Side sd = dst ? plane_side (p, t, p.dst, p.dst_pitch) :
      mid_side (p, t, size);
  const Share < ACROSS > sh (t, sd);
  /* the source sample of an output (copies, sharpen): the same place in
   * src as in dst, pitch aside */
  const Side ss = plane_side (p, t, p.src, p.src_pitch);
  const Share < ACROSS > shs (t, ss);
  const int end = min (share_end < ACROSS > (p, t, sh), TILE_ELEMS);
  const uint32_t filtered = __ballot_sync (0xffffffffu,
      line_filtered (p, t, t.line0 + (int) threadIdx.x));
  const int op = p.op[ACROSS ? line_comp (p, t, t.line0 + sh.lane0) : t.c];
  uint32_t live;
  uint8_t *o = (uint8_t *) sd.base + sh.off0;
  const uint8_t *a = ss.base + shs.off0;

  /* bit q: element q goes out */
  live = end <= 0 ? 0u : end >= 32 ? 0xffffffffu : (1u << end) - 1;
  if (ACROSS) {
    if (t.line0 + sh.lane0 >= p.nlines || (!dst && op != CUCONV_COMP_FILTER))
      live = 0;
  } else if (t.band * BAND + sh.k0 >= p.n) {
    live = 0;
  } else if (!dst) {
    live &= filtered;
  }

  /* one loop a case, so that an element's work branches only on its
   * bit, and on nothing where every element goes out (inside the plane):
   * out (v, at, from) writes value v at `at`, `from` its source sample */
  auto each =[&](auto out) {
    if (live == 0xffffffffu) {
#pragma unroll 8
      for (int q = 0; q < TILE_ELEMS; q++, o += sh.doff, a += shs.doff)
        out (ts[(sh.k0 + q * sh.dk) * TILE_PITCH + sh.lane0 + q * sh.dlane],
            o, a);
    } else {
#pragma unroll 8
      for (int q = 0; q < TILE_ELEMS; q++, o += sh.doff, a += shs.doff)
        if (live >> q & 1)
          out (ts[(sh.k0 + q * sh.dk) * TILE_PITCH + sh.lane0
                  + q * sh.dlane], o, a);
    }
  };
  auto put =[&](uint8_t * at, uint32_t w) {
    if (p.bytes == 1)
      *at = (uint8_t) w;
    else
      *(uint16_t *) at = (uint16_t) w;
  };

  if (!dst && p.out_kind == REC_FIX16) {
    const float scale = p.fix_scale;

    each ([&](float v, uint8_t * at, const uint8_t *) {
          *(uint16_t *) at =
              (uint16_t) min (__float2uint_rn (v * scale), 65535u);});
  } else if (!dst) {
    each ([&](float v, uint8_t * at, const uint8_t *) {
          *(float *) at = v;});
  } else if (op == CUCONV_COMP_FILL) {
    each ([&](float, uint8_t * at, const uint8_t *) {
          put (at, p.fill);});
  } else if (op == CUCONV_COMP_COPY) {
    each ([&](float, uint8_t * at, const uint8_t * from) {
          put (at, p.bytes == 1 ? __ldg (from) :
              __ldg ((const uint16_t *) from));});
  } else if (p.sharpen) {
    each ([&](float v, uint8_t * at, const uint8_t * from) {
          const uint32_t in = p.bytes == 1 ? __ldg (from) :
          __ldg ((const uint16_t *) from);
          const float x = sample_to_float ((in >> p.shift) & p.mask);

          v = __fadd_rn (x, __fmul_rn (p.amount, __fsub_rn (x, v)));
          put (at, (cuconv_round_sat (v, p.mask) << p.shift) & p.word_mask);});
  } else {
    each ([&](float v, uint8_t * at, const uint8_t *) {
          put (at, (cuconv_round_sat (v, p.mask) << p.shift) & p.word_mask);});
  }
}

__device__ void
store_tile (const RecPass & p, const TileIdx & t, const float *ts)
{
  if (lines_adjacent (p, p.out_kind))
    store_tile_as < true > (p, t, ts);
  else
    store_tile_as < false > (p, t, ts);
}

}                               /* namespace cuconv */

#endif /* __CUCONV_RECURSIVE_PASS_CUH__ */
