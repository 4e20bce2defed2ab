/* gst-cudaconvolve: the recursive gaussian's coefficients (host side, C),
 * shared by the CUDA kernels (cuconv-recursive.cu) and the tests.
 * docs/design.md, "The recursive gaussian".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __CUCONV_RECURSIVE_H__
#define __CUCONV_RECURSIVE_H__

#ifdef __cplusplus
extern "C" {
#endif

#define CUCONV_REC_MAX_SECTIONS 4
/* The most samples of one component a segment (one thread's run). */
#define CUCONV_REC_MAX_SEG 32
/* Entries of CuconvRecDir.pseg: p^(jL) for j = 0..32. */
#define CUCONV_REC_PSEG 33

typedef struct
{
  double re, im;
} CuconvCplx;

/* One direction of the untruncated gaussian of sigma over n samples, as
 * sections i of one-pole complex recursions z[k] = x[k] + p_i z[k - 1]
 * (causal, from the left) and w[k] = x[k] + p_i w[k + 1] (anticausal,
 * from the right):
 *
 *   y[k] = sum_i Re (a_i (z_i[k] + w_i[k])) - c x[k],  c = sum_i Re (a_i)
 *
 * whose kernel is sum_i Re (a_i p_i^|k|), normalised so that its sum over
 * all integers is 1.  The samples are cut into segments of seg samples
 * (n_segs of them, the last padded with zeros to its end), and the
 * segments into groups of group segments (a chunk of a row, a band of
 * columns).  Everything the kernels need, computed in double from the
 * poles and weights, which are floats (p, a and c hold float values): the
 * kernels of 8 to 12 bits round the rest to float, those of 13 to 16 bits
 * keep it in double (cuconv-recursive.cu). */
typedef struct
{
  int n;                        /* samples along the direction, >= 1 */
  int n_sections;               /* 2..CUCONV_REC_MAX_SECTIONS */
  int seg;                      /* L, 1..CUCONV_REC_MAX_SEG */
  int n_segs;                   /* ceil (n / L) */
  int group;                    /* segments a group */
  int n_groups;                 /* ceil (n_segs / group) */
  int tail;                     /* samples of the last segment, 1..seg */
  float c;                      /* sum of Re (a) */
  CuconvCplx p[CUCONV_REC_MAX_SECTIONS];
  CuconvCplx a[CUCONV_REC_MAX_SECTIONS];
  CuconvCplx pk[CUCONV_REC_MAX_SECTIONS][CUCONV_REC_MAX_SEG + 1];  /* p^k */
  CuconvCplx pseg[CUCONV_REC_MAX_SECTIONS][CUCONV_REC_PSEG];  /* p^(jL) */
  CuconvCplx pinv[CUCONV_REC_MAX_SECTIONS];       /* 1 / p; 0 if p is */
  CuconvCplx clamp[CUCONV_REC_MAX_SECTIONS];      /* 1 / (1 - p) */
  CuconvCplx wrap[CUCONV_REC_MAX_SECTIONS];       /* 1 / (1 - p^n) */
  CuconvCplx mirror_p[CUCONV_REC_MAX_SECTIONS];   /* p^(n - 1) */
  CuconvCplx mirror_d[CUCONV_REC_MAX_SECTIONS];   /* 1 / (1 - p^(2n - 2)) */
  CuconvCplx pgroup[CUCONV_REC_MAX_SECTIONS];     /* p^(group L) */
  CuconvCplx pborder[CUCONV_REC_MAX_SECTIONS];    /* p^(n - last group's start) */
} CuconvRecDir;

/* The fewest sections (2, 3 or 4) whose kernel error keeps a filter of
 * n_dirs untruncated directions within a quarter of a sample's last bit
 * at depth, the error multiplied by gain (the sharpen amount, else 1). */
int cuconv_recursive_sections (int depth, double gain, int n_dirs);

/* The largest L1 distance, for sigma from 0.8 to 256, between the
 * discrete kernel of n_sections sections the GPU applies and the sampled
 * gaussian, both normalised (cuconv-recursive-coeffs.c, rounded up). */
double cuconv_recursive_error (int n_sections);

/* Fills d for sigma (> 0), n_sections, n samples, segments of seg samples
 * and groups of group segments. */
void cuconv_recursive_dir_init (CuconvRecDir * d, double sigma,
    int n_sections, int n, int seg, int group);

#ifdef __cplusplus
}
#endif
#endif /* __CUCONV_RECURSIVE_H__ */
