/* gst-cudaconvolve: the untruncated gaussian by recursive filtering
 * (docs/design.md, "The recursive gaussian"), at a cost that does not
 * depend on sigma.
 *
 * Each direction is a sum of complex one-pole sections, causal and
 * anticausal (cuconv-recursive.h), run block-parallel over lines (the
 * columns of the plane, then its rows).  A block owns a tile of 32 lines
 * by a band of 256 samples, staged in shared memory; a thread owns a
 * segment of 32 samples of one line.  Two kernels a direction:
 *
 *   rec_bands   each segment's zero-initial end states, saved, and
 *               combined into each band's (a few values a line and band,
 *               to global memory)
 *   rec_filter  a thread a line and section carries all the bands' totals
 *               into the border's initial states and the states entering
 *               its block's band; every thread carries them through the
 *               saved states of the segments before (after) its own to its
 *               segment, runs its recursions from its true states, and the
 *               tile goes out
 *
 * The columns write an intermediate stored transposed (a column of the
 * plane is a row of it), so that the rows read it with the lines in the
 * fast direction, exactly as the columns read the plane: both directions
 * load and store whole 32-line rows or 256-sample runs, coalesced.
 *
 * Samples are floats; the states, the band totals and each sample's sum
 * over the sections are floats up to 12 bits and doubles above (RecDir).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-recursive.h"
#include "cuconv-recursive-border.h"
#include "cuconv-recursive-pass.cuh"

namespace cuconv {

/* One segment ------------------------------------------------------------ */

/* Samples of this thread's segment: x (k) = xs[k * TILE_PITCH]. */

/* The zero-initial states of every section over the segment's first len
 * samples (the rest are zeros): ec, the causal state at sample len - 1,
 * and ea, the anticausal state at sample 0. */
template < typename R, int NS, bool TAIL > __device__ __forceinline__ void
seg_states (const RecDir < R > &d, const float *xs, int len, Cplx < R > *ec,
    Cplx < R > *ea)
{
#pragma unroll
  for (int s = 0; s < NS; s++)
    ec[s] = ea[s] = cplx < R > (0, 0);
#pragma unroll
  for (int k = 0; k < SEG; k++) {
    const R v = xs[k * TILE_PITCH];
#pragma unroll
    for (int s = 0; s < NS; s++) {
      const Cplx < R > wa = d.pk[s][k];

      if (!TAIL) {
        const Cplx < R > wc = d.pk[s][SEG - 1 - k];
        ec[s].x = fma (wc.x, v, ec[s].x);
        ec[s].y = fma (wc.y, v, ec[s].y);
      } else if (k < len) {
        ec[s] = cmad < R > (d.p[s], ec[s], cplx < R > (v, 0));
      }
      ea[s].x = fma (wa.x, v, ea[s].x);
      ea[s].y = fma (wa.y, v, ea[s].y);
    }
  }
}

/* The segment filtered from its true states: z, each section's causal
 * state before sample 0, and w, its anticausal state after sample
 * len - 1: y[k] = sum_s Re (a_s (z_s[k] + w_s[k])) - c x[k], summed in R
 * a sample at a time (the sections' terms are far larger than y and
 * cancel), y itself a float between the two runs. */
template < typename R, int NS, bool TAIL > __device__ __forceinline__ void
seg_filter (const RecDir < R > &d, const float *xs, int len, Cplx < R > *z,
    Cplx < R > *w, float *y)
{
  const volatile float *xv = xs;

#pragma unroll
  for (int k = 0; k < SEG; k++) {
    const R v = xs[k * TILE_PITCH];
    R acc = -d.c * v;
#pragma unroll
    for (int s = 0; s < NS; s++) {
      z[s] = cmad < R > (d.p[s], z[s], cplx < R > (v, 0));
      acc = fma (d.a[s].x, z[s].x, fma (-d.a[s].y, z[s].y, acc));
    }
    y[k] = (float) acc;
  }
#pragma unroll
  for (int k = SEG - 1; k >= 0; k--) {
    if (!TAIL || k < len) {
      /* read again, not kept from the first run: y and x both held in
       * registers would cost a resident block a multiprocessor */
      const R v = xv[k * TILE_PITCH];
      R acc = y[k];
#pragma unroll
      for (int s = 0; s < NS; s++) {
        w[s] = cmad < R > (d.p[s], w[s], cplx < R > (v, 0));
        acc = fma (d.a[s].x, w[s].x, fma (-d.a[s].y, w[s].y, acc));
      }
      y[k] = (float) acc;
    }
  }
}

/* m x, x real, each part one product: the clamp's states */
template < typename R > __device__ __forceinline__ Cplx < R >
cscale (Cplx < R > m, R x)
{
  return cplx < R > (m.x * x, m.y * x);
}

/* The border's initial states of section s (cuconv-recursive-border.h),
 * in R with fused multiply-adds. */
CUCONV_REC_BORDER_STATES (template < typename R > __device__ __forceinline__,
    border_states, R, Cplx < R >, RecDir < R >, x, y, cplx < R >, cmul < R >,
    cmad < R >, cscale < R >)

/* The kernels ------------------------------------------------------------ */

/* Shared memory: the tile, then the segments' zero-initial states
 * [NSEG - 1][NS][LINES] in R: the causal ones of all but the band's last
 * segment (ec[q] is segment q's), the anticausal ones of all but its first
 * (ea[q] is segment q + 1's): what the other warps carry through; then
 * (rec_filter) the states entering the band [NS][LINES], causal (zin) and
 * anticausal (win). */
template < typename R, int NS > struct RecSmem
{
  static constexpr size_t TILE = (size_t) BAND * TILE_PITCH * sizeof (float);
  static constexpr size_t STATES = (size_t) (NSEG - 1) * NS * LINES
      * sizeof (Cplx < R >);
  static constexpr size_t ENTRY = (size_t) NS * LINES * sizeof (Cplx < R >);
  static constexpr size_t BANDS = TILE + 2 * STATES;
  static constexpr size_t FILTER = BANDS + 2 * ENTRY;
};

template < typename R, int NS > struct RecShared
{
  float *ts;
  Cplx < R > (*ec)[NS][LINES];
  Cplx < R > (*ea)[NS][LINES];
  Cplx < R > (*zin)[LINES];
  Cplx < R > (*win)[LINES];
};

/* Band totals of section s, direction dir (0 causal, 1 anticausal), of
 * line `line` of component c. */
template < typename R > __device__ __forceinline__ Cplx < R > &
band_agg (const RecPass & p, int ns, int band, int dir, int s, int c,
    int line)
{
  const int comps = p.rows ? p.nc : 1;
  return ((Cplx < R > *) p.agg)[(((size_t) (band * 2 + dir) * ns + s)
          * comps + c) * p.nlines + line];
}

/* Segment seg's zero-initial end state of section s, direction dir (0
 * causal, at its last sample; 1 anticausal, at its first), of line `line`
 * of component c: rec_bands saves what rec_filter would compute again. */
template < typename R > __device__ __forceinline__ Cplx < R > &
seg_end (const RecPass & p, int ns, int seg, int dir, int s, int c, int line)
{
  const int comps = p.rows ? p.nc : 1;
  return ((Cplx < R > *) p.segs)[(((size_t) (seg * 2 + dir) * ns + s)
          * comps + c) * p.nlines + line];
}

/* The block's shared memory, laid out as RecSmem says. */
template < typename R, int NS > __device__ __forceinline__ RecShared < R, NS >
rec_shared ()
{
  extern __shared__ __align__ (16) unsigned char smem[];
  typedef RecSmem < R, NS > Smem;
  RecShared < R, NS > sh;

  sh.ts = (float *) smem;
  sh.ec = (Cplx < R > (*)[NS][LINES]) (smem + Smem::TILE);
  sh.ea = (Cplx < R > (*)[NS][LINES]) (smem + Smem::TILE + Smem::STATES);
  sh.zin = (Cplx < R > (*)[LINES]) (smem + Smem::BANDS);
  sh.win = (Cplx < R > (*)[LINES]) (smem + Smem::BANDS + Smem::ENTRY);
  return sh;
}

/* What rec_bands and rec_filter both begin with: tile t staged in the
 * block's shared memory sh (rec_shared), and this thread's segment's
 * zero-initial states in c (causal) and a (anticausal), shared as RecSmem
 * says; returns the samples the segment holds (0 past the line's end).
 * rec_bands (SAVED false) computes the states and saves them (seg_end);
 * rec_filter (SAVED true) reads them back, and one barrier serves the
 * tile and the states. */
template < typename R, int NS, bool SAVED > __device__ __forceinline__ int
stage_tile (const RecPass & p, const RecDir < R > &d, const TileIdx & t,
    const RecShared < R, NS > &sh, Cplx < R > *c, Cplx < R > *a)
{
  const int ty = threadIdx.y, lane = threadIdx.x, line = t.line0 + lane;
  const int seg = t.band * NSEG + ty;
  const int len = seg < d.n_segs - 1 ? SEG : seg == d.n_segs - 1 ? d.tail : 0;
  const float *xs = sh.ts + ty * SEG * TILE_PITCH + lane;

  if (SAVED) {
#pragma unroll
    for (int s = 0; s < NS; s++) {
      c[s] = a[s] = cplx < R > (0, 0);
      if (line < p.nlines) {
        c[s] = seg_end < R > (p, NS, seg, 0, s, t.c, line);
        a[s] = seg_end < R > (p, NS, seg, 1, s, t.c, line);
      }
    }
  }
  load_tile (p, t, sh.ts);
  if (!SAVED) {
    __syncthreads ();
    if (len == SEG)
      seg_states < R, NS, false > (d, xs, len, c, a);
    else
      seg_states < R, NS, true > (d, xs, len, c, a);
    if (line < p.nlines) {
#pragma unroll
      for (int s = 0; s < NS; s++) {
        seg_end < R > (p, NS, seg, 0, s, t.c, line) = c[s];
        seg_end < R > (p, NS, seg, 1, s, t.c, line) = a[s];
      }
    }
  }
#pragma unroll
  for (int s = 0; s < NS; s++) {
    if (ty < NSEG - 1)
      sh.ec[ty][s][lane] = c[s];
    if (ty > 0)
      sh.ea[ty - 1][s][lane] = a[s];
  }
  __syncthreads ();
  return len;
}

/* Resident blocks a multiprocessor, as many as fit in the registers
 * without spilling (sm_75 and sm_90): more sections take more registers,
 * double states twice as many.  rec_bands holds the sections' sums of a
 * segment, rec_filter a segment's outputs.  With float states a
 * multiprocessor of sm_80 on holds the shared memory of four blocks. */
template < typename R, int NS > constexpr int
rec_bands_blocks ()
{
  return sizeof (R) == 8 ? 1 : NS == 2 ? 3 : 2;
}

template < typename R, int NS > constexpr int
rec_filter_blocks ()
{
  return sizeof (R) == 4 ? 3 : NS == 2 ? 2 : 1;
}

/* Pass 1: each band's zero-initial totals, the causal state at its end
 * (the last band: at the line's last sample), by the warp of its last
 * segment, and the anticausal state at its start, by warp 0. */
template < typename R, int NS > __global__ void
__launch_bounds__ (LINES * NSEG, rec_bands_blocks < R, NS > ())
rec_bands (const __grid_constant__ RecPass p,
    const __grid_constant__ RecDir < R > d)
{
  const TileIdx t = tile_idx (p);
  const int ty = threadIdx.y, lane = threadIdx.x, line = t.line0 + lane;
  const int last = min (NSEG, d.n_segs - t.band * NSEG) - 1;
  const RecShared < R, NS > sh = rec_shared < R, NS > ();
  Cplx < R > c[NS], a[NS];

  stage_tile < R, NS, false > (p, d, t, sh, c, a);
  if ((ty != last && ty != 0) || !line_filtered (p, t, line))
    return;
#pragma unroll
  for (int s = 0; s < NS; s++) {
    const Cplx < R > pl = d.pseg[s][1];
    Cplx < R > acc = cplx < R > (0, 0);

    if (ty == last) {
      for (int y = 0; y < last; y++)
        acc = cmad < R > (pl, acc, sh.ec[y][s][lane]);
      acc = cmad < R > (t.band * NSEG + last == d.n_segs - 1 ?
          d.pk[s][d.tail] : pl, acc, c[s]);
      band_agg < R > (p, NS, t.band, 0, s, t.c, line) = acc;
    }
    if (ty == 0) {
      acc = cplx < R > (0, 0);
      for (int y = last; y > 0; y--)
        acc = cmad < R > (pl, acc, sh.ea[y - 1][s][lane]);
      band_agg < R > (p, NS, t.band, 1, s, t.c, line) = cmad < R > (pl, acc,
          a[s]);
    }
  }
}

/* The states of section s entering band `band` of line `line` of
 * component c, from every band's zero-initial totals: zin, the causal
 * state before the band's first sample; win, the anticausal state after
 * its last (the last band: w[n], the border's).  The line's totals come
 * first (the causal state at n - 1, the anticausal one at 0), then the
 * border's initial states, then the chains from either end to the band.
 * Every block of a line makes the same operations in the same order, so
 * the bands of a line start from the same states. */
template < typename R, int NS > __device__ void
band_entry (const RecPass & p, const RecDir < R > &d, int c, int line,
    int s, int band, Cplx < R > &zin, Cplx < R > &win)
{
  const int last = d.n_groups - 1;
  const Cplx < R > pg = d.pgroup[s], pb = d.pborder[s];
  Cplx < R > zc = cplx < R > (0, 0), za, sc, sa;
  R x0, xn;
  int row, g;

  pass_pos (p, line, 0, c, row, g);
  x0 = rec_load (p, row, g);
  pass_pos (p, line, d.n - 1, c, row, g);
  xn = rec_load (p, row, g);
#pragma unroll 8
  for (int b = 0; b < last; b++)
    zc = cmad < R > (pg, zc, band_agg < R > (p, NS, b, 0, s, c, line));
  zc = cmad < R > (pb, zc, band_agg < R > (p, NS, last, 0, s, c, line));
  za = band_agg < R > (p, NS, last, 1, s, c, line);
#pragma unroll 8
  for (int b = last - 1; b >= 0; b--)
    za = cmad < R > (pg, za, band_agg < R > (p, NS, b, 1, s, c, line));
  border_states < R > (&d, s, p.border, x0, xn, zc, za, &sc, &sa);

  zin = sc;
#pragma unroll 4
  for (int b = 0; b < band; b++)
    zin = cmad < R > (pg, zin, band_agg < R > (p, NS, b, 0, s, c, line));
  win = sa;
#pragma unroll 4
  for (int b = last; b > band; b--)
    win = cmad < R > (b == last ? pb : pg, win,
        band_agg < R > (p, NS, b, 1, s, c, line));
}

/* Pass 2: the tile filtered from its true states, and out.  Warps
 * 0 .. NS - 1 find the states entering the band, a section each
 * (band_entry); each warp carries them to its own segment through the
 * segments before it (causal) or after it (anticausal) in the band. */
template < typename R, int NS > __global__ void
__launch_bounds__ (LINES * NSEG, rec_filter_blocks < R, NS > ())
rec_filter (const __grid_constant__ RecPass p,
    const __grid_constant__ RecDir < R > d)
{
  const TileIdx t = tile_idx (p);
  const int ty = threadIdx.y, lane = threadIdx.x, line = t.line0 + lane;
  const int nseg = min (NSEG, d.n_segs - t.band * NSEG);
  const bool filtered = line_filtered (p, t, line);
  const RecShared < R, NS > sh = rec_shared < R, NS > ();
  Cplx < R > z[NS], w[NS];

  /* read after stage_tile's barrier */
  if (ty < NS && filtered)
    band_entry < R, NS > (p, d, t.c, line, ty, t.band, sh.zin[ty][lane],
        sh.win[ty][lane]);

  const int len = stage_tile < R, NS, true > (p, d, t, sh, z, w);
  float *xs = sh.ts + ty * SEG * TILE_PITCH + lane;

  if (filtered && len > 0) {
    float y[SEG];

#pragma unroll
    for (int s = 0; s < NS; s++) {
      const Cplx < R > pl = d.pseg[s][1];

      z[s] = sh.zin[s][lane];
      for (int q = 0; q < ty; q++)
        z[s] = cmad < R > (pl, z[s], sh.ec[q][s][lane]);
      w[s] = sh.win[s][lane];
      for (int q = nseg - 1; q > ty; q--)
        w[s] = cmad < R > (t.band * NSEG + q == d.n_segs - 1 ?
            d.pk[s][d.tail] : pl, w[s], sh.ea[q - 1][s][lane]);
    }
    if (len == SEG)
      seg_filter < R, NS, false > (d, xs, len, z, w, y);
    else
      seg_filter < R, NS, true > (d, xs, len, z, w, y);
    /* each thread rewrites only its own samples */
#pragma unroll
    for (int k = 0; k < SEG; k++)
      xs[k * TILE_PITCH] = y[k];
  }
  __syncthreads ();
  store_tile (p, t, sh.ts);
}

/* Host ------------------------------------------------------------------ */

template < typename R > static Cplx < R >
to_r (const CuconvCplx & c)
{
  Cplx < R > z;

  z.x = (R) c.re;
  z.y = (R) c.im;
  return z;
}

/* h in R */
template < typename R > static void
rec_dir (RecDir < R > &d, const CuconvRecDir & h)
{
  d.n = h.n;
  d.n_sections = h.n_sections;
  d.n_segs = h.n_segs;
  d.n_groups = h.n_groups;
  d.tail = h.tail;
  d.c = (R) h.c;
  for (int s = 0; s < CUCONV_REC_MAX_SECTIONS; s++) {
    d.p[s] = to_r < R > (h.p[s]);
    d.a[s] = to_r < R > (h.a[s]);
    for (int k = 0; k <= CUCONV_REC_MAX_SEG; k++)
      d.pk[s][k] = to_r < R > (h.pk[s][k]);
    for (int k = 0; k < CUCONV_REC_PSEG; k++)
      d.pseg[s][k] = to_r < R > (h.pseg[s][k]);
    d.pinv[s] = to_r < R > (h.pinv[s]);
    d.clamp[s] = to_r < R > (h.clamp[s]);
    d.wrap[s] = to_r < R > (h.wrap[s]);
    d.mirror_p[s] = to_r < R > (h.mirror_p[s]);
    d.mirror_d[s] = to_r < R > (h.mirror_d[s]);
    d.pgroup[s] = to_r < R > (h.pgroup[s]);
    d.pborder[s] = to_r < R > (h.pborder[s]);
  }
}

/* Lines, bands and components of one direction's pass. */
static dim3
pass_grid (const RecPass & p, const CuconvRecDir & d)
{
  return dim3 ((p.nlines + LINES - 1) / LINES, d.n_groups,
      p.rows ? p.nc : 1);
}

/* Pass p's two kernels, with h's tables in R and NS sections. */
template < typename R, int NS > static cudaError_t
launch_pass_ns (const RecPass & p, const CuconvRecDir & h,
    cudaStream_t stream)
{
  static SmemLimit lb, lf;
  typedef RecSmem < R, NS > Smem;
  const dim3 grid = pass_grid (p, h);
  const dim3 block (LINES, NSEG);
  RecDir < R > d;
  cudaError_t e;

  rec_dir < R > (d, h);
  e = launch_smem ((const void *) rec_bands < R, NS >, (int) Smem::BANDS,
      lb,[&]{
        rec_bands < R, NS > <<< grid, block, Smem::BANDS, stream >>> (p, d);});
  if (e != cudaSuccess)
    return e;
  return launch_smem ((const void *) rec_filter < R, NS >,
      (int) Smem::FILTER, lf,[&]{
        rec_filter < R, NS > <<< grid, block, Smem::FILTER, stream >>> (p,
            d);});
}

/* Whether a depth's states are double (RecDir). */
static bool
double_states (int depth)
{
  return depth > 12;
}

/* Bytes of the band totals (per = 1) or the segments' end states (per =
 * NSEG) of a pass over lines of n samples. */
static size_t
agg_bytes (int nlines, int nc, int n, int ns, int depth, int per)
{
  const size_t bands = ((size_t) n + BAND - 1) / BAND;

  return bands * per * 2 * ns * (size_t) nc * nlines *
      (double_states (depth) ? sizeof (double2) : sizeof (float2));
}

/* Runs pass p with d's sections, states in R. */
template < typename R > static cudaError_t
launch_pass_r (const RecPass & p, const CuconvRecDir & d, cudaStream_t stream)
{
  switch (d.n_sections) {
    case 2:
      return launch_pass_ns < R, 2 > (p, d, stream);
    case 3:
      return launch_pass_ns < R, 3 > (p, d, stream);
    default:
      return launch_pass_ns < R, 4 > (p, d, stream);
  }
}

/* Runs one direction's pass p (in, out and agg set) in direction sigma. */
static cudaError_t
launch_pass (RecPass & p, double sigma, int ns, int depth,
    cudaStream_t stream)
{
  CuconvRecDir d;

  p.n = p.rows ? p.width : p.height;
  cuconv_recursive_dir_init (&d, sigma, ns, p.n, SEG, NSEG);
  return double_states (depth) ? launch_pass_r < double > (p, d, stream) :
      launch_pass_r < float > (p, d, stream);
}

static size_t
round_up256 (size_t v)
{
  return (v + 255) & ~(size_t) 255;
}

cudaError_t
launch_recursive (const CuconvPlane & pl, const CuconvFilter & f,
    Scratch & sc, cudaStream_t stream)
{
  const CuconvTaps *tx = cuconv_filter_taps_x (&f, &pl);
  const CuconvTaps *ty = cuconv_filter_taps_y (&f, &pl);
  const bool rows = tx->untruncated, cols = ty->untruncated;
  const int bytes = cuconv_plane_sample_bytes (&pl);
  const int depth = pl.depth > 8 ? pl.depth : 8;
  const bool sharpen = f.combine == CUCONV_COMBINE_SHARPEN;
  /* the intermediate of a plane filtered both ways: 16-bit fixed point
   * with 6 bits or more below the sample's last (depth 8 and 10) */
  const bool fix16 = depth <= 10;
  const size_t ncol = (size_t) pl.width * pl.n_comp;
  const size_t mid_pitch = round_up256 ((size_t) pl.height * (fix16 ? 2 : 4));
  size_t mid_bytes = 0, col_agg = 0, row_agg = 0, seg_bytes = 0;
  uint8_t *scratch = NULL;
  RecPass p;
  int ns;
  cudaError_t e;

  /* the other direction, when not untruncated, is the one tap [1] */
  if (f.n_terms != 1 || (!sharpen && f.combine != CUCONV_COMBINE_NONE)
      || (!rows && !cols) || (!rows && (tx->radius != 0 || tx->w[0] != 1.0f))
      || (!cols && (ty->radius != 0 || ty->w[0] != 1.0f)))
    return cudaErrorNotSupported;
  if (pl.width < 1 || pl.height < 1 || pl.n_comp < 1
      || pl.n_comp > CUCONV_MAX_COMP)
    return cudaErrorInvalidValue;
  if (bytes == 2 && ((uintptr_t) pl.src | (uintptr_t) pl.dst
          | (size_t) pl.src_stride | (size_t) pl.dst_stride) % 2 != 0)
    return cudaErrorInvalidValue;

  ns = cuconv_recursive_sections (depth, sharpen ? f.amount : 1.0,
      (int) rows + (int) cols);
  memset (&p, 0, sizeof (p));
  p.src = pl.src;
  p.dst = pl.dst;
  p.src_pitch = (size_t) pl.src_stride;
  p.dst_pitch = (size_t) pl.dst_stride;
  p.mid_pitch = mid_pitch;
  p.width = pl.width;
  p.height = pl.height;
  p.nc = pl.n_comp;
  p.bytes = bytes;
  p.shift = depth > 8 ? pl.shift : 0;
  p.mask = (1u << depth) - 1;
  p.word_mask = bytes == 1 ? 0xffu : 0xffffu;
  p.fill = (pl.fill << p.shift) & p.word_mask;
  memcpy (p.op, pl.op, sizeof (p.op));
  p.border = f.border;
  p.sharpen = sharpen;
  p.amount = f.amount;
  p.fix_scale = (float) (1 << (16 - depth));
  p.fix_inv = 1.0f / p.fix_scale;

  if (rows && cols)
    mid_bytes = round_up256 (mid_pitch * ncol);
  /* the segments' states: one pass's at a time, the passes in order on
   * one stream */
  if (cols) {
    col_agg = round_up256 (agg_bytes ((int) ncol, 1, pl.height, ns, depth,
            1));
    seg_bytes = agg_bytes ((int) ncol, 1, pl.height, ns, depth, NSEG);
  }
  if (rows) {
    row_agg = round_up256 (agg_bytes (pl.height, pl.n_comp, pl.width, ns,
            depth, 1));
    const size_t b = agg_bytes (pl.height, pl.n_comp, pl.width, ns, depth,
        NSEG);

    seg_bytes = b > seg_bytes ? b : seg_bytes;
  }
  e = scratch_take (sc, mid_bytes + col_agg + row_agg + seg_bytes, stream,
      (void **) &scratch);
  if (e != cudaSuccess)
    return e;

  if (cols) {
    RecPass c = p;

    c.rows = 0;
    c.nlines = (int) ncol;
    c.in_kind = REC_SRC;
    c.out_kind = rows ? (fix16 ? REC_FIX16 : REC_F32) : REC_DST;
    c.mid = scratch;
    c.agg = scratch + mid_bytes;
    c.segs = scratch + mid_bytes + col_agg + row_agg;
    e = launch_pass (c, ty->sigma, ns, depth, stream);
  }
  if (rows && e == cudaSuccess) {
    RecPass r = p;

    r.rows = 1;
    r.nlines = pl.height;
    r.in_kind = cols ? (fix16 ? REC_FIX16 : REC_F32) : REC_SRC;
    r.out_kind = REC_DST;
    r.mid = scratch;
    r.agg = scratch + mid_bytes + col_agg;
    r.segs = scratch + mid_bytes + col_agg + row_agg;
    e = launch_pass (r, tx->sigma, ns, depth, stream);
  }
  return e;
}

}                               /* namespace cuconv */
