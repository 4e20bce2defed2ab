/* gst-cudaconvolve: the untruncated gaussian by recursive filtering
 * (docs/design.md, "The recursive gaussian"), at a cost that does not
 * depend on sigma.
 *
 * Each direction is a sum of complex one-pole sections, causal and
 * anticausal (cuconv-recursive.h), run block-parallel: the samples of a
 * row or a column are cut into segments of up to 32, one a thread.  A
 * thread computes its segment's zero-initial end states, the states are
 * combined across segments (a carry scan), the border's initial states
 * come from the totals, and each thread runs its recursions from its true
 * states.  Columns go first (rec_cols_bands, then rec_cols: bands of 32
 * columns by 256 rows, with carries across bands through a small global
 * buffer), rows last (rec_rows: a row a block, in shared memory).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-recursive.h"
#include "cuconv-tile.cuh"

namespace cuconv {

/* What a pass reads or writes. */
enum RecKind
{
  REC_SRC = 0,                  /* the plane's samples (src) */
  REC_FIX16,                    /* the intermediate, 16-bit fixed point */
  REC_F32,                      /* the intermediate, float */
  REC_DST,                      /* the plane's output (dst): rounded, ops */
};

/* One pass over a plane: what it reads (in) and writes (out), and what
 * the final output needs. */
struct RecIO
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  const uint8_t *in;
  uint8_t *out;
  size_t in_pitch, out_pitch;
  int in_kind, out_kind;
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
};

/* Complex arithmetic on float2 ------------------------------------------ */

__device__ __forceinline__ float2
cx (const CuconvCplx & c)
{
  return make_float2 (c.re, c.im);
}

/* v + m u */
__device__ __forceinline__ float2
cmad (float2 m, float2 u, float2 v)
{
  return make_float2 (fmaf (m.x, u.x, fmaf (-m.y, u.y, v.x)),
      fmaf (m.x, u.y, fmaf (m.y, u.x, v.y)));
}

__device__ __forceinline__ float2
cmul (float2 m, float2 u)
{
  return cmad (m, u, make_float2 (0.0f, 0.0f));
}

__device__ __forceinline__ float2
shfl_up2 (float2 v, int d)
{
  return make_float2 (__shfl_up_sync (0xffffffffu, v.x, d),
      __shfl_up_sync (0xffffffffu, v.y, d));
}

__device__ __forceinline__ float2
shfl_down2 (float2 v, int d)
{
  return make_float2 (__shfl_down_sync (0xffffffffu, v.x, d),
      __shfl_down_sync (0xffffffffu, v.y, d));
}

/* Samples -------------------------------------------------------------- */

/* Sample g of row `row` of what the pass reads, as a float. */
__device__ __forceinline__ float
rec_load (const RecIO & io, int row, int g)
{
  const uint8_t *r = io.in + (size_t) row * io.in_pitch;

  switch (io.in_kind) {
    case REC_FIX16:
      return sample_to_float (((const uint16_t *) r)[g]) * io.fix_inv;
    case REC_F32:
      return ((const float *) r)[g];
    default:
      return sample_to_float (io.bytes == 1 ? r[g] :
          (((const uint16_t *) r)[g] >> io.shift) & io.mask);
  }
}

/* Writes v, the filtered value of sample g (component c) of row `row`:
 * to the intermediate (filtered components only), or as the output
 * word, combined, rounded and shifted, or copied or filled as the
 * component's op says. */
__device__ __forceinline__ void
rec_store (const RecIO & io, int row, int g, int c, float v)
{
  uint32_t w;

  if (io.out_kind == REC_FIX16) {
    if (io.op[c] == CUCONV_COMP_FILTER)
      ((uint16_t *) (io.out + (size_t) row * io.out_pitch))[g] =
          (uint16_t) min (__float2uint_rn (v * io.fix_scale), 65535u);
    return;
  }
  if (io.out_kind == REC_F32) {
    if (io.op[c] == CUCONV_COMP_FILTER)
      ((float *) (io.out + (size_t) row * io.out_pitch))[g] = v;
    return;
  }
  if (io.op[c] == CUCONV_COMP_FILL) {
    w = io.fill;
  } else {
    const uint8_t *s = io.src + (size_t) row * io.src_pitch;
    const uint32_t in = io.bytes == 1 ? s[g] : ((const uint16_t *) s)[g];

    if (io.op[c] == CUCONV_COMP_COPY) {
      w = in;
    } else {
      if (io.sharpen) {
        const float x = sample_to_float ((in >> io.shift) & io.mask);
        v = __fadd_rn (x, __fmul_rn (io.amount, __fsub_rn (x, v)));
      }
      w = (cuconv_round_sat (v, io.mask) << io.shift) & io.word_mask;
    }
  }
  if (io.bytes == 1)
    io.dst[(size_t) row * io.dst_pitch + g] = (uint8_t) w;
  else
    ((uint16_t *) (io.dst + (size_t) row * io.dst_pitch))[g] = (uint16_t) w;
}

/* One segment ------------------------------------------------------------ */

/* The zero-initial states of section s over a segment of L samples of
 * component c (x[k * NC + c]): ec at its last sample, ea at its first.
 * TAIL: the segment's samples beyond its first len are padding (zeros);
 * ec is then the state at sample len - 1. */
template < int L, int NC, bool TAIL > __device__ __forceinline__ void
seg_states (const CuconvRecDir & d, int s, const float *x, int c, int len,
    float2 & ec, float2 & ea)
{
  const float2 p = cx (d.p[s]);

  ec = ea = make_float2 (0.0f, 0.0f);
#pragma unroll
  for (int k = 0; k < L; k++) {
    const float v = x[k * NC + c];
    const CuconvCplx wa = d.pk[s][k];

    if (!TAIL) {
      const CuconvCplx wc = d.pk[s][L - 1 - k];
      ec.x = fmaf (wc.re, v, ec.x);
      ec.y = fmaf (wc.im, v, ec.y);
    } else if (k < len) {
      const float zr = fmaf (p.x, ec.x, fmaf (-p.y, ec.y, v));
      ec.y = fmaf (p.x, ec.y, p.y * ec.x);
      ec.x = zr;
    }
    ea.x = fmaf (wa.re, v, ea.x);
    ea.y = fmaf (wa.im, v, ea.y);
  }
}

/* Section s over a segment of component c from its true states: z, the
 * causal state before its first sample, and w, the anticausal state after
 * its last (TAIL: after sample len - 1); adds Re (a z[k]) + Re (a w[k]) to
 * y[k * NC + c]. */
template < int L, int NC, bool TAIL > __device__ __forceinline__ void
seg_filter (const CuconvRecDir & d, int s, const float *x, float *y, int c,
    int len, float2 z, float2 w)
{
  const float2 p = cx (d.p[s]), a = cx (d.a[s]);

#pragma unroll
  for (int k = 0; k < L; k++) {
    const float zr = fmaf (p.x, z.x, fmaf (-p.y, z.y, x[k * NC + c]));
    z.y = fmaf (p.x, z.y, p.y * z.x);
    z.x = zr;
    y[k * NC + c] = fmaf (a.x, z.x, fmaf (-a.y, z.y, y[k * NC + c]));
  }
#pragma unroll
  for (int k = L - 1; k >= 0; k--) {
    if (!TAIL || k < len) {
      const float wr = fmaf (p.x, w.x, fmaf (-p.y, w.y, x[k * NC + c]));
      w.y = fmaf (p.x, w.y, p.y * w.x);
      w.x = wr;
      y[k * NC + c] = fmaf (a.x, w.x, fmaf (-a.y, w.y, y[k * NC + c]));
    }
  }
}

/* The border's initial states of section s: sc = z[-1], sa = w[n], from
 * the zero-initial totals zc (the causal state at n - 1) and za (the
 * anticausal state at 0) and the edge samples x0 = x[0], xn = x[n - 1]. */
__device__ __forceinline__ void
border_states (const CuconvRecDir & d, int s, int border, float x0, float xn,
    float2 zc, float2 za, float2 & sc, float2 & sa)
{
  switch (border) {
    case CUCONV_BORDER_ZERO:
      sc = sa = make_float2 (0.0f, 0.0f);
      return;
    case CUCONV_BORDER_WRAP:
      /* periodic: z[-1] = z[n - 1] = zc + p^n z[-1] */
      sc = cmul (cx (d.wrap[s]), zc);
      sa = cmul (cx (d.wrap[s]), za);
      return;
    case CUCONV_BORDER_MIRROR:
      if (d.n >= 2) {
        /* reflected about 0 and n - 1: z[-1] = w[1], w[n] = z[n - 2] */
        const float2 pi = cx (d.pinv[s]), pn = cx (d.mirror_p[s]),
            den = cx (d.mirror_d[s]);
        const float2 za1 = cmul (pi, make_float2 (za.x - x0, za.y));
        const float2 zc2 = cmul (pi, make_float2 (zc.x - xn, zc.y));
        sc = cmul (den, cmad (pn, zc2, za1));
        sa = cmul (den, cmad (pn, za1, zc2));
        return;
      }
      /* one sample: every read is sample 0, as clamp */
      [[fallthrough]];
    case CUCONV_BORDER_CLAMP:
    default:
      sc = make_float2 (d.clamp[s].re * x0, d.clamp[s].im * x0);
      sa = make_float2 (d.clamp[s].re * xn, d.clamp[s].im * xn);
      return;
  }
}

/* Rows: a row a block ---------------------------------------------------- */

/* The samples of a segment: 32 (11 pixels of 3 components: 33), and their
 * pitch in shared memory, odd so that the threads of a warp, each reading
 * its own segment, hit 32 different banks. */
template < int NC > struct RowSeg
{
  static constexpr int SAMPLES = NC == 3 ? 33 : 32;
  static constexpr int L = SAMPLES / NC;
};
constexpr int SLOT_PITCH = 33;
constexpr int ROW_MAX_WARPS = 16;

/* Byte offsets of a rec_rows block's dynamic shared memory. */
struct RowSmem
{
  int xs;                       /* float [32 nw][SLOT_PITCH]: the chunk */
  int pseg;                     /* float2 [ns][CUCONV_REC_PSEG] */
  int tc, ta;                   /* float2 [nw][ns]: warp totals */
  int u, xw;                    /* float2 [nw][ns]: warp carries */
  int zs;                       /* float2 [ns]: the tail's causal state */
  int ct, ca, cin, ain;         /* float2 [nch][nc][ns]: chunk totals, carries */
  int sa;                       /* float2 [nc][ns]: the border's w[n] */
  int edge;                     /* float [2][nc]: x[0], x[n - 1] */
  int bytes;
};

__host__ __device__ inline RowSmem
row_smem (int nw, int nc, int ns, int nch)
{
  RowSmem m;
  int o = 0;

  m.xs = o;
  o += 32 * nw * SLOT_PITCH * (int) sizeof (float);
  m.pseg = o;
  o += ns * CUCONV_REC_PSEG * 8;
  m.tc = o;
  o += nw * ns * 8;
  m.ta = o;
  o += nw * ns * 8;
  m.u = o;
  o += nw * ns * 8;
  m.xw = o;
  o += nw * ns * 8;
  m.zs = o;
  o += ns * 8;
  m.ct = o;
  o += nch * nc * ns * 8;
  m.ca = o;
  o += nch * nc * ns * 8;
  m.cin = o;
  o += nch * nc * ns * 8;
  m.ain = o;
  o += nch * nc * ns * 8;
  m.sa = o;
  o += nc * ns * 8;
  m.edge = o;
  o += 2 * nc * (int) sizeof (float);
  m.bytes = o;
  return m;
}

struct RowParams
{
  RecIO io;
  CuconvRecDir d;               /* seg = RowSeg<NC>::L, group = 32 nw */
  int nw;                       /* warps a block */
};

/* The rows of a plane, a row a block of 32 nw threads, a segment a
 * thread: the row in chunks of 32 nw segments.  A row of one chunk is
 * read once: load, zero-initial states, warp scans, the block's totals
 * and the border, the carries, the recursions, store.  A longer row runs
 * the first steps over every chunk for the chunk totals, then all of
 * them again per chunk. */
template < int NC, int NS > __global__ void
__launch_bounds__ (ROW_MAX_WARPS * 32)
rec_rows (const __grid_constant__ RowParams p)
{
  constexpr int SS = RowSeg < NC >::SAMPLES, L = RowSeg < NC >::L;
  constexpr int PS = CUCONV_REC_PSEG;
  extern __shared__ __align__ (16) unsigned char smem[];
  const RecIO & io = p.io;
  const CuconvRecDir & d = p.d;
  const int nw = p.nw, T = 32 * nw, tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5, row = blockIdx.x;
  const int nch = d.n_groups, last = nch - 1, S = d.n_segs, len = d.tail;
  /* the tail segment, in the last chunk */
  const int sl = S - 1 - last * T, wl = sl >> 5, ll = sl & 31;
  const int ws = io.width * NC;
  const RowSmem m = row_smem (nw, NC, NS, nch);
  float *xs = (float *) (smem + m.xs);
  float2 *pseg = (float2 *) (smem + m.pseg);
  float2 *tc = (float2 *) (smem + m.tc), *ta = (float2 *) (smem + m.ta);
  float2 *u = (float2 *) (smem + m.u), *xw = (float2 *) (smem + m.xw);
  float2 *zs = (float2 *) (smem + m.zs), *sa_s = (float2 *) (smem + m.sa);
  float2 *ct = (float2 *) (smem + m.ct), *ca = (float2 *) (smem + m.ca);
  float2 *cin = (float2 *) (smem + m.cin), *ain = (float2 *) (smem + m.ain);
  float *edge = (float *) (smem + m.edge);
  const float2 zero = make_float2 (0.0f, 0.0f);
  float x[SS], y[SS];
  /* the warp scans' exclusive results: the zero-initial states entering
   * the segment from the left (ic) and from the right (ia) */
  float2 ic[NS], ia[NS];

  for (int j = tid; j < NS * PS; j += T)
    pseg[j] = cx (d.pseg[j / PS][j % PS]);
  if (tid < NC) {
    const bool f = io.op[tid] == CUCONV_COMP_FILTER;
    edge[tid] = f ? rec_load (io, row, tid) : 0.0f;
    edge[NC + tid] = f ? rec_load (io, row, ws - NC + tid) : 0.0f;
  }

  /* chunk ch into shared memory (zeros past the row and for components
   * not filtered), and this thread's segment into x */
  auto load_chunk =[&](int ch) {
    const int base = ch * T * SS;
    __syncthreads ();           /* xs, edge and pseg free, or written */
    for (int j = tid; j < T * SS; j += T) {
      const int g = base + j;
      float v = 0.0f;
      if (g < ws && io.op[g % NC] == CUCONV_COMP_FILTER)
        v = rec_load (io, row, g);
      xs[(j / SS) * SLOT_PITCH + j % SS] = v;
    }
    __syncthreads ();
#pragma unroll
    for (int k = 0; k < SS; k++) {
      x[k] = xs[tid * SLOT_PITCH + k];
      y[k] = 0.0f;
    }
  };

  /* component c of chunk ch: the segment's zero-initial states, the warp
   * scans (Kogge-Stone: S_l += p^(dL) S_(l-d)), the warp totals, and the
   * tail's causal state at the row's last sample */
  auto scan =[&](int ch, int c) {
    const int slot = ch * T + tid;
    const bool tailwarp = ch == last && warp == wl;
    float2 own[NS];

#pragma unroll
    for (int s = 0; s < NS; s++) {
      if (tailwarp)
        seg_states < L, NC, true > (d, s, x, c, slot == S - 1 ? len : L,
            ic[s], ia[s]);
      else
        seg_states < L, NC, false > (d, s, x, c, L, ic[s], ia[s]);
      own[s] = ic[s];
    }
#pragma unroll
    for (int s = 0; s < NS; s++) {
#pragma unroll
      for (int dd = 1; dd < 32; dd <<= 1) {
        const float2 mul = pseg[s * PS + dd];
        const float2 vc = shfl_up2 (ic[s], dd), va = shfl_down2 (ia[s], dd);
        if (lane >= dd)
          ic[s] = cmad (mul, vc, ic[s]);
        if (lane + dd < 32)
          ia[s] = cmad (mul, va, ia[s]);
      }
      if (lane == 31)
        tc[warp * NS + s] = ic[s];
      if (lane == 0)
        ta[warp * NS + s] = ia[s];
      /* inclusive to exclusive */
      ic[s] = shfl_up2 (ic[s], 1);
      ia[s] = shfl_down2 (ia[s], 1);
      if (lane == 0)
        ic[s] = zero;
      if (lane == 31)
        ia[s] = zero;
      if (slot == S - 1)
        zs[s] = cmad (cx (d.pk[s][len]), ic[s], own[s]);
    }
  };

  /* one thread a section s: chunk ch's zero-initial totals, the causal
   * state at its end (the last chunk: at the row's last sample) and the
   * anticausal state at its start */
  auto chunk_totals =[&](int ch, int s, float2 & tot_c, float2 & tot_a) {
    const float2 p32 = pseg[s * PS + 32];
    const int wend = ch == last ? wl : nw;
    float2 acc = zero;

    for (int w = 0; w < wend; w++)
      acc = cmad (p32, acc, tc[w * NS + s]);
    tot_c = ch == last ? cmad (cmul (cx (d.pk[s][len]), pseg[s * PS + ll]),
        acc, zs[s]) : acc;
    acc = zero;
    for (int w = nw - 1; w >= 0; w--)
      acc = cmad (p32, acc, ta[w * NS + s]);
    tot_a = acc;
  };

  /* one thread a section s: the states entering each warp of chunk ch,
   * u[w] from the left (c_in: at the chunk's start) and xw[w] from the
   * right (a_in: at the next chunk's start; the last chunk starts from
   * sa at the row's end, which its tail segment enters with) */
  auto warp_carries =[&](int ch, int s, float2 c_in, float2 a_in, float2 sa) {
    const float2 p32 = pseg[s * PS + 32];
    float2 v = c_in;

    for (int w = 0; w < nw; w++) {
      u[w * NS + s] = v;
      v = cmad (p32, v, tc[w * NS + s]);
    }
    if (ch < last) {
      v = a_in;
      for (int w = nw - 1; w >= 0; w--) {
        xw[w * NS + s] = v;
        v = cmad (p32, v, ta[w * NS + s]);
      }
    } else {
      const float2 b = cmul (cx (d.pk[s][len]), sa);
      xw[wl * NS + s] = b;
      v = cmad (pseg[s * PS + ll], b, ta[wl * NS + s]);
      for (int w = wl - 1; w >= 0; w--) {
        xw[w * NS + s] = v;
        v = cmad (p32, v, ta[w * NS + s]);
      }
    }
  };

  /* component c of this thread's segment from its true states */
  auto filter =[&](int ch, int c) {
    const int slot = ch * T + tid;
    const bool tailwarp = ch == last && warp == wl;

    if (slot >= S)
      return;
#pragma unroll
    for (int k = 0; k < L; k++)
      y[k * NC + c] = -d.c * x[k * NC + c];
#pragma unroll
    for (int s = 0; s < NS; s++) {
      const float2 zc = cmad (pseg[s * PS + lane], u[warp * NS + s], ic[s]);
      float2 wa;

      if (!tailwarp) {
        wa = cmad (pseg[s * PS + 31 - lane], xw[warp * NS + s], ia[s]);
        seg_filter < L, NC, false > (d, s, x, y, c, L, zc, wa);
      } else {
        wa = lane == ll ? sa_s[c * NS + s] :
            cmad (pseg[s * PS + ll - 1 - lane], xw[warp * NS + s], ia[s]);
        seg_filter < L, NC, true > (d, s, x, y, c, slot == S - 1 ? len : L,
            zc, wa);
      }
    }
  };

  /* the filtered segment back into shared memory, and the chunk out */
  auto store_chunk =[&](int ch) {
    const int base = ch * T * SS;
#pragma unroll
    for (int k = 0; k < SS; k++)
      xs[tid * SLOT_PITCH + k] = y[k];
    __syncthreads ();
    for (int j = tid; j < T * SS && base + j < ws; j += T)
      rec_store (io, row, base + j, (base + j) % NC,
          xs[(j / SS) * SLOT_PITCH + j % SS]);
  };

  if (nch == 1) {
    load_chunk (0);
#pragma unroll
    for (int c = 0; c < NC; c++) {
      if (io.op[c] != CUCONV_COMP_FILTER)
        continue;
      scan (0, c);
      __syncthreads ();
      if (tid < NS) {
        float2 zc, za, sc, sa;
        chunk_totals (0, tid, zc, za);
        border_states (d, tid, io.border, edge[c], edge[NC + c], zc, za, sc,
            sa);
        sa_s[c * NS + tid] = sa;
        warp_carries (0, tid, sc, zero, sa);
      }
      __syncthreads ();
      filter (0, c);
    }
    store_chunk (0);
    return;
  }

  /* a long row: the chunks' totals first */
  for (int ch = 0; ch < nch; ch++) {
    load_chunk (ch);
#pragma unroll
    for (int c = 0; c < NC; c++) {
      if (io.op[c] != CUCONV_COMP_FILTER)
        continue;
      scan (ch, c);
      __syncthreads ();
      if (tid < NS)
        chunk_totals (ch, tid, ct[(ch * NC + c) * NS + tid],
            ca[(ch * NC + c) * NS + tid]);
      __syncthreads ();
    }
  }
  /* the row's totals, the border, each chunk's carries */
  if (tid < NC * NS && io.op[tid / NS] == CUCONV_COMP_FILTER) {
    const int c = tid / NS, s = tid % NS;
    const float2 pg = cx (d.pgroup[s]);
    float2 zc = zero, za, sc, sa;

    for (int ch = 0; ch < last; ch++)
      zc = cmad (pg, zc, ct[(ch * NC + c) * NS + s]);
    zc = cmad (cx (d.pborder[s]), zc, ct[(last * NC + c) * NS + s]);
    za = ca[(last * NC + c) * NS + s];
    for (int ch = last - 1; ch >= 0; ch--)
      za = cmad (pg, za, ca[(ch * NC + c) * NS + s]);
    border_states (d, s, io.border, edge[c], edge[NC + c], zc, za, sc, sa);
    sa_s[c * NS + s] = sa;
    cin[c * NS + s] = sc;
    for (int ch = 0; ch < last; ch++)
      cin[((ch + 1) * NC + c) * NS + s] = cmad (pg,
          cin[(ch * NC + c) * NS + s], ct[(ch * NC + c) * NS + s]);
    ain[((last - 1) * NC + c) * NS + s] = cmad (cx (d.pborder[s]), sa,
        ca[(last * NC + c) * NS + s]);
    for (int ch = last - 1; ch >= 1; ch--)
      ain[((ch - 1) * NC + c) * NS + s] = cmad (pg,
          ain[(ch * NC + c) * NS + s], ca[(ch * NC + c) * NS + s]);
  }
  /* then each chunk again, filtered */
  for (int ch = 0; ch < nch; ch++) {
    load_chunk (ch);
#pragma unroll
    for (int c = 0; c < NC; c++) {
      if (io.op[c] != CUCONV_COMP_FILTER)
        continue;
      scan (ch, c);
      __syncthreads ();
      if (tid < NS)
        warp_carries (ch, tid, cin[(ch * NC + c) * NS + tid],
            ch < last ? ain[(ch * NC + c) * NS + tid] : zero,
            sa_s[c * NS + tid]);
      __syncthreads ();
      filter (ch, c);
    }
    store_chunk (ch);
  }
}

/* Columns: bands of 32 columns by up to 8 segments of 32 rows ---------- */

constexpr int COL_SEG = 32;
constexpr int COL_MAX_SEGS = 8;

struct ColParams
{
  RecIO io;
  CuconvRecDir d;               /* seg = COL_SEG, group = segments a band */
  float2 *agg;                  /* [band][2][ns][columns]: band totals */
  int ncol;                     /* sample columns: width * nc */
};

/* The band totals of section s, direction dir (0 causal, 1 anticausal),
 * in column col. */
__device__ __forceinline__ float2 &
col_agg (const ColParams & p, int ns, int band, int dir, int s, int col)
{
  return p.agg[((size_t) (band * 2 + dir) * ns + s) * p.ncol + col];
}

/* This thread's segment of column col, and its zero-initial states in
 * ec[ty][s][lane], ea[ty][s][lane]. */
template < int NS > __device__ __forceinline__ void
col_segment (const ColParams & p, int col, bool active, int seg, float *x,
    float2 (*ec)[NS][32], float2 (*ea)[NS][32])
{
  const CuconvRecDir & d = p.d;
  const int ty = threadIdx.y, lane = threadIdx.x;

#pragma unroll
  for (int k = 0; k < COL_SEG; k++) {
    const int r = seg * COL_SEG + k;
    x[k] = active && r < p.io.height ? rec_load (p.io, r, col) : 0.0f;
  }
#pragma unroll
  for (int s = 0; s < NS; s++) {
    float2 c, a;
    if (seg == d.n_segs - 1)
      seg_states < COL_SEG, 1, true > (d, s, x, 0, d.tail, c, a);
    else
      seg_states < COL_SEG, 1, false > (d, s, x, 0, COL_SEG, c, a);
    ec[ty][s][lane] = c;
    ea[ty][s][lane] = a;
  }
}

/* Pass 1 of the columns: each band's totals, the zero-initial causal
 * state at its end (the last band: at the plane's last row) and the
 * anticausal state at its start. */
template < int NS > __global__ void
__launch_bounds__ (32 * COL_MAX_SEGS)
rec_cols_bands (const __grid_constant__ ColParams p)
{
  __shared__ float2 ec[COL_MAX_SEGS][NS][32], ea[COL_MAX_SEGS][NS][32];
  const CuconvRecDir & d = p.d;
  const int lane = threadIdx.x, ty = threadIdx.y, rw = blockDim.y;
  const int col = blockIdx.x * 32 + lane, band = blockIdx.y;
  const int seg = band * rw + ty, nseg = min (rw, d.n_segs - band * rw);
  const bool active = col < p.ncol
      && p.io.op[col % p.io.nc] == CUCONV_COMP_FILTER;
  float x[COL_SEG];

  if (ty < nseg)
    col_segment < NS > (p, col, active, seg, x, ec, ea);
  __syncthreads ();
  if (ty != 0 || !active)
    return;
#pragma unroll
  for (int s = 0; s < NS; s++) {
    const float2 pl = cx (d.pseg[s][1]);
    float2 acc = make_float2 (0.0f, 0.0f);

    for (int y = 0; y < nseg; y++)
      acc = cmad (band * rw + y == d.n_segs - 1 ? cx (d.pk[s][d.tail]) : pl,
          acc, ec[y][s][lane]);
    col_agg (p, NS, band, 0, s, col) = acc;
    acc = make_float2 (0.0f, 0.0f);
    for (int y = nseg - 1; y >= 0; y--)
      acc = cmad (pl, acc, ea[y][s][lane]);
    col_agg (p, NS, band, 1, s, col) = acc;
  }
}

/* Pass 2 of the columns: warp 0 turns the band totals into the column's
 * border states and this band's carries, then the states entering each
 * segment; every thread filters its segment and writes it. */
template < int NS > __global__ void
__launch_bounds__ (32 * COL_MAX_SEGS)
rec_cols (const __grid_constant__ ColParams p)
{
  __shared__ float2 ec[COL_MAX_SEGS][NS][32], ea[COL_MAX_SEGS][NS][32];
  const CuconvRecDir & d = p.d;
  const RecIO & io = p.io;
  const int lane = threadIdx.x, ty = threadIdx.y, rw = blockDim.y;
  const int col = blockIdx.x * 32 + lane, band = blockIdx.y;
  const int seg = band * rw + ty, nseg = min (rw, d.n_segs - band * rw);
  const int lastb = d.n_groups - 1, c = col % io.nc;
  const bool active = col < p.ncol && io.op[c] == CUCONV_COMP_FILTER;
  const float2 zero = make_float2 (0.0f, 0.0f);
  float x[COL_SEG], y[COL_SEG];

  if (ty < nseg)
    col_segment < NS > (p, col, active, seg, x, ec, ea);
  __syncthreads ();
  if (ty == 0 && active) {
#pragma unroll
    for (int s = 0; s < NS; s++) {
      const float2 pg = cx (d.pgroup[s]), pl = cx (d.pseg[s][1]);
      float2 zc = zero, za, sc, sa, cc, aa;

      for (int b = 0; b < lastb; b++)
        zc = cmad (pg, zc, col_agg (p, NS, b, 0, s, col));
      zc = cmad (cx (d.pborder[s]), zc, col_agg (p, NS, lastb, 0, s, col));
      za = col_agg (p, NS, lastb, 1, s, col);
      for (int b = lastb - 1; b >= 0; b--)
        za = cmad (pg, za, col_agg (p, NS, b, 1, s, col));
      border_states (d, s, io.border, rec_load (io, 0, col),
          rec_load (io, io.height - 1, col), zc, za, sc, sa);
      /* the causal state entering the band, then each segment */
      cc = sc;
      for (int b = 0; b < band; b++)
        cc = cmad (pg, cc, col_agg (p, NS, b, 0, s, col));
      for (int yy = 0; yy < nseg; yy++) {
        const float2 e = ec[yy][s][lane];
        ec[yy][s][lane] = cc;
        cc = cmad (pl, cc, e);
      }
      /* the anticausal state: the last band's tail segment enters with
       * sa at the plane's end */
      if (band == lastb) {
        const int yt = d.n_segs - 1 - band * rw;
        const float2 e = ea[yt][s][lane];
        ea[yt][s][lane] = sa;
        aa = cmad (cx (d.pk[s][d.tail]), sa, e);
        for (int yy = yt - 1; yy >= 0; yy--) {
          const float2 f = ea[yy][s][lane];
          ea[yy][s][lane] = aa;
          aa = cmad (pl, aa, f);
        }
      } else {
        aa = cmad (cx (d.pborder[s]), sa, col_agg (p, NS, lastb, 1, s, col));
        for (int b = lastb - 1; b > band; b--)
          aa = cmad (pg, aa, col_agg (p, NS, b, 1, s, col));
        for (int yy = nseg - 1; yy >= 0; yy--) {
          const float2 f = ea[yy][s][lane];
          ea[yy][s][lane] = aa;
          aa = cmad (pl, aa, f);
        }
      }
    }
  }
  __syncthreads ();
  if (ty >= nseg || col >= p.ncol)
    return;
  if (active) {
#pragma unroll
    for (int k = 0; k < COL_SEG; k++)
      y[k] = -d.c * x[k];
#pragma unroll
    for (int s = 0; s < NS; s++) {
      if (seg == d.n_segs - 1)
        seg_filter < COL_SEG, 1, true > (d, s, x, y, 0, d.tail,
            ec[ty][s][lane], ea[ty][s][lane]);
      else
        seg_filter < COL_SEG, 1, false > (d, s, x, y, 0, COL_SEG,
            ec[ty][s][lane], ea[ty][s][lane]);
    }
  }
#pragma unroll
  for (int k = 0; k < COL_SEG; k++) {
    const int r = seg * COL_SEG + k;
    if (r < io.height)
      rec_store (io, r, col, c, active ? y[k] : 0.0f);
  }
}

/* Host ------------------------------------------------------------------ */

template < int NC, int NS > static cudaError_t
launch_rows_nc (RowParams & p, int smem, cudaStream_t stream)
{
  static SmemLimit limit;
  const auto k = rec_rows < NC, NS >;

  return launch_smem ((const void *) k, smem, limit,[&]{
        k <<< p.io.height, 32 * p.nw, smem, stream >>> (p);});
}

template < int NS > static cudaError_t
launch_rows_ns (RowParams & p, int smem, cudaStream_t stream)
{
  switch (p.io.nc) {
    case 1:
      return launch_rows_nc < 1, NS > (p, smem, stream);
    case 2:
      return launch_rows_nc < 2, NS > (p, smem, stream);
    case 3:
      return launch_rows_nc < 3, NS > (p, smem, stream);
    default:
      return launch_rows_nc < 4, NS > (p, smem, stream);
  }
}

/* The rows of io's plane in direction sigma: the warps a block (as many
 * as the row needs, up to ROW_MAX_WARPS, fewer where shared memory is
 * short), the chunks, the launch. */
static cudaError_t
launch_rows (const RecIO & io, double sigma, int ns, cudaStream_t stream)
{
  const int samples = io.nc == 3 ? 33 : 32, seg = samples / io.nc;
  const int segs = (io.width + seg - 1) / seg;
  int optin, nw = (segs + 31) / 32, smem;
  cudaError_t e = device_smem_optin (&optin);
  RowParams p;

  if (e != cudaSuccess)
    return e;
  if (nw > ROW_MAX_WARPS)
    nw = ROW_MAX_WARPS;
  for (;; nw /= 2) {
    const int nch = (segs + 32 * nw - 1) / (32 * nw);
    smem = row_smem (nw, io.nc, ns, nch).bytes;
    if (smem <= optin)
      break;
    if (nw == 1)
      return cudaErrorNotSupported;
  }
  memset (&p, 0, sizeof (p));
  p.io = io;
  p.nw = nw;
  cuconv_recursive_dir_init (&p.d, sigma, ns, io.width, seg, 32 * nw);
  switch (ns) {
    case 2:
      return launch_rows_ns < 2 > (p, smem, stream);
    case 3:
      return launch_rows_ns < 3 > (p, smem, stream);
    default:
      return launch_rows_ns < 4 > (p, smem, stream);
  }
}

/* Rows of bands that a column pass needs: bands of up to 8 segments. */
static int
col_band_segs (int height)
{
  const int segs = (height + COL_SEG - 1) / COL_SEG;
  return segs < COL_MAX_SEGS ? segs : COL_MAX_SEGS;
}

/* Bytes of the band totals of a column pass. */
static size_t
col_agg_bytes (const CuconvPlane & pl, int ns)
{
  const int segs = (pl.height + COL_SEG - 1) / COL_SEG;
  const int rw = col_band_segs (pl.height);
  const size_t bands = (size_t) (segs + rw - 1) / rw;

  return bands * 2 * ns * (size_t) pl.width * pl.n_comp * sizeof (float2);
}

template < int NS > static cudaError_t
launch_cols_ns (const ColParams & p, dim3 grid, dim3 block,
    cudaStream_t stream)
{
  rec_cols_bands < NS > <<< grid, block, 0, stream >>> (p);
  rec_cols < NS > <<< grid, block, 0, stream >>> (p);
  return cudaGetLastError ();
}

/* The columns of io's plane in direction sigma; agg: col_agg_bytes. */
static cudaError_t
launch_cols (const RecIO & io, double sigma, int ns, float2 * agg,
    cudaStream_t stream)
{
  const int rw = col_band_segs (io.height);
  ColParams p;

  memset (&p, 0, sizeof (p));
  p.io = io;
  p.agg = agg;
  p.ncol = io.width * io.nc;
  cuconv_recursive_dir_init (&p.d, sigma, ns, io.height, COL_SEG, rw);
  dim3 grid ((p.ncol + 31) / 32, p.d.n_groups), block (32, rw);
  switch (ns) {
    case 2:
      return launch_cols_ns < 2 > (p, grid, block, stream);
    case 3:
      return launch_cols_ns < 3 > (p, grid, block, stream);
    default:
      return launch_cols_ns < 4 > (p, grid, block, stream);
  }
}

static size_t
round_up256 (size_t v)
{
  return (v + 255) & ~(size_t) 255;
}

cudaError_t
launch_recursive (const CuconvPlane & pl, const CuconvFilter & f,
    cudaStream_t stream)
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
  const size_t mid_pitch = round_up256 (ncol * (fix16 ? 2 : 4));
  size_t mid_bytes = 0, agg_bytes = 0;
  uint8_t *scratch = NULL;
  RecIO io;
  int ns;
  cudaError_t e, e2;

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
  memset (&io, 0, sizeof (io));
  io.src = pl.src;
  io.dst = pl.dst;
  io.src_pitch = (size_t) pl.src_stride;
  io.dst_pitch = (size_t) pl.dst_stride;
  io.width = pl.width;
  io.height = pl.height;
  io.nc = pl.n_comp;
  io.bytes = bytes;
  io.shift = depth > 8 ? pl.shift : 0;
  io.mask = (1u << depth) - 1;
  io.word_mask = bytes == 1 ? 0xffu : 0xffffu;
  io.fill = (pl.fill << io.shift) & io.word_mask;
  memcpy (io.op, pl.op, sizeof (io.op));
  io.border = f.settings.border;
  io.sharpen = sharpen;
  io.amount = f.amount;
  io.fix_scale = (float) (1 << (16 - depth));
  io.fix_inv = 1.0f / io.fix_scale;

  if (rows && cols)
    mid_bytes = mid_pitch * pl.height;
  if (cols)
    agg_bytes = col_agg_bytes (pl, ns);
  if (mid_bytes + agg_bytes > 0) {
    e = cudaMallocAsync ((void **) &scratch, mid_bytes + agg_bytes, stream);
    if (e != cudaSuccess)
      return e;
  }

  e = cudaSuccess;
  if (cols) {
    RecIO c = io;

    c.in = pl.src;
    c.in_pitch = c.src_pitch;
    c.in_kind = REC_SRC;
    if (rows) {
      c.out = scratch;
      c.out_pitch = mid_pitch;
      c.out_kind = fix16 ? REC_FIX16 : REC_F32;
    } else {
      c.out_kind = REC_DST;
    }
    e = launch_cols (c, ty->sigma, ns, (float2 *) (scratch + mid_bytes),
        stream);
  }
  if (rows && e == cudaSuccess) {
    RecIO r = io;

    if (cols) {
      r.in = scratch;
      r.in_pitch = mid_pitch;
      r.in_kind = fix16 ? REC_FIX16 : REC_F32;
    } else {
      r.in = pl.src;
      r.in_pitch = r.src_pitch;
      r.in_kind = REC_SRC;
    }
    r.out_kind = REC_DST;
    e = launch_rows (r, tx->sigma, ns, stream);
  }
  if (scratch) {
    e2 = cudaFreeAsync (scratch, stream);
    if (e == cudaSuccess)
      e = e2;
  }
  return e;
}

}                               /* namespace cuconv */
