/* gst-cudaconvolve: the CPU engine's internal declarations, shared by its
 * files: the engine and its tap loops (cuconv-cpu.c), the box's running
 * sums (cuconv-cpu-box.c), the untruncated gaussian's recursive filter
 * (cuconv-cpu-recursive.c) and Canny (cuconv-cpu-canny.c).  The API is
 * cuconv.h's cuconv_cpu_*.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_CPU_H__
#define __CUCONV_CPU_H__

#include <stddef.h>
#include <stdint.h>

#include "cuconv.h"

/* The hot loops are built for AVX2 as well on x86-64, the machine picking
 * one at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((target_clones ("avx2", "default")))
#else
#define HOT
#endif

/* One band's memory, grown only. */
typedef struct
{
  float *mem;
  size_t size;                  /* floats */
} Band;

/* What one plane is filtered with, as the reference takes it. */
typedef struct
{
  const CuconvPlane *p;
  int nc, w, n;                 /* components, samples a row, floats a row */
  int wide, shift;
  unsigned mask;
  CuconvBorder border;
  int n_terms;                  /* 0: the matrix */
  CuconvCombine combine;
  float amount;
  const CuconvTaps *kx[2], *ky[2];
  const CuconvMatrix *m;
  int rx, ry;                   /* the widest radii read */
  /* the sample each border position of a row copies (cuconv_border_index,
   * -1: 0): x = -rx..-1, then w..w + rx - 1 */
  int border_x[2 * CUCONV_MAX_RADIUS];
} Plane;

/* At least floats of memory in b (grown only, kept).  Returns 0, or -1
 * without memory (b unchanged). */
int cpu_band_memory (Band * b, size_t floats);

/* The share [*from, *to) of count (rows, or columns) that band takes of
 * n_bands. */
void cpu_band_rows (int band, int n_bands, int count, int *from, int *to);

/* n samples of a row (bytes, or 16-bit words when wide, each value the
 * depth bits above shift) as floats. */
void cpu_row_to_float (const uint8_t * src, int wide, int shift,
    unsigned mask, int n, float *dst);

/* Source row y (any integer) as floats with rx samples of border on each
 * side, into ext ((w + 2 rx) * nc floats). */
void cpu_ext_row (const Plane * pl, int y, float *ext);

/* Writes the output row y: the filtered values v where a component is
 * filtered, the source or the fill value elsewhere. */
void cpu_write_row (const Plane * pl, int y, const float *v);

/* t0 (and t1) combined as the filter says, into t0; in: room for the
 * source row, read when sharpening. */
void cpu_combine_row (const Plane * pl, int y, float *t0, const float *t1,
    float *in);

/* Rows y0..y1 - 1 of the box, by running sums (cuconv-cpu-box.c).
 * Returns 0, or -1 without memory. */
int cpu_band_box (const Plane * pl, Band * b, int y0, int y1);

/* Whether f is the untruncated gaussian the recursive filter takes, and
 * its pass (0: columns from..to - 1, 1: rows from..to - 1) of plane pl,
 * xp and yp its float planes (cuconv-cpu-recursive.c).  Returns 0, or -1
 * without memory. */
int cpu_is_recursive (const CuconvFilter * f);
int cpu_rec_band (const Plane * pl, float *xp, float *yp, int pass,
    int from, int to, Band * b);

/* Canny (cuconv-cpu-canny.c): the passes of a frame of planes (the
 * stages of each component of each plane); the memory they need, the
 * frame's in shared and each band's in bands[] (0, or -1 without
 * memory); band's share, of n_bands, of one pass (0). */
int cpu_canny_passes (const CuconvFilter * f, const CuconvPlane * planes,
    int n_planes);
int cpu_canny_prepare (Band * shared, Band * bands, int n_bands,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f);
int cpu_canny_frame_band (Band * shared, Band * b, int band, int n_bands,
    const CuconvPlane * planes, int n_planes, const CuconvFilter * f,
    int pass);

#endif /* __CUCONV_CPU_H__ */
