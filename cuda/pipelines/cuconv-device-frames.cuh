/* gst-cudaconvolve: the region filter's internal declarations (CUDA C++),
 * shared by its files: the copies (cuconv-region-copy.cu), the soft
 * regions' weights and blend (cuconv-region-blend.cu), the direct
 * kernel (cuconv-region-direct.cu), the region filter's memory
 * (cuconv-device-frames-memory.cu) and the work lists, the cost model and the
 * order of a frame's launches (cuconv-device-frames.cu).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_REGIONS_CUH__
#define __CUCONV_REGIONS_CUH__

#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include <cuda_runtime.h>

#include "cuconv-kernels.cuh"

namespace cuconv {

static inline size_t
align_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Scratch rows start at multiples of this (the tuned kernels' interior
 * tiles want 16), and every scratch plane at a multiple of 256 bytes. */
constexpr size_t SCRATCH_PITCH_ALIGN = 128;
constexpr size_t SCRATCH_PLANE_ALIGN = 256;

/* Bytes of one pixel of pl. */
static inline int
pixel_bytes (const CuconvPlane & pl)
{
  return pl.n_comp * cuconv_plane_sample_bytes (&pl);
}

/* Lists of jobs that a launch's blocks share, `rows` rows of a job a
 * block: numbers the blocks of jobs [0, n) (their first_block), returns
 * how many there are. */
template < typename Job > int
jobs_number_blocks (Job * jobs, int n, int rows)
{
  int blocks = 0;

  for (int i = 0; i < n; i++) {
    jobs[i].first_block = blocks;
    blocks += (jobs[i].h + rows - 1) / rows;
  }
  return blocks;
}

/* The job block b falls in: the last of n whose first block, first (i),
 * is at most b (thread 0 looks it up, the block shares it). */
template < typename First > __device__ int
block_find (int n, int b, First first)
{
  __shared__ int found;

  if (threadIdx.x == 0) {
    int lo = 0, hi = n - 1;

    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (first (mid) <= b)
        lo = mid;
      else
        hi = mid - 1;
    }
    found = lo;
  }
  __syncthreads ();
  return found;
}

template < typename Job > __device__ int
block_job (const Job * jobs, int n, int b)
{
  return block_find (n, b,[jobs] (int i) {
        return jobs[i].first_block;});
}

/* The plane of `row` among n planes whose rows are numbered one after
 * the other (first_row[i], the first of plane i; first_row[n], the
 * total); -1 past the last. */
__device__ __forceinline__ int
row_plane (const int *first_row, int n, int row)
{
  int i = 0;

  if (row >= first_row[n])
    return -1;
  while (row >= first_row[i + 1])
    i++;
  return i;
}

/* Copies (cuconv-region-copy.cu) ----------------------------------------- */

/* One rectangle to copy: w x h pixels from (sx, sy) of its plane's source
 * to (dx, dy) of its destination.  first_block: the blocks of the jobs
 * before it. */
struct CopyJob
{
  int plane;
  int sx, sy;
  int dx, dy;
  int w, h;
  int first_block;
};

struct CopyPlane
{
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int bpp;                      /* bytes a pixel: components * sample */
};

struct CopyParams
{
  CopyPlane plane[CUCONV_MAX_PLANES];
  const CopyJob *jobs;
  int n_jobs;
};

/* Numbers the blocks of jobs [0, n); returns how many there are. */
int copy_jobs_number_blocks (CopyJob * jobs, int n);

/* One launch that copies the rectangles of the jobs uploaded to p.jobs,
 * numbered (copy_jobs_number_blocks) before. */
cudaError_t launch_copy_rects (const CopyParams & p, int blocks,
    cudaStream_t stream);

/* The source of every plane to dst, in one launch. */
cudaError_t launch_copy_planes (const CuconvPlane * planes, int n_planes,
    cudaStream_t stream);

/* Soft regions (cuconv-region-blend.cu) ---------------------------------- */

/* One rectangle of a plane to weigh by boxes[box]: w x h samples from
 * (x, y).  first_block: the blocks of the jobs before it. */
struct WeighJob
{
  int plane;
  int x, y, w, h;
  int box;
  int first_block;
};

struct WeighPlane
{
  float *weight;                /* a float a sample, width a row */
  int width;
  int sx, sy;                   /* the plane's subsampling */
};

struct WeighParams
{
  WeighPlane plane[CUCONV_MAX_PLANES];
  const WeighJob *jobs;
  const CuconvBox *boxes;
  int n_jobs;
  int shape;                    /* CuconvShape */
  double feather;
};

/* Numbers the blocks of jobs [0, n); returns how many there are. */
int weigh_jobs_number_blocks (WeighJob * jobs, int n);

/* One launch that raises each sample's weight (zeroed before) to the
 * weight of every job's box there. */
cudaError_t launch_weigh_rects (const WeighParams & p, int blocks,
    cudaStream_t stream);

struct BlendPlane
{
  const uint8_t *src;
  uint8_t *dst;                 /* the filter's output, blended in place */
  size_t src_pitch, dst_pitch;
  const float *weight;          /* launch_weigh_rects's */
  int width;
  int nc, bytes, shift;
  unsigned max;                 /* 2^depth - 1 */
};

struct BlendParams
{
  BlendPlane plane[CUCONV_MAX_PLANES];
  int first_row[CUCONV_MAX_PLANES + 1];
  int n;
  int mode;                     /* CuconvRegionMode */
};

/* One launch that blends every sample of the planes by its weight
 * (cuconv_region_mode_weight). */
cudaError_t launch_blend_planes (const BlendParams & b, cudaStream_t stream);

/* Region-relative filters (cuconv-region-blend.cu) ----------------------- */

/* One plane of a region whose crop was filtered: its rectangle on the
 * plane, [x, x + w) x [y, y + h), and the crop's output, whose first
 * sample is the plane's (cx, cy). */
struct RegionPlane
{
  const uint8_t *src;
  uint8_t *dst;
  const uint8_t *crop;
  size_t src_pitch, dst_pitch, crop_pitch;
  float *weight;                /* soft: the largest written, a float a
                                 * sample, width a row */
  int width;
  int x, y, w, h, cx, cy;
  int nc, bytes, shift, sx, sy;
  unsigned max;
};

struct RegionParams
{
  RegionPlane plane[CUCONV_MAX_PLANES];
  int first_row[CUCONV_MAX_PLANES + 1];
  int n;
  CuconvBox box;
  int shape;                    /* CuconvShape */
  double feather;
  int soft;
};

/* One launch that writes a region's filtered crop into dst inside its
 * rectangle on every plane: all of it for hard regions; for soft ones
 * each sample whose weight is at least the largest written there before,
 * blended by it. */
cudaError_t launch_write_region (const RegionParams & p, cudaStream_t stream);

/* The direct kernel (cuconv-region-direct.cu) ---------------------------- */

constexpr int DIRECT_W = 32;    /* output pixels of a tile row */
constexpr int DIRECT_MAX_H = 64;
constexpr int DIRECT_MIN_H = 8;

/* Taps and columns are handled 4 at a time (one float4). */
__host__ __device__ constexpr int
quad_up (int n)
{
  return (n + 3) & ~3;
}

/* A tile w x h of a plane whose filter reaches rx, ry, with taps padded
 * to t4x, t4y (matrix: rows of t4x) stages `direct_cols` columns and
 * `direct_rows` rows: its outputs, 4 a thread, and the taps' last chunk
 * past them. */
__host__ __device__ constexpr int
direct_cols (int w, int t4x)
{
  return quad_up (w) + t4x;
}

__host__ __device__ constexpr int
direct_rows (int nt, int h, int ry, int t4y)
{
  return nt == 0 ? h + 2 * ry : quad_up (h) + t4y;
}

/* Floats of one plane's taps: each term's horizontal taps, then each
 * term's vertical taps; or the matrix's side rows. */
__host__ __device__ constexpr int
direct_taps (int nt, int t4x, int t4y, int side)
{
  return nt == 0 ? side * t4x : nt * (t4x + t4y);
}

/* One block's work: a tile of one component of a plane, inside one of
 * its rectangles. */
struct DirectItem
{
  int x0, y0;                   /* the tile's first pixel */
  uint8_t plane, comp;
  uint8_t w, h;                 /* at most DIRECT_W x tile_h */
};

struct DirectPlane
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_pitch, dst_pitch;
  int width, height;            /* pixels, for the border */
  int row_begin, row_end;       /* the whole plane (band_params_init) */
  int nc, bytes, shift;
  uint32_t mask;                /* 2^depth - 1: the bits read, the saturation */
  uint32_t word_mask;           /* 0xff or 0xffff */
  uint32_t fill;                /* a FILL sample as it is stored */
  uint8_t op[CUCONV_MAX_COMP];  /* CuconvCompOp */
  int rx, ry;                   /* the filter's reach on the plane */
  int t4x, t4y;                 /* taps a term, 0-padded to a multiple of 4 */
  int taps;                     /* the first of them in DirectParams.taps */
};

/* Shared memory, in floats: the block's taps, the staged input, the
 * horizontal pass's rows of each term, the border tables. */
struct DirectParams
{
  DirectPlane plane[CUCONV_MAX_PLANES];
  const float *taps;            /* device memory, uploaded with the items */
  const DirectItem *items;
  int border;
  int combine;
  float amount;
  int side;                     /* the matrix's, when n_terms is 0 */
  int taps_cap, stage_cap, hbuf_cap, cols_cap;
};

/* Which components of a plane the direct kernel writes: the filtered and
 * the filled ones (dst holds the copied ones already). */
int written_components (const CuconvPlane & pl);

/* Whether a component of pl is filtered. */
bool has_filtered (const CuconvPlane & pl);

/* Whether the direct kernel computes f: one or two separable terms, or
 * the matrix, each a plain convolution of taps that reach at most
 * DIRECT_MAX_REACH. */
bool direct_takes_filter (const CuconvFilter & f);

/* Whether the direct kernel takes plane pl: 1 to 4 components, 16-bit
 * samples 2-byte aligned. */
bool direct_takes_plane (const CuconvPlane & pl);

/* The direct kernel's view of plane pl under f. */
void direct_plane_init (DirectPlane & d, const CuconvPlane & pl,
    const CuconvFilter & f);

/* Writes the taps of plane pl (direct_taps of them) to out: each term's
 * centred in the plane's reach, 0 around them, so a narrower term adds
 * exact zeros. */
void direct_taps_write (float *out, const DirectPlane & d,
    const CuconvPlane & pl, const CuconvFilter & f);

/* The shared memory of a launch whose tiles are at most tile_h high, for
 * the planes in `on`: fills the caps of p, returns the bytes. */
size_t direct_smem (DirectParams & p, const CuconvFilter & f, const bool *on,
    int n_planes, int tile_h);

/* One launch of the direct kernel of nt terms (0: the matrix) over
 * `blocks` items of p.items, with smem bytes of shared memory
 * (direct_smem). */
cudaError_t launch_direct (const DirectParams & p, int nt, int blocks,
    size_t smem, cudaStream_t stream);

/* Region-relative filters, batched (cuconv-region-relative.cu) ---------- */

struct RelativeWork;

/* The widest reach of a job's taps, and the outputs of a row a block of
 * the horizontal pass sums. */
constexpr int RELATIVE_MAX_REACH = 256;
constexpr int RELATIVE_TW = 128;
/* RelativeJob.hbuf of a job without a filtered component */
constexpr size_t RELATIVE_NO_ROWS = SIZE_MAX;

/* One plane of one region: its rectangle on the plane, [x, x + w) x
 * [y, y + h), and its filter's taps there (t4x horizontal then t4y
 * vertical ones, each centred in its reach and 0-padded to a multiple of
 * 4).  Its horizontal pass: `rows` rows (row v is the plane's row y - ry
 * + v) of `pitch` floats for each filtered component, one after the
 * other from hbuf. */
struct RelativeJob
{
  int plane, region;            /* region: its place in the order */
  int x, y, w, h;
  int rx, ry, t4x, t4y;
  int taps;
  int rows, pitch;
  size_t hbuf;
};

struct RelativeParams
{
  DirectPlane plane[CUCONV_MAX_PLANES];  /* as direct_plane_init () */
  int sx[CUCONV_MAX_PLANES], sy[CUCONV_MAX_PLANES];
  int n_planes, n_jobs;
  const RelativeJob *jobs;
  const int *h_first, *v_first; /* each job's first block in each launch */
  const float *taps;
  float *hbuf;
  /* region k (its place in the order): its rectangle on plane i,
   * rects[k * n_planes + i] (w 0: none), its box, and the regions whose
   * rectangles meet it on a plane, rivals[rivals_first[k]] to
   * rivals[rivals_first[k + 1] - 1] */
  const CuconvRect *rects;
  const CuconvBox *boxes;
  const int *rivals_first, *rivals;
  int border;
  int soft;
  int shape;                    /* CuconvShape */
  double feather;
};

/* Numbers the blocks of jobs [0, n) of both launches into h_first[0..n]
 * and v_first[0..n] (the totals last). */
void relative_number_blocks (const RelativeJob * jobs, int n, int *h_first,
    int *v_first);

/* The two launches: every job's horizontal pass, then its vertical pass
 * and the write where its region applies. */
cudaError_t launch_relative (const RelativeParams & p, int h_blocks,
    int v_blocks, cudaStream_t stream);

}                               /* namespace cuconv */

/* The memory (cuconv-device-frames-memory.cu) --------------------------- */

/* Page-locked memory the host writes a frame's work in, uploaded from
 * there: a few, used in turn, so that the host may write a frame while
 * the previous ones' uploads still wait in the stream. */
#define WORK_SLOTS 4

struct WorkSlot
{
  uint8_t *host;
  size_t size;
  cudaEvent_t uploaded;         /* recorded after its upload */
};

struct _CuconvDeviceFrames
{
  cuconv::DeviceBuffer scratch; /* planes filtered whole (INSIDE) */
  cuconv::DeviceBuffer d_work;  /* a frame's taps, tiles and copy jobs */
  cuconv::GpuUse use;           /* the last frame's launches */
  WorkSlot slot[WORK_SLOTS];
  int next_slot;
  CuconvRect *clipped;          /* the rectangles on each plane */
  size_t clipped_cap;
  cuconv::Scratch wide;         /* the wide paths' intermediates */
  cuconv::RelativeWork *relative;       /* the batched relative filters' */
};

namespace cuconv {

/* The next slot, at least `bytes` large, once the upload it served
 * WORK_SLOTS frames ago is done. */
cudaError_t work_begin (CuconvDeviceFrames * rf, size_t bytes,
    uint8_t ** host);

/* Grows a device buffer of rf to at least `bytes` (25 % more, in 64 KiB),
 * once the previous frame's launches are done with the old one. */
cudaError_t device_grow (CuconvDeviceFrames * rf, DeviceBuffer & b,
    size_t bytes);

/* Uploads the first `bytes` of the slot work_begin gave to rf->d_work,
 * after the previous frame's launches, which read it. */
cudaError_t work_upload (CuconvDeviceFrames * rf, size_t bytes,
    cudaStream_t stream);

/* The end of a frame that used rf's device buffers. */
cudaError_t work_end (CuconvDeviceFrames * rf, cudaStream_t stream);

/* Region-relative filters (cuconv-device-frames-relative.cu): the source
 * into dst, then each region filtered by its own filter where it
 * applies. */
int filter_relative (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, cudaStream_t stream,
    CuconvStatus * st);

/* Soft regions inside which f applies, in the same two launches as
 * region-relative filters whose regions all have f (the largest weight
 * at a sample is the one blended with, as filter_soft's): 0, an error
 * (a cudaError_t), or RELATIVE_NOT_TAKEN when those launches do not take
 * them (nothing enqueued). */
constexpr int RELATIVE_NOT_TAKEN = -1;
int filter_soft_batched (CuconvDeviceFrames * rf, const CuconvPlane * planes,
    int n_planes, const CuconvRegions & reg, const CuconvFilter & f,
    cudaStream_t stream, CuconvStatus * st);

}                               /* namespace cuconv */

#endif /* __CUCONV_REGIONS_CUH__ */
