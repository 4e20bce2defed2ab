/* gst-cudaconvolve: GPU conformance suite for the CUDA engine.
 *
 * cuconv_filter_device () against the CPU reference
 * (cuconv_reference_plane_filter) over the planes of the element's formats:
 * 8, 10, 12 and 16 bits (P010's shifted samples included), planar,
 * semi-planar and packed (1, 2 and 4 interleaved components), each
 * component filtered, copied or filled as the `planes` choice makes it.
 * Two sets of settings:
 *
 *   sweep    gaussian and box, radii 1..64 and sigma-only settings, on the
 *            8-bit YUV formats, I420_10LE and P010 (the tuned kernels, 4:2:0
 *            in one launch)
 *   general  every kernel type: gaussian (anisotropic too) and box on every
 *            format, sharpen with several amounts, sobel and laplacian at
 *            radii 1, 2, 3 and 5, custom separable kernels (negative taps,
 *            rx != ry, unnormalised), custom 3x3, 5x5, 7x7 and 31x31
 *            matrices; each with a `planes` choice, on every format
 *
 * every border mode, sizes from 1x1 to 3840x2160 (the general set up to
 * 1921x1081, there with one border a kernel), tight (odd) and padded
 * strides.  Tolerance: +-1 LSB of the sample's depth on filtered samples
 * (whose bits below a P010 sample must be 0); copied and filled samples
 * exact.
 *
 * Then a gaussian (r 64) and a box (r 40) run in the primary context, a
 * second context of the device and the primary again, from device memory
 * and through the strips: a kernel's shared memory limit belongs to a
 * context.
 *
 * Then the regions (cuconv_device_frames_filter against
 * cuconv_reference_frame_regions): every kernel type and border, INSIDE
 * and OUTSIDE, 8- and 16-bit planar, semi-planar and packed formats,
 * rectangles at every edge, overlapping, 1x1, the whole frame, none, a
 * sample past and short of the direct kernel's tiles, and 1500 small
 * ones, at 1x1, 3x7, 333x211 and 1921x1081; each set but the 1500 also
 * as soft regions: ellipses, and boxes and ellipses with a feather; and
 * with region-relative filters (a gaussian of its own sigma, or a mosaic
 * on the grid of its box, a rectangle, hard and as feathered ellipses).
 *
 * Then the wide filters: radii 65 to 1024 of every kernel type through the
 * dispatch (the global path, the box's running sums), and the global path
 * forced at radii 1 to 64, on 8- and 16-bit planar, semi-planar and
 * packed formats, every border, from 1x1 (radius 1024) up.
 *
 * Then the untruncated gaussian (radius 0, sigma above 21.33: the
 * recursive path): sigma 21.4 to 256, sigma_y mixes and sharpen, every
 * border, 8- to 16-bit formats of 1, 2 and 4 components, 1x1 to 17000x2
 * and 1920x1080, once through the strips, and steps along lines of 4099
 * samples at 8, 12 and 16 bits with sharpen amount 10 (run_untruncated).
 *
 *   test-gpu [--quick | --race] [--matrix | --regions | --wide | --window
 *            | --untruncated] [--stream | --mma | --tiled | --nlmeans-sums]
 *            [--kernel=NICK] [--seed=N] [--threads=N] [--verbose]
 *
 * --stream and --mma force the streaming kernel (cuconv-stream.cu) or the
 * tensor-core blur (cuconv-mma.cu) wherever it takes a plane, whatever
 * its size; --tiled never takes either: the dispatch takes them for some
 * planes and radii only, which few cases are.  --nlmeans-sums takes
 * non-local means by sums (cuconv-nlmeans.cuh), which the dispatch does
 * not take yet.
 *
 * Exits 77 (skip) when no CUDA device is usable, 0 when every case passes,
 * 1 otherwise.  The seed can also come from CUCONV_TEST_SEED.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>                /* types only: the driver is reached
                                 * through the runtime's entry points */
#include <cuda_runtime_api.h>

#include "cuconv.h"
#include "cuconv-cuda.h"
#include "cuconv-paths.h"
#include "cuconv-region-weight.h"

#define EXIT_SKIP 77
/* Bytes around every plane that the kernel must leave as they are. */
#define GUARD 256
#define POISON_A 0xA5
#define POISON_B 0x5A
#define MAX_FAIL_LINES 30
#define DEFAULT_SEED 0x5eed2024u
#define MAX_KEYS 32
#define MAX_SETTINGS 512

/* ---------------------------------------------------------------------- */
/* Formats, as the engine sees them: planes of samples with a depth, and a
 * class for each interleaved component, which the `planes` choice turns
 * into an op: Y luma-class (luma, and every colour channel of RGB), C
 * chroma-class, O other (alpha, RGBx's padding: always copied). */

enum
{
  F_SWEEP = 1,                  /* in the gaussian/box radius sweep */
  F_QUICK = 2,                  /* in --quick */
  F_RACE = 4,                   /* in --race */
};

typedef struct
{
  int sub_x, sub_y;
  int slot;                     /* planes with the same slot, geometry and
                                 * depth share their data */
  const char *comp;             /* a class a component */
} FormatPlane;

typedef struct
{
  const char *name;
  int depth, shift;
  int n_planes;
  FormatPlane plane[3];
  unsigned flags;
} Format;

/* BGRA, RGBx and BGRx are RGBA's plane to the engine (three luma-class
 * channels and a copied fourth), so they are not repeated. */
static const Format formats[] = {
  {"GRAY8", 8, 0, 1, {{1, 1, 0, "Y"}}, F_SWEEP},
  {"I420", 8, 0, 3, {{1, 1, 0, "Y"}, {2, 2, 1, "C"}, {2, 2, 2, "C"}},
      F_SWEEP | F_QUICK | F_RACE},
  {"YV12", 8, 0, 3, {{1, 1, 0, "Y"}, {2, 2, 2, "C"}, {2, 2, 1, "C"}},
      F_SWEEP},
  {"NV12", 8, 0, 2, {{1, 1, 0, "Y"}, {2, 2, 1, "CC"}},
      F_SWEEP | F_QUICK | F_RACE},
  {"NV21", 8, 0, 2, {{1, 1, 0, "Y"}, {2, 2, 1, "CC"}}, F_SWEEP},
  {"Y42B", 8, 0, 3, {{1, 1, 0, "Y"}, {2, 1, 1, "C"}, {2, 1, 2, "C"}},
      F_SWEEP | F_QUICK},
  {"Y444", 8, 0, 3, {{1, 1, 0, "Y"}, {1, 1, 1, "C"}, {1, 1, 2, "C"}},
      F_SWEEP},
  {"I420_10LE", 10, 0, 3, {{1, 1, 0, "Y"}, {2, 2, 1, "C"}, {2, 2, 2, "C"}},
      F_SWEEP | F_QUICK},
  {"I420_12LE", 12, 0, 3, {{1, 1, 0, "Y"}, {2, 2, 1, "C"}, {2, 2, 2, "C"}},
      0},
  {"P010_10LE", 10, 6, 2, {{1, 1, 0, "Y"}, {2, 2, 1, "CC"}},
      F_SWEEP | F_QUICK | F_RACE},
  {"P016_LE", 16, 0, 2, {{1, 1, 0, "Y"}, {2, 2, 1, "CC"}}, 0},
  {"GRAY16_LE", 16, 0, 1, {{1, 1, 0, "Y"}}, 0},
  {"Y444_16LE", 16, 0, 3, {{1, 1, 0, "Y"}, {1, 1, 1, "C"}, {1, 1, 2, "C"}},
      F_QUICK},
  {"RGBA", 8, 0, 1, {{1, 1, 0, "YYYO"}}, F_QUICK | F_RACE},
  {"AYUV", 8, 0, 1, {{1, 1, 0, "OYCC"}}, F_QUICK},
};

#define N_FORMATS ((int) (sizeof (formats) / sizeof (formats[0])))

static int
plane_ncomp (const FormatPlane * fp)
{
  return (int) strlen (fp->comp);
}

static int
sample_bytes (int depth)
{
  return depth > 8 ? 2 : 1;
}

/* ---------------------------------------------------------------------- */
/* Settings */

typedef struct
{
  int w, h;
} Size;

static const Size full_sizes[] = {
  {1, 1}, {2, 3}, {17, 9}, {385, 289}, {1921, 1081}, {3840, 2160},
};

static const Size quick_sizes[] = {
  {1, 1}, {2, 3}, {17, 9}, {385, 289},
};

/* --race, for compute-sanitizer racecheck: interior and border tiles of
 * every kernel path, mirror border. */
static const Size race_sizes[] = { {17, 9}, {385, 289} };

static const unsigned full_radii[] = { 1, 2, 3, 4, 7, 8, 16, 31, 64 };
/* The quick run still takes the engine's unrolled radii (1, 3, 16 and
 * their chroma halves; 4: the 16-bit blur's tiles of 7 rows) and its
 * generic path (31, 64). */
static const unsigned quick_radii[] = { 1, 3, 4, 16, 31, 64 };
/* the unrolled (1, 16) and generic (31) separable paths, the box, and
 * the 16-bit blur's tiles of 7 rows (4, in frames) */
static const unsigned race_radii[] = { 1, 4, 16, 31 };

/* Radius 0 with a sigma, and a sigma that does not match the radius. */
static const struct
{
  CuconvKernel kernel;
  unsigned radius;
  double sigma;
} extra_settings[] = {
  {CUCONV_KERNEL_GAUSSIAN, 0, 1.5},
  {CUCONV_KERNEL_GAUSSIAN, 0, 10.0},
  {CUCONV_KERNEL_BOX, 0, 1.5},
  {CUCONV_KERNEL_GAUSSIAN, 5, 4.0},
  {CUCONV_KERNEL_GAUSSIAN, 16, 0.5},
};

/* The general set: one line a kernel, run with every border. */
typedef struct
{
  const char *label;
  CuconvKernel kernel;
  CuconvPlanes planes;
  unsigned radius;
  double sigma, sigma_y, amount;
  int normalize;
  int x_len, y_len;
  double x[9], y[9];
  int side;                     /* a matrix: filled by matrix_fill () */
  int positive;                 /* the matrix's taps all > 0 */
  int max_w;                    /* the largest width it runs at (--quick:
                                 * 17 but the byte bilateral's), 0: all */
  int race;                     /* in --race */
  double sigma_range;           /* bilateral */
  unsigned block;               /* pixelate */
  unsigned patch;               /* nlmeans */
  double low, high;             /* canny */
} General;

static const General general[] = {
  {"gaussian r=2", CUCONV_KERNEL_GAUSSIAN, CUCONV_PLANES_ALL, 2},
  {"gaussian r=16 sigma_y=3", CUCONV_KERNEL_GAUSSIAN, CUCONV_PLANES_LUMA, 16, 0,
      3.0, .race = 1},
  {"gaussian r=64", CUCONV_KERNEL_GAUSSIAN, CUCONV_PLANES_AUTO, 64},
  {"box r=5", CUCONV_KERNEL_BOX, CUCONV_PLANES_CHROMA, 5},
  {"box r=40", CUCONV_KERNEL_BOX, CUCONV_PLANES_AUTO, 40, .race = 1},
  {"sharpen r=2 amount=0.5", CUCONV_KERNEL_SHARPEN, CUCONV_PLANES_AUTO, 2, 0, 0,
      0.5},
  {"sharpen r=5 amount=3", CUCONV_KERNEL_SHARPEN, CUCONV_PLANES_ALL, 5, 0, 0, 3.0,
      .race = 1},
  {"sharpen sigma=1.5 amount=10", CUCONV_KERNEL_SHARPEN, CUCONV_PLANES_CHROMA, 0,
      1.5, 0, 10.0},
  {"sobel r=1", CUCONV_KERNEL_SOBEL, CUCONV_PLANES_AUTO, 1},
  {"sobel r=2", CUCONV_KERNEL_SOBEL, CUCONV_PLANES_ALL, 2, .race = 1},
  {"sobel r=3", CUCONV_KERNEL_SOBEL, CUCONV_PLANES_LUMA, 3},
  {"sobel r=5", CUCONV_KERNEL_SOBEL, CUCONV_PLANES_AUTO, 5},
  {"laplacian r=1", CUCONV_KERNEL_LAPLACIAN, CUCONV_PLANES_AUTO, 1},
  {"laplacian r=2", CUCONV_KERNEL_LAPLACIAN, CUCONV_PLANES_LUMA, 2},
  {"laplacian r=3", CUCONV_KERNEL_LAPLACIAN, CUCONV_PLANES_AUTO, 3},
  {"laplacian r=5", CUCONV_KERNEL_LAPLACIAN, CUCONV_PLANES_ALL, 5, .race = 1},
  {"custom 7x3 negative taps", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_AUTO, 0, 0, 0, 0,
        1, 7, 3, {-1, 0, 2, 5, 2, 0, -1}, {1, 2, 1}},
  {"custom 3x1 unnormalised", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_ALL, 0, 0, 0, 0,
      0, 3, 1, {0.75, 0.5, 0.75}, {1}, .race = 1},
  {"custom x only 9 taps", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_LUMA, 0, 0, 0, 0,
      1, 9, 0, {1, 1, 2, 2, 3, 2, 2, 1, 1}},
  {"custom matrix 3x3", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_AUTO, .side = 3},
  {"custom matrix 5x5", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_LUMA, .side = 5},
  {"custom matrix 3x3 taps > 0", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_AUTO,
      .side = 3, .positive = 1},
  {"custom matrix 5x5 taps > 0", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_ALL,
      .side = 5, .positive = 1},
  {"custom matrix 7x7", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_ALL, .side = 7,
      .race = 1},
  {"custom matrix 31x31", CUCONV_KERNEL_CUSTOM, CUCONV_PLANES_AUTO, .side = 31,
      .max_w = 385},
  /* the bilateral: the unrolled 8-bit radii (2, 4, 7 and their chroma 1,
   * 2, 4), the generic kernel (rx != ry, 16), sigma_r 0 (equal samples
   * only) and 255 (nearly the gaussian) */
  {"bilateral r=2 sr=20", CUCONV_KERNEL_BILATERAL, CUCONV_PLANES_ALL, 2,
      .sigma_range = 20.0},
  {"bilateral r=4 sigma=2 sr=40", CUCONV_KERNEL_BILATERAL, CUCONV_PLANES_AUTO,
      4, 2.0, .race = 1, .sigma_range = 40.0},
  {"bilateral r=7 sr=10", CUCONV_KERNEL_BILATERAL, CUCONV_PLANES_LUMA, 7,
      .max_w = 385, .sigma_range = 10.0},
  {"bilateral sigma=1.5 sigma_y=3 sr=255", CUCONV_KERNEL_BILATERAL,
      CUCONV_PLANES_CHROMA, 0, 1.5, 3.0, .sigma_range = 255.0},
  {"bilateral r=16 sr=30", CUCONV_KERNEL_BILATERAL, CUCONV_PLANES_ALL, 16,
      .max_w = 385, .sigma_range = 30.0},
  {"bilateral r=3 sr=0", CUCONV_KERNEL_BILATERAL, CUCONV_PLANES_AUTO, 3,
      .sigma_range = 0.0},
  /* non-local means: a search window with and without patches, reach up
   * to the cut (16 + 8) */
  {"nlmeans r=2 patch 1 sr=20", CUCONV_KERNEL_NLMEANS, CUCONV_PLANES_AUTO, 2,
      .max_w = 385, .race = 1, .sigma_range = 20.0, .patch = 1},
  {"nlmeans r=3 patch 0 sr=10", CUCONV_KERNEL_NLMEANS, CUCONV_PLANES_LUMA, 3,
      .sigma_range = 10.0},
  {"nlmeans r=16 patch 8 sr=40", CUCONV_KERNEL_NLMEANS, CUCONV_PLANES_ALL, 16,
      .max_w = 17, .sigma_range = 40.0, .patch = 8},
  /* pixelate: blocks of one sample, odd blocks that split chroma samples'
   * luma pairs, blocks larger than small planes */
  {"pixelate 1", CUCONV_KERNEL_PIXELATE, CUCONV_PLANES_ALL, .block = 1},
  {"pixelate 7", CUCONV_KERNEL_PIXELATE, CUCONV_PLANES_AUTO, .block = 7,
      .race = 1},
  {"pixelate 64", CUCONV_KERNEL_PIXELATE, CUCONV_PLANES_LUMA, .block = 64},
  /* canny (exact: a sample is 0 or the maximum, any difference is one):
   * no smoothing, the smoothing's largest radius, thresholds that leave
   * long weak chains, and low above high */
  {"canny r=0 50/150", CUCONV_KERNEL_CANNY, CUCONV_PLANES_AUTO, 0, 0.0,
      .race = 1, .low = 50.0, .high = 150.0},
  {"canny r=2 20/60", CUCONV_KERNEL_CANNY, CUCONV_PLANES_ALL, 2, .low = 20.0,
      .high = 60.0},
  {"canny sigma=6 (r=16) 10/40", CUCONV_KERNEL_CANNY, CUCONV_PLANES_LUMA, 0,
      6.0, .low = 10.0, .high = 40.0},
  {"canny r=1 200/5", CUCONV_KERNEL_CANNY, CUCONV_PLANES_AUTO, 1,
      .low = 200.0, .high = 5.0},
};

#define N_GENERAL ((int) (sizeof (general) / sizeof (general[0])))

/* Non-separable matrices: a sharpening 3x3 (sum 1, not normalised), and
 * larger ones of mostly positive weights with negative ones among them,
 * normalised; positive: a tent plus a diagonal, all > 0, normalised (the
 * streamed matrix's store without a clamp). */
static void
matrix_fill (CuconvSettings * s, int side, int positive)
{
  static const double sharpen3[9] = { 0, -1, 0, -1, 5, -1, 0, -1, 0 };
  const int r = side / 2;
  int i, j;

  s->matrix_side = side;
  if (side == 3 && !positive) {
    memcpy (s->matrix, sharpen3, sizeof (sharpen3));
    return;
  }
  s->normalize = 1;
  for (j = -r; j <= r; j++)
    for (i = -r; i <= r; i++)
      s->matrix[(j + r) * side + i + r] = (double) (r + 1 - abs (i))
          * (r + 1 - abs (j)) + (positive ? 0.0 : (i * 7 + j * 3) % 5 == 0 ?
          -2.0 * r : 0.0) + (i == 2 * j ? 3.0 : 0.0);
}

/* One setting of the run, and which formats it runs on. */
typedef struct
{
  CuconvSettings s;
  CuconvPlanes planes;
  const char *label;
  int sweep;                    /* the sweep: F_SWEEP formats only */
  int max_w;                    /* the largest width it runs at, 0: all */
  const char *ops4;             /* 4-component planes: an op a component,
                                 * F filter, C copy, L fill; NULL: planes */
} Setting;

typedef struct
{
  int quick;                    /* --quick or --race */
  int race;
  int regions_only;             /* --regions */
  int wide_only;                /* --wide (or --window) */
  int window_only;              /* --window: the wide section's last set */
  int untruncated_only;         /* --untruncated */
  int matrix_only;              /* --matrix */
  const char *kernel_only;      /* --kernel=NICK: the matrix's settings of
                                 * that kernel only */
  int verbose;
  uint64_t seed;
  int n_threads;
} Options;

static Options opt;
static int fail_lines;
/* The path every run is forced through (--stream, --mma, --tiled; the wide
 * section's own), and the formats the wide section runs (NULL: those of
 * the options). */
static CuconvPath base_path = CUCONV_PATH_AUTO;
static CuconvPath run_path = CUCONV_PATH_AUTO;
static const char *const *run_formats;
static int n_run_formats;
/* When set, the formats of the run: these names (NULL-terminated). */
static const char *const *format_only;

static const char *const kernel_names[] = {
#define CUCONV_KERNEL_NICK(name, nick, desc) nick,
  CUCONV_KERNEL_TYPES (CUCONV_KERNEL_NICK)
#undef CUCONV_KERNEL_NICK
};

static const char *const planes_names[] = {
#define CUCONV_PLANES_NICK(name, nick, desc) nick,
  CUCONV_PLANES_TYPES (CUCONV_PLANES_NICK)
#undef CUCONV_PLANES_NICK
};

static const char *const border_names[] = { "clamp", "mirror", "wrap", "zero" };

/* What happens to a component of the class c (Y, C or O) of a plane of
 * the given depth: the element's rule for `planes` (docs/usage.md). */
static int
comp_op (char c, const Setting * st, unsigned depth, unsigned *fill)
{
  const CuconvKernel k = st->s.kernel;

  if (c == 'O')
    return CUCONV_COMP_COPY;
  if (c == 'Y')
    return st->planes == CUCONV_PLANES_CHROMA ? CUCONV_COMP_COPY : CUCONV_COMP_FILTER;
  switch (st->planes) {
    case CUCONV_PLANES_ALL:
    case CUCONV_PLANES_CHROMA:
      return CUCONV_COMP_FILTER;
    case CUCONV_PLANES_LUMA:
      return CUCONV_COMP_COPY;
    case CUCONV_PLANES_AUTO:
    default:
      if (k == CUCONV_KERNEL_SHARPEN)
        return CUCONV_COMP_COPY;
      if (k == CUCONV_KERNEL_SOBEL || k == CUCONV_KERNEL_LAPLACIAN) {
        *fill = 1u << (depth - 1);
        return CUCONV_COMP_FILL;
      }
      return CUCONV_COMP_FILTER;
  }
}

static int
format_in_run (int i)
{
  for (int k = 0; run_formats && k < n_run_formats; k++)
    if (strcmp (formats[i].name, run_formats[k]) == 0)
      return 1;
  if (run_formats)
    return 0;
  if (format_only) {
    for (const char *const *n = format_only; *n; n++)
      if (strcmp (*n, formats[i].name) == 0)
        return 1;
    return 0;
  }
  if (opt.race)
    return (formats[i].flags & F_RACE) != 0;
  return !opt.quick || (formats[i].flags & F_QUICK);
}

static int
setting_on_format (const Setting * st, int i)
{
  return !st->sweep || (formats[i].flags & F_SWEEP);
}

static int
setting_at_size (const Setting * st, const Size * sz)
{
  return st->max_w == 0 || sz->w <= st->max_w;
}

/* ---------------------------------------------------------------------- */
/* Input data */

static uint64_t
splitmix64 (uint64_t * s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Noise, flat 0 and all-ones areas (rounding at saturation, taps summing
 * to 1) and salt and pepper, in 8x8 blocks chosen at random, over n bytes
 * of rows of row bytes.  16-bit words are random in all their bits: the
 * bits outside a sample must be ignored. */
static void
fill_bytes (uint8_t * p, size_t row, int h, int bytes, uint64_t seed)
{
  uint64_t s = seed;
  size_t bw = (row / bytes + 7) / 8, bh = (h + 7) / 8, x;
  uint8_t *mode = malloc (bw * bh);
  int y;

  for (x = 0; x < bw * bh; x++)
    mode[x] = splitmix64 (&s) % 8;
  for (y = 0; y < h; y++) {
    for (x = 0; x < row; x++) {
      uint8_t m = mode[(y / 8) * bw + (x / bytes) / 8];
      uint8_t v = (uint8_t) splitmix64 (&s);

      if (m == 5)
        v = 255;
      else if (m == 6)
        v = 0;
      else if (m == 7)
        v = (x / bytes + y) & 1 ? 255 : 0;
      p[(size_t) y * row + x] = v;
    }
  }
  free (mode);
}

/* ---------------------------------------------------------------------- */
/* The data of the planes, one a key, and the references. */

typedef struct
{
  int sub_x, sub_y, n_comp, depth, shift, slot;
  int w, h;
  size_t row;                   /* bytes */
  uint8_t *in;                  /* stride row */
} KeyPlane;

/* Key of plane j of format i, found or added. */
static int
key_of (KeyPlane * kp, int *n_keys, int i, int j)
{
  const Format *f = &formats[i];
  const FormatPlane *fp = &f->plane[j];
  int k;

  for (k = 0; k < *n_keys; k++)
    if (kp[k].sub_x == fp->sub_x && kp[k].sub_y == fp->sub_y &&
        kp[k].n_comp == plane_ncomp (fp) && kp[k].depth == f->depth &&
        kp[k].shift == f->shift && kp[k].slot == fp->slot)
      return k;
  memset (&kp[k], 0, sizeof (kp[k]));
  kp[k].sub_x = fp->sub_x;
  kp[k].sub_y = fp->sub_y;
  kp[k].n_comp = plane_ncomp (fp);
  kp[k].depth = f->depth;
  kp[k].shift = f->shift;
  kp[k].slot = fp->slot;
  (*n_keys)++;
  return k;
}

/* A reference job: one key's data, filtered with one setting and the ops
 * of a plane; planes of different formats share a job when nothing
 * differs. */
typedef struct
{
  int setting;
  int key;
  uint8_t op[CUCONV_MAX_COMP];
  unsigned fill;
  uint8_t *out;                 /* stride kp.row */
} RefJob;

typedef struct
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  const KeyPlane *kp;
  const Setting *settings;
  RefJob *jobs;
  int n_jobs;
  int *first_job;               /* per setting, and one past the last */
  int next_job;
  int consumed;                 /* settings the GPU checks are done with */
  int window;
  int *done;                    /* per setting: jobs finished */
  int alloc_failed;
} RefPool;

static void
plane_init (CuconvPlane * p, const KeyPlane * k, const uint8_t * op,
    unsigned fill)
{
  memset (p, 0, sizeof (*p));
  p->width = k->w;
  p->height = k->h;
  p->n_comp = k->n_comp;
  p->sub_x = k->sub_x;
  p->sub_y = k->sub_y;
  p->depth = k->depth;
  p->shift = k->shift;
  memcpy (p->op, op, CUCONV_MAX_COMP);
  p->fill = fill;
}

static void *
ref_worker (void *data)
{
  RefPool *pool = data;

  for (;;) {
    RefJob *j;
    const KeyPlane *k;
    CuconvFilter f;
    CuconvPlane p;
    uint8_t *out;
    int job;

    pthread_mutex_lock (&pool->lock);
    while (pool->next_job < pool->n_jobs &&
        pool->jobs[pool->next_job].setting >= pool->consumed + pool->window)
      pthread_cond_wait (&pool->cond, &pool->lock);
    if (pool->next_job >= pool->n_jobs) {
      pthread_mutex_unlock (&pool->lock);
      break;
    }
    job = pool->next_job++;
    pthread_mutex_unlock (&pool->lock);

    j = &pool->jobs[job];
    k = &pool->kp[j->key];
    out = malloc (k->row * k->h);
    plane_init (&p, k, j->op, j->fill);
    p.src = k->in;
    p.dst = out;
    p.src_stride = p.dst_stride = (ptrdiff_t) k->row;
    cuconv_filter_init (&f, &pool->settings[j->setting].s);
    if (out && cuconv_reference_plane_filter (&p, &f) < 0) {
      free (out);
      out = NULL;
    }

    pthread_mutex_lock (&pool->lock);
    j->out = out;
    if (!out)
      pool->alloc_failed = 1;
    pool->done[j->setting]++;
    pthread_cond_broadcast (&pool->cond);
    pthread_mutex_unlock (&pool->lock);
  }
  return NULL;
}

/* The ops of plane j of format i under setting st. */
static void
plane_ops (int i, int j, const Setting * st, uint8_t * op, unsigned *fill)
{
  const FormatPlane *fp = &formats[i].plane[j];
  int c;

  memset (op, 0, CUCONV_MAX_COMP);
  *fill = 0;
  for (c = 0; c < plane_ncomp (fp); c++)
    op[c] = (uint8_t) comp_op (fp->comp[c], st, formats[i].depth, fill);
  if (st->ops4 && plane_ncomp (fp) == 4) {
    *fill = 1u << (formats[i].depth - 1);
    for (c = 0; c < 4; c++)
      op[c] = st->ops4[c] == 'C' ? CUCONV_COMP_COPY : st->ops4[c] == 'L' ?
          CUCONV_COMP_FILL : CUCONV_COMP_FILTER;
  }
}

/* ---------------------------------------------------------------------- */
/* One format's frame on the device, in one of two layouts: tight (stride =
 * row bytes, odd for odd widths of 8-bit samples) or padded (src and dst
 * strides differ).  Planes start 256-byte aligned with GUARD bytes
 * between them. */

typedef struct
{
  int padded;
  int n_planes;
  int key[3];
  size_t row[3];                /* bytes */
  int h[3];
  size_t src_off[3], dst_off[3];
  ptrdiff_t src_stride[3], dst_stride[3];
  size_t src_size, dst_size;
  uint8_t *h_src;               /* what was uploaded, guards included */
  uint8_t *d_src, *d_dst;
} Layout;

static size_t
round_up (size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

static void
layout_init (Layout * l, const int *keys, int n_planes, const KeyPlane * kp,
    int padded)
{
  size_t so = GUARD, doff = GUARD;
  int i;

  memset (l, 0, sizeof (*l));
  l->padded = padded;
  l->n_planes = n_planes;
  for (i = 0; i < n_planes; i++) {
    const KeyPlane *k = &kp[keys[i]];

    l->key[i] = keys[i];
    l->row[i] = k->row;
    l->h[i] = k->h;
    l->src_stride[i] = padded ? round_up (k->row, 256) + 256 : k->row;
    l->dst_stride[i] = padded ? round_up (k->row, 128) + 64 : k->row;
    l->src_off[i] = so;
    l->dst_off[i] = doff;
    /* the last row ends at its last sample, as tight as a frame can be */
    so += (size_t) l->src_stride[i] * (k->h - 1) + k->row;
    doff += (size_t) l->dst_stride[i] * (k->h - 1) + k->row;
    so = round_up (so, 256) + GUARD;
    doff = round_up (doff, 256) + GUARD;
  }
  l->src_size = so;
  l->dst_size = doff;
}

static int
layout_upload (Layout * l, const KeyPlane * kp, uint64_t seed)
{
  int i, y;

  l->h_src = malloc (l->src_size);
  if (!l->h_src)
    return -1;
  fill_bytes (l->h_src, l->src_size, 1, 1, seed);
  for (i = 0; i < l->n_planes; i++) {
    const KeyPlane *k = &kp[l->key[i]];

    for (y = 0; y < k->h; y++)
      memcpy (l->h_src + l->src_off[i] + (size_t) y * l->src_stride[i],
          k->in + (size_t) y * k->row, k->row);
  }
  if (cudaMalloc ((void **) &l->d_src, l->src_size) != cudaSuccess ||
      cudaMalloc ((void **) &l->d_dst, l->dst_size) != cudaSuccess ||
      cudaMemcpy (l->d_src, l->h_src, l->src_size,
          cudaMemcpyHostToDevice) != cudaSuccess)
    return -1;
  return 0;
}

static void
layout_clear (Layout * l)
{
  free (l->h_src);
  cudaFree (l->d_src);
  cudaFree (l->d_dst);
  memset (l, 0, sizeof (*l));
}

/* Bytes outside the planes' samples that are not the poison. */
static uint64_t
count_guard_damage (const Layout * l, const uint8_t * buf, uint8_t poison)
{
  uint64_t bad = 0;
  size_t pos = 0, i;
  int p, y;

  for (p = 0; p < l->n_planes; p++) {
    for (y = 0; y < l->h[p]; y++) {
      size_t start = l->dst_off[p] + (size_t) y * l->dst_stride[p];

      for (i = pos; i < start; i++)
        bad += buf[i] != poison;
      pos = start + l->row[p];
    }
  }
  for (i = pos; i < l->dst_size; i++)
    bad += buf[i] != poison;
  return bad;
}

/* ---------------------------------------------------------------------- */
/* Checks */

typedef struct
{
  uint64_t cases;
  uint64_t failed_cases;
  uint64_t samples;
  uint64_t off_by_one;
  uint64_t off_by_more;
  uint64_t unwritten;
  uint64_t nondeterministic;
  uint64_t guard;
  uint64_t src_modified;
  int max_diff;
} Stats;

static void
settings_label (const Setting * st, char *buf, size_t len)
{
  const CuconvSettings *s = &st->s;

  if (st->label)
    snprintf (buf, len, "%s/%s planes=%s", st->label, border_names[s->border],
        planes_names[st->planes]);
  else if (s->radius == 0 || s->sigma > 0.0)
    snprintf (buf, len, "%s/%s r=%u sigma=%g", kernel_names[s->kernel],
        border_names[s->border], s->radius, s->sigma);
  else
    snprintf (buf, len, "%s/%s r=%u", kernel_names[s->kernel],
        border_names[s->border], s->radius);
}

static void
fail_line (const char *fmt_name, const Size * sz, const Setting * st,
    const char *what)
{
  char label[128] = "";

  if (fail_lines++ >= MAX_FAIL_LINES) {
    if (fail_lines == MAX_FAIL_LINES + 1)
      printf ("  (further failures not shown)\n");
    return;
  }
  if (st)
    settings_label (st, label, sizeof (label));
  printf ("  FAIL %s %dx%d %s: %s\n", fmt_name, sz->w, sz->h, label, what);
}

static unsigned
word_at (const uint8_t * row, int k, int bytes)
{
  return bytes == 1 ? row[k] : row[2 * k] | (unsigned) row[2 * k + 1] << 8;
}

/* Compares one downloaded frame with the references; returns TRUE when the
 * case passes.  a was poisoned with POISON_A, b (NULL in the quick run)
 * with POISON_B.  Filtered samples may differ from the reference by 1 in
 * their depth bits; copied and filled ones, and a P010 sample's low bits,
 * must be exact. */
static int
check_frame (const Layout * l, const Format * fmt, const KeyPlane * kp,
    const uint8_t * a, const uint8_t * b, RefJob * const *jobs, Stats * st,
    const Size * sz, const Setting * s)
{
  const char *lay = l->padded ? "padded" : "tight";
  const int bytes = sample_bytes (fmt->depth), shift = fmt->shift;
  const unsigned pa = bytes == 1 ? POISON_A : POISON_A * 0x101u;
  const unsigned pb = bytes == 1 ? POISON_B : POISON_B * 0x101u;
  char what[256];
  int ok = 1, p, y, x;
  uint64_t g;

  for (p = 0; p < l->n_planes; p++) {
    const KeyPlane *k = &kp[l->key[p]];
    const int n = k->n_comp, ws = k->w * n;
    const RefJob *job = jobs[p];
    uint64_t bad = 0, unwritten = 0, nondet = 0;
    int first_x = -1, first_y = -1, maxd = 0;
    unsigned first_g = 0, first_r = 0;

    for (y = 0; y < l->h[p]; y++) {
      const uint8_t *ra = a + l->dst_off[p] + (size_t) y * l->dst_stride[p];
      const uint8_t *rb = b ? b + l->dst_off[p] +
          (size_t) y * l->dst_stride[p] : NULL;
      const uint8_t *rr = job->out + (size_t) y * k->row;

      /* most rows match exactly: only the others are looked at closely */
      if (memcmp (ra, rr, k->row) == 0 && (!rb || memcmp (ra, rb,
                  k->row) == 0))
        continue;
      for (x = 0; x < ws; x++) {
        const unsigned ga = word_at (ra, x, bytes), r = word_at (rr, x, bytes);
        int d;

        if (job->op[x % n] == CUCONV_COMP_FILTER) {
          const int va = (int) (ga >> shift), vr = (int) (r >> shift);

          d = va > vr ? va - vr : vr - va;
          if ((ga ^ r) & ((1u << shift) - 1))
            d = 1 << 30;
        } else {
          d = ga == r ? 0 : 1 << 30;
        }
        if (d > maxd && d < (1 << 30))
          maxd = d;
        st->off_by_one += d == 1;
        if (d > 1) {
          if (first_y < 0) {
            first_x = x;
            first_y = y;
            first_g = ga;
            first_r = r;
          }
          bad++;
        }
        if (rb) {
          const unsigned gb = word_at (rb, x, bytes);

          if (ga != gb) {
            if (ga == pa && gb == pb)
              unwritten++;
            else
              nondet++;
          }
        }
      }
    }
    st->samples += (uint64_t) ws * l->h[p];
    st->off_by_more += bad;
    st->unwritten += unwritten;
    st->nondeterministic += nondet;
    if (maxd > st->max_diff)
      st->max_diff = maxd;

    if (bad) {
      snprintf (what, sizeof (what), "%s plane %d (%dx%d, %d comp, op %d): "
          "%" PRIu64 " samples off by > 1 (or copied/filled/low bits not "
          "exact), first at x=%d c=%d y=%d: gpu 0x%x, reference 0x%x", lay, p,
          k->w, k->h, n, job->op[first_x % n], bad, first_x / n, first_x % n,
          first_y, first_g, first_r);
      fail_line (fmt->name, sz, s, what);
      ok = 0;
    }
    if (unwritten || nondet) {
      snprintf (what, sizeof (what), "%s plane %d (%dx%d, %d comp): "
          "%" PRIu64 " samples never written, %" PRIu64 " differ between "
          "two identical runs", lay, p, k->w, k->h, n, unwritten, nondet);
      fail_line (fmt->name, sz, s, what);
      ok = 0;
    }
  }

  g = count_guard_damage (l, a, POISON_A);
  if (b)
    g += count_guard_damage (l, b, POISON_B);
  if (g) {
    st->guard += g;
    snprintf (what, sizeof (what), "%s: %" PRIu64 " bytes written outside "
        "the planes (row padding or between planes)", lay, g);
    fail_line (fmt->name, sz, s, what);
    ok = 0;
  }
  return ok;
}

/* Runs the engine on l with the destination poisoned with `poison' and
 * downloads the whole destination buffer into out. */
static int
run_gpu (const Layout * l, const CuconvPlane * planes, const CuconvFilter * f,
    uint8_t poison, uint8_t * out, cudaStream_t stream)
{
  int err;

  err = cudaMemsetAsync (l->d_dst, poison, l->dst_size, stream);
  if (err != cudaSuccess)
    return err;
  err = cuconv_filter_device_path (planes, l->n_planes, f, run_path, stream,
      NULL);
  if (err != 0)
    return err;
  err = cudaMemcpyAsync (out, l->d_dst, l->dst_size, cudaMemcpyDeviceToHost,
      stream);
  if (err != cudaSuccess)
    return err;
  err = cudaStreamSynchronize (stream);
  if (err != cudaSuccess)
    return err;
  return cudaGetLastError ();
}

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------------- */

/* The setting of a line of the general set with border b. */
static void
setting_from_general (Setting * out, const General * gs, int b)
{
  memset (out, 0, sizeof (*out));
  out->label = gs->label;
  out->planes = gs->planes;
  out->s.kernel = gs->kernel;
  out->s.border = b;
  out->s.radius = gs->radius;
  out->s.sigma = gs->sigma;
  out->s.sigma_y = gs->sigma_y;
  out->s.amount = gs->amount;
  out->s.normalize = gs->normalize;
  out->s.sigma_range = gs->sigma_range;
  out->s.block_size = gs->block;
  out->s.patch_radius = gs->patch;
  out->s.threshold_low = gs->low;
  out->s.threshold_high = gs->high;
  out->s.custom_x_len = gs->x_len;
  out->s.custom_y_len = gs->y_len;
  memcpy (out->s.custom_x, gs->x, sizeof (gs->x));
  memcpy (out->s.custom_y, gs->y, sizeof (gs->y));
  if (gs->side)
    matrix_fill (&out->s, gs->side, gs->positive);
}

static int
build_settings (Setting * out)
{
  const unsigned *radii = opt.race ? race_radii :
      opt.quick ? quick_radii : full_radii;
  int n_radii = opt.race ? (int) (sizeof (race_radii) / sizeof (unsigned)) :
      opt.quick ? (int) (sizeof (quick_radii) / sizeof (unsigned))
      : (int) (sizeof (full_radii) / sizeof (unsigned));
  int n = 0, k, b, r, e, g;

  /* the sweep */
  for (k = CUCONV_KERNEL_GAUSSIAN; k <= CUCONV_KERNEL_BOX; k++) {
    for (b = 0; b < CUCONV_BORDER_N; b++) {
      if (opt.race && b != CUCONV_BORDER_MIRROR)
        continue;
      for (r = 0; r < n_radii; r++) {
        memset (&out[n], 0, sizeof (out[n]));
        out[n].s.kernel = k;
        out[n].s.border = b;
        out[n].s.radius = radii[r];
        out[n].sweep = 1;
        n++;
      }
    }
  }
  for (e = 0; e < (int) (sizeof (extra_settings) / sizeof (extra_settings[0]));
      e++) {
    for (b = 0; b < CUCONV_BORDER_N; b++) {
      /* the quick run takes the first two once, with mirror */
      if (opt.race || (opt.quick && (b != CUCONV_BORDER_MIRROR || e >= 2)))
        continue;
      memset (&out[n], 0, sizeof (out[n]));
      out[n].s.kernel = extra_settings[e].kernel;
      out[n].s.border = b;
      out[n].s.radius = extra_settings[e].radius;
      out[n].s.sigma = extra_settings[e].sigma;
      out[n].sweep = 1;
      n++;
    }
  }

  /* the general set: every border (racecheck: mirror) */
  for (g = 0; g < N_GENERAL; g++) {
    const General *gs = &general[g];

    for (b = 0; b < CUCONV_BORDER_N; b++) {
      if (opt.race && (!gs->race || b != CUCONV_BORDER_MIRROR))
        continue;
      setting_from_general (&out[n], gs, b);
      /* the largest sizes with one border a kernel; no 3840x2160 */
      out[n].max_w = b == g % CUCONV_BORDER_N ? 1921 : 385;
      /* --quick keeps the bilateral's byte kernel (radius up to 8) at its
       * width, where tiles lie wholly inside the plane */
      if (gs->max_w)
        out[n].max_w = opt.quick && (gs->kernel != CUCONV_KERNEL_BILATERAL
            || gs->radius > 8) ? 17 : gs->max_w;
      n++;
    }
  }

  if (opt.kernel_only) {
    int kept = 0;

    for (k = 0; k < n; k++)
      if (strcmp (kernel_names[out[k].s.kernel], opt.kernel_only) == 0)
        out[kept++] = out[k];
    n = kept;
  }
  return n;
}

/* Returns -1 on a CUDA error (which may be sticky: the run stops), 0
 * otherwise; failures are counted in stats. */
static int
run_size (const Size * sz, const Setting * settings, int n_settings,
    Stats * stats, cudaStream_t stream)
{
  KeyPlane kp[MAX_KEYS];
  int fkey[N_FORMATS][3];
  Layout lay[N_FORMATS][2];
  RefPool pool;
  RefJob **plane_job;           /* [setting][format * 3 + plane] */
  pthread_t *threads;
  uint8_t *h_a = NULL, *h_b = NULL;
  size_t max_dst = 0;
  double t0 = now_s (), t_wait = 0.0;
  int ret = 0, i, j, s, n_threads, n_keys = 0;
  Stats before[N_FORMATS];

  /* max_diff is reported per size, then folded into the totals */
  memcpy (before, stats, sizeof (before));
  for (i = 0; i < N_FORMATS; i++)
    stats[i].max_diff = 0;
  memset (lay, 0, sizeof (lay));
  memset (&pool, 0, sizeof (pool));
  plane_job = calloc ((size_t) n_settings * N_FORMATS * 3, sizeof (RefJob *));
  pool.jobs = calloc ((size_t) n_settings * N_FORMATS * 3, sizeof (RefJob));
  pool.first_job = calloc (n_settings + 1, sizeof (int));

  for (i = 0; i < N_FORMATS; i++) {
    if (!format_in_run (i))
      continue;
    for (j = 0; j < formats[i].n_planes; j++)
      fkey[i][j] = key_of (kp, &n_keys, i, j);
  }
  for (i = 0; i < n_keys; i++) {
    KeyPlane *k = &kp[i];

    k->w = (sz->w + k->sub_x - 1) / k->sub_x;
    k->h = (sz->h + k->sub_y - 1) / k->sub_y;
    k->row = (size_t) k->w * k->n_comp * sample_bytes (k->depth);
    k->in = malloc (k->row * k->h);
    fill_bytes (k->in, k->row, k->h, sample_bytes (k->depth),
        opt.seed ^ ((uint64_t) i << 56) ^ ((uint64_t) sz->w << 28) ^
        (uint64_t) sz->h);
  }

  /* the jobs: per setting, the distinct (key, ops) of the planes it runs */
  for (s = 0; s < n_settings; s++) {
    pool.first_job[s] = pool.n_jobs;
    if (!setting_at_size (&settings[s], sz))
      continue;
    for (i = 0; i < N_FORMATS; i++) {
      if (!format_in_run (i) || !setting_on_format (&settings[s], i))
        continue;
      for (j = 0; j < formats[i].n_planes; j++) {
        RefJob job, **slot = &plane_job[((size_t) s * N_FORMATS + i) * 3 + j];
        int q;

        memset (&job, 0, sizeof (job));
        job.setting = s;
        job.key = fkey[i][j];
        plane_ops (i, j, &settings[s], job.op, &job.fill);
        for (q = pool.first_job[s]; q < pool.n_jobs; q++)
          if (pool.jobs[q].key == job.key && pool.jobs[q].fill == job.fill
              && memcmp (pool.jobs[q].op, job.op, CUCONV_MAX_COMP) == 0)
            break;
        if (q == pool.n_jobs)
          pool.jobs[pool.n_jobs++] = job;
        *slot = &pool.jobs[q];
      }
    }
  }
  pool.first_job[n_settings] = pool.n_jobs;

  for (i = 0; i < N_FORMATS; i++) {
    if (!format_in_run (i))
      continue;
    for (j = 0; j < 2; j++) {
      layout_init (&lay[i][j], fkey[i], formats[i].n_planes, kp, j);
      if (layout_upload (&lay[i][j], kp, opt.seed + 1000 * i + j) < 0) {
        printf ("  ERROR: could not allocate or upload a %dx%d %s frame: %s\n",
            sz->w, sz->h, formats[i].name,
            cudaGetErrorString (cudaGetLastError ()));
        ret = -1;
        goto out_layouts;
      }
      if (lay[i][j].dst_size > max_dst)
        max_dst = lay[i][j].dst_size;
    }
  }
  if (cudaMallocHost ((void **) &h_a, max_dst) != cudaSuccess ||
      cudaMallocHost ((void **) &h_b, max_dst) != cudaSuccess) {
    printf ("  ERROR: could not allocate %zu bytes of pinned memory\n",
        max_dst);
    ret = -1;
    goto out_layouts;
  }

  pthread_mutex_init (&pool.lock, NULL);
  pthread_cond_init (&pool.cond, NULL);
  pool.kp = kp;
  pool.settings = settings;
  pool.window = opt.n_threads < 4 ? 4 : opt.n_threads;
  pool.done = calloc (n_settings, sizeof (int));
  /* small frames: threads cost more than they save */
  n_threads = (size_t) sz->w * sz->h < 4096 ? 1 : opt.n_threads;
  threads = calloc (n_threads, sizeof (pthread_t));
  for (i = 0; i < n_threads; i++)
    pthread_create (&threads[i], NULL, ref_worker, &pool);

  for (s = 0; s < n_settings && ret == 0; s++) {
    const int n_jobs = pool.first_job[s + 1] - pool.first_job[s];
    CuconvFilter f;
    double tw = now_s ();

    pthread_mutex_lock (&pool.lock);
    while (pool.done[s] < n_jobs)
      pthread_cond_wait (&pool.cond, &pool.lock);
    pthread_mutex_unlock (&pool.lock);
    t_wait += now_s () - tw;
    if (pool.alloc_failed) {
      printf ("  ERROR: out of host memory for the reference\n");
      ret = -1;
      break;
    }

    cuconv_filter_init (&f, &settings[s].s);
    for (i = 0; i < N_FORMATS && ret == 0 && n_jobs > 0; i++) {
      RefJob **jobs = &plane_job[((size_t) s * N_FORMATS + i) * 3];

      if (!format_in_run (i) || !setting_on_format (&settings[s], i))
        continue;
      for (j = 0; j < 2; j++) {
        Layout *l = &lay[i][j];
        CuconvPlane planes[3];
        int err, p;

        for (p = 0; p < l->n_planes; p++) {
          plane_init (&planes[p], &kp[l->key[p]], jobs[p]->op, jobs[p]->fill);
          planes[p].src = l->d_src + l->src_off[p];
          planes[p].dst = l->d_dst + l->dst_off[p];
          planes[p].src_stride = l->src_stride[p];
          planes[p].dst_stride = l->dst_stride[p];
        }
        err = run_gpu (l, planes, &f, POISON_A, h_a, stream);
        /* under compute-sanitizer one run per layout is enough */
        if (err == 0 && !opt.quick)
          err = run_gpu (l, planes, &f, POISON_B, h_b, stream);
        if (err != 0) {
          char what[160];

          snprintf (what, sizeof (what), "%s: CUDA error %d (%s)",
              l->padded ? "padded" : "tight", err,
              cudaGetErrorString ((enum cudaError) err));
          fail_line (formats[i].name, sz, &settings[s], what);
          stats[i].cases++;
          stats[i].failed_cases++;
          ret = -1;
          break;
        }
        stats[i].cases++;
        if (!check_frame (l, &formats[i], kp, h_a, opt.quick ? NULL : h_b,
                jobs, &stats[i], sz, &settings[s]))
          stats[i].failed_cases++;
        else if (opt.verbose) {
          char label[128];

          settings_label (&settings[s], label, sizeof (label));
          printf ("  ok %s %dx%d %s %s\n", formats[i].name, sz->w, sz->h,
              label, l->padded ? "padded" : "tight");
        }
      }
    }

    pthread_mutex_lock (&pool.lock);
    for (j = pool.first_job[s]; j < pool.first_job[s + 1]; j++) {
      free (pool.jobs[j].out);
      pool.jobs[j].out = NULL;
    }
    pool.consumed = s + 1;
    pthread_cond_broadcast (&pool.cond);
    pthread_mutex_unlock (&pool.lock);
  }

  /* On an early stop let the workers run out of jobs quickly. */
  pthread_mutex_lock (&pool.lock);
  pool.consumed = n_settings;
  pool.next_job = pool.n_jobs;
  pthread_cond_broadcast (&pool.cond);
  pthread_mutex_unlock (&pool.lock);
  for (i = 0; i < n_threads; i++)
    pthread_join (threads[i], NULL);
  for (i = 0; i < pool.n_jobs; i++)
    free (pool.jobs[i].out);
  free (threads);
  free (pool.done);
  pthread_mutex_destroy (&pool.lock);
  pthread_cond_destroy (&pool.cond);

  /* The source must come back as it went in. */
  for (i = 0; i < N_FORMATS && ret == 0; i++) {
    if (!format_in_run (i))
      continue;
    for (j = 0; j < 2; j++) {
      Layout *l = &lay[i][j];
      uint8_t *back = malloc (l->src_size);

      if (!back || cudaMemcpy (back, l->d_src, l->src_size,
              cudaMemcpyDeviceToHost) != cudaSuccess) {
        free (back);
        ret = -1;
        break;
      }
      if (memcmp (back, l->h_src, l->src_size) != 0) {
        stats[i].src_modified++;
        stats[i].failed_cases++;
        fail_line (formats[i].name, sz, NULL,
            l->padded ? "padded: the source buffer was modified" :
            "tight: the source buffer was modified");
      }
      free (back);
    }
  }

  for (i = 0; i < N_FORMATS; i++) {
    const Stats *a = &before[i], *b = &stats[i];

    if (!format_in_run (i))
      continue;
    printf ("  %-9s %4" PRIu64 " cases  max |d| %d  +-1: %9" PRIu64
        " of %11" PRIu64 " samples  %s\n", formats[i].name,
        b->cases - a->cases, b->max_diff, b->off_by_one - a->off_by_one,
        b->samples - a->samples,
        b->failed_cases == a->failed_cases ? "ok" : "FAIL");
  }
  for (i = 0; i < N_FORMATS; i++)
    if (before[i].max_diff > stats[i].max_diff)
      stats[i].max_diff = before[i].max_diff;
  printf ("  %dx%d done in %.1f s (%.1f s waiting for the CPU reference, "
      "%d threads, %d reference planes)\n", sz->w, sz->h, now_s () - t0,
      t_wait, n_threads, pool.n_jobs);

out_layouts:
  cudaFreeHost (h_a);
  cudaFreeHost (h_b);
  for (i = 0; i < N_FORMATS; i++)
    for (j = 0; j < 2; j++)
      layout_clear (&lay[i][j]);
  for (i = 0; i < n_keys; i++)
    free (kp[i].in);
  free (plane_job);
  free (pool.jobs);
  free (pool.first_job);
  return ret;
}

/* ---------------------------------------------------------------------- */
/* Regions: cuconv_device_frames_filter () against
 * cuconv_reference_frame_regions () (the whole-frame reference, then the
 * input put back where it stays): +-1 LSB inside the regions on filtered
 * components, exact everywhere else; nothing written outside the planes;
 * the source untouched.  Every kernel type, every border, INSIDE and
 * OUTSIDE, rectangle sets that touch every edge of the frame, overlap,
 * are 1x1 at odd places, cover the frame, are absent, cut the direct
 * kernel's tiles a sample past or short, or are 1500 small ones. */

/* The settings: a line of the general set by label, or the privacy blur
 * (gaussian sigma 12, radius from sigma: 36 luma, 18 chroma).  Between
 * them the direct kernel's every term count and combine, its widest
 * reach (r 64, the 31x31 matrix) and a term of radius 0.  big: also on
 * the big frame (the CPU reference of a big frame is slow). */
static const struct
{
  const char *label;
  int big;                      /* also on the big frame */
  int race;                     /* in --race: one a term count */
} region_labels[] = {
  {"gaussian r=2", 1, 1}, {"gaussian r=16 sigma_y=3", 1}, {"box r=5", 1},
  {"box r=40"}, {"sharpen r=2 amount=0.5"}, {"sobel r=2", 0, 1},
  {"laplacian r=1"}, {"custom 7x3 negative taps"},
  {"custom matrix 7x7", 1, 1}, {"gaussian r=64"}, {"sharpen r=5 amount=3"},
  {"sobel r=5", 1}, {"laplacian r=5"}, {"custom x only 9 taps"},
  {"custom matrix 31x31"}, {"bilateral r=4 sigma=2 sr=40", 1},
  {"bilateral r=2 sr=20", 0, 1}, {NULL, 1, 1},
};

#define N_REGION_SETTINGS \
  ((int) (sizeof (region_labels) / sizeof (region_labels[0])))

static const char *const region_formats[] = {
  "I420", "NV12", "Y42B", "I420_10LE", "P010_10LE", "GRAY16_LE", "RGBA",
  "AYUV",
};

#define N_REGION_FORMATS \
  ((int) (sizeof (region_formats) / sizeof (region_formats[0])))

/* in --quick: */
static const char *const region_quick_formats[] = {
  "I420", "NV12", "P010_10LE", "AYUV",
};

/* big: the many-rectangle set where they stay small next to the frame,
 * with a few settings only (the CPU reference of a big frame is slow) */
static const struct
{
  int w, h, big;
} region_sizes[] = { {1, 1, 0}, {3, 7, 0}, {333, 211, 0}, {1921, 1081, 1} };

enum
{
  SET_NONE, SET_EDGES, SET_OVERLAP, SET_DOTS, SET_WHOLE, SET_RANDOM,
  SET_TILES, SET_MANY, N_SETS
};

static const char *const set_names[] = {
  "no rectangle", "every edge", "overlapping", "1x1 at odd places",
  "whole frame", "random", "a tile and a sample", "1500 small",
};

#define MANY_RECTS 1500

/* The rectangles of set `set` on a w x h frame, clipped; returns how many
 * are left. */
static int
region_set (int set, int w, int h, uint64_t seed, CuconvRect * r)
{
  uint64_t s = seed;
  int n = 0, i;

  switch (set) {
    case SET_EDGES:
      /* the top-left corner, the right edge, the bottom edge, the left
       * edge: wrap must read the far side, mirror reflect */
      n += cuconv_rect_clip (0, 0, w / 3 + 1, h / 4 + 1, 0, w, h, &r[n]);
      n += cuconv_rect_clip (w - w / 4 - 1, h / 3, w / 4 + 1, h / 3 + 1, 0, w,
          h, &r[n]);
      n += cuconv_rect_clip (w / 3, h - 5, 7, 5, 0, w, h, &r[n]);
      n += cuconv_rect_clip (-3, h / 2, 6, 3, 0, w, h, &r[n]);
      n += cuconv_rect_clip (w - 2, h - 3, 40, 40, 0, w, h, &r[n]);
      break;
    case SET_OVERLAP:
      n += cuconv_rect_clip (w / 4, h / 4, w / 2 + 1, h / 2 + 1, 0, w, h,
          &r[n]);
      n += cuconv_rect_clip (w / 3, h / 3, w / 2 + 1, h / 2 + 1, 0, w, h,
          &r[n]);
      n += cuconv_rect_clip (w / 4, h / 4, w / 2 + 1, h / 2 + 1, 0, w, h,
          &r[n]);
      n += cuconv_rect_clip (w / 2 - 1, 0, 3, h, 0, w, h, &r[n]);
      break;
    case SET_DOTS:
      n += cuconv_rect_clip (w / 2 | 1, h / 2 | 1, 1, 1, 0, w, h, &r[n]);
      n += cuconv_rect_clip (w - 1, 0, 1, 1, 0, w, h, &r[n]);
      n += cuconv_rect_clip (0, h - 1, 1, 1, 0, w, h, &r[n]);
      n += cuconv_rect_clip (1, 1, 1, 1, 0, w, h, &r[n]);
      break;
    case SET_WHOLE:
      n += cuconv_rect_clip (0, 0, w, h, 0, w, h, &r[n]);
      break;
    case SET_RANDOM:
      for (i = 0; i < 6; i++)
        n += cuconv_rect_clip ((long long) (splitmix64 (&s) % (w + 20)) - 10,
            (long long) (splitmix64 (&s) % (h + 20)) - 10,
            1 + splitmix64 (&s) % (w / 3 + 1), 1 + splitmix64 (&s) % (h / 3 +
                1), splitmix64 (&s) % 4, w, h, &r[n]);
      break;
    case SET_TILES:
      /* sizes a sample past the direct kernel's tiles (32 x 64, 32 x 32)
       * and a sample short of them, at odd places and against the
       * right and bottom edges */
      n += cuconv_rect_clip (1, 3, 33, 65, 0, w, h, &r[n]);
      n += cuconv_rect_clip (w - 31, h / 5, 31, 63, 0, w, h, &r[n]);
      n += cuconv_rect_clip (w / 2, h - 33, 65, 33, 0, w, h, &r[n]);
      n += cuconv_rect_clip (w / 5 | 1, h / 2 | 1, 2, 129, 0, w, h, &r[n]);
      break;
    case SET_MANY:
      for (i = 0; i < MANY_RECTS; i++)
        n += cuconv_rect_clip ((long long) (splitmix64 (&s) % (w + 4)) - 2,
            (long long) (splitmix64 (&s) % (h + 4)) - 2,
            1 + splitmix64 (&s) % 9, 1 + splitmix64 (&s) % 9, 0, w, h, &r[n]);
      break;
    case SET_NONE:
    default:
      break;
  }
  return n;
}

/* Which samples of a plane subsampled by sx, sy lie in a region: those
 * whose luma footprint [x sx, (x + 1) sx) x [y sy, (y + 1) sy) meets a
 * rectangle (written from the footprint, not from cuconv_rect_on_plane). */
static void
region_mask (uint8_t * mask, int pw, int ph, int sx, int sy,
    const CuconvRect * r, int n)
{
  int i, x, y;

  memset (mask, 0, (size_t) pw * ph);
  for (i = 0; i < n; i++)
    for (y = r[i].y / sy - 1; y <= (r[i].y + r[i].h) / sy; y++)
      for (x = r[i].x / sx - 1; x <= (r[i].x + r[i].w) / sx; x++)
        if (x >= 0 && y >= 0 && x < pw && y < ph &&
            x * sx < r[i].x + r[i].w && (x + 1) * sx > r[i].x &&
            y * sy < r[i].y + r[i].h && (y + 1) * sy > r[i].y)
          mask[(size_t) y * pw + x] = 1;
}

/* Soft regions (docs/semantics.md, "Soft regions"), each rectangle its
 * own box: the hard rectangles (none), and shapes with feathers. */
static const struct
{
  const char *name;
  CuconvShape shape;
  double feather;
} soft_cases[] = {
  {"", CUCONV_SHAPE_BOX, 0.0},
  {" ellipse", CUCONV_SHAPE_ELLIPSE, 0.0},
  {" box feather 2.5", CUCONV_SHAPE_BOX, 2.5},
  {" ellipse feather 9", CUCONV_SHAPE_ELLIPSE, 9.0},
};

#define N_SOFT ((int) (sizeof (soft_cases) / sizeof (soft_cases[0])))

/* Region-relative filters (docs/semantics.md, "Strength that follows the
 * region"): each rectangle a gaussian of its own sigma, the border of the
 * case; sigmas from below 0.1 to the untruncated gaussian (not on the
 * many small rectangles, where the reference would filter the frame
 * hundreds of times). */
static const double relative_sigmas[] = { 0.05, 2.0, 3.3, 7.5, 25.0, 40.0 };
static const double relative_blocks[] = { 1, 3, 8, 8, 33, 5 };

static void
relative_gaussian (CuconvFilter * f, double sigma, const CuconvBox * box,
    void *data)
{
  CuconvSettings s;

  memset (&s, 0, sizeof (s));
  s.kernel = CUCONV_KERNEL_GAUSSIAN;
  s.border = *(const CuconvBorder *) data;
  s.sigma = s.sigma_y = sigma;
  cuconv_filter_init (f, &s);
}

/* A mosaic of blocks of `side` on the grid of the region's box. */
static void
relative_pixelate (CuconvFilter * f, double side, const CuconvBox * box,
    void *data)
{
  CuconvSettings s;

  memset (&s, 0, sizeof (s));
  s.kernel = CUCONV_KERNEL_PIXELATE;
  s.block_size = (unsigned) side;
  cuconv_filter_init (f, &s);
  for (int i = 0; i < CUCONV_MAX_SUBSAMPLE; i++) {
    f->block_x0[i] = box->x0;
    f->block_y0[i] = box->y0;
  }
}

/* The samples of a plane subsampled by sx, sy that soft regions r weigh
 * above 0: those the filter reaches. */
static void
soft_mask (uint8_t * mask, int pw, int ph, int sx, int sy,
    const CuconvRegions * r)
{
  int i, x, y;

  for (y = 0; y < ph; y++)
    for (x = 0; x < pw; x++) {
      float largest = 0.0f;

      for (i = 0; i < r->n_rects; i++) {
        const float w = cuconv_region_weight (cuconv_region_depth
            (&r->boxes[i], r->shape, x, y, sx, sy), r->feather);

        largest = w > largest ? w : largest;
      }
      mask[(size_t) y * pw + x] =
          cuconv_region_mode_weight (r->mode, largest) > 0.0f;
    }
}

static int
format_index (const char *name)
{
  int i;

  for (i = 0; i < N_FORMATS; i++)
    if (strcmp (formats[i].name, name) == 0)
      return i;
  return -1;
}

/* The setting of region_labels[k] with border b. */
static void
region_setting (Setting * out, int k, int b)
{
  int g;

  memset (out, 0, sizeof (*out));
  if (!region_labels[k].label) {
    out->label = "gaussian sigma=12 (privacy)";
    out->planes = CUCONV_PLANES_ALL;
    out->s.kernel = CUCONV_KERNEL_GAUSSIAN;
    out->s.border = b;
    out->s.sigma = 12.0;
    return;
  }
  for (g = 0; g < N_GENERAL; g++)
    if (strcmp (general[g].label, region_labels[k].label) == 0)
      setting_from_general (out, &general[g], b);
}

typedef struct
{
  uint64_t cases, failed, inside, outside, off_by_one;
} RegionStats;

/* Compares the downloaded destination a with the expected frame exp
 * (the reference with the input put back), within +-1 on filtered
 * components of samples inside mask[p] and exactly elsewhere. */
static int
check_regions (const Layout * l, const Format * fmt, const KeyPlane * kp,
    const uint8_t * a, uint8_t * const *exp, uint8_t * const *mask,
    const uint8_t (*op)[CUCONV_MAX_COMP], RegionStats * rs, const char *what)
{
  const int bytes = sample_bytes (fmt->depth), shift = fmt->shift;
  int ok = 1, p, x, y;
  uint64_t g;

  for (p = 0; p < l->n_planes; p++) {
    const KeyPlane *k = &kp[l->key[p]];
    const int n = k->n_comp;
    uint64_t bad = 0;
    int fx = -1, fy = -1;
    unsigned fg = 0, fr = 0;

    for (y = 0; y < k->h; y++) {
      const uint8_t *ra = a + l->dst_off[p] + (size_t) y * l->dst_stride[p];
      const uint8_t *re = exp[p] + (size_t) y * k->row;

      for (x = 0; x < k->w * n; x++) {
        const unsigned ga = word_at (ra, x, bytes), e = word_at (re, x, bytes);
        const int in = mask[p][(size_t) y * k->w + x / n];
        int d = ga == e ? 0 : 1 << 30;

        rs->inside += in;
        rs->outside += !in;
        if (d && in && op[p][x % n] == CUCONV_COMP_FILTER &&
            ((ga ^ e) & ((1u << shift) - 1)) == 0) {
          const int va = (int) (ga >> shift), ve = (int) (e >> shift);
          d = va > ve ? va - ve : ve - va;
        }
        rs->off_by_one += d == 1;
        if (d > 1) {
          if (fy < 0) {
            fx = x;
            fy = y;
            fg = ga;
            fr = e;
          }
          bad++;
        }
      }
    }
    if (bad) {
      char line[512];

      snprintf (line, sizeof (line), "%s: plane %d: %" PRIu64 " samples "
          "wrong, first at x=%d c=%d y=%d (%s): gpu 0x%x, expected 0x%x", what,
          p, bad, fx / n, fx % n, fy, mask[p][(size_t) fy * k->w + fx / n] ?
          "inside" : "outside", fg, fr);
      fail_line (fmt->name, &(Size) {
          kp[l->key[0]].w, kp[l->key[0]].h}, NULL, line);
      ok = 0;
    }
  }
  g = count_guard_damage (l, a, POISON_A);
  if (g) {
    char line[512];

    snprintf (line, sizeof (line), "%s: %" PRIu64 " bytes written outside "
        "the planes", what, g);
    fail_line (fmt->name, &(Size) {
        kp[l->key[0]].w, kp[l->key[0]].h}, NULL, line);
    ok = 0;
  }
  return ok;
}

/* One format at one size: every setting, border, set and mode.  Returns
 * -1 on a CUDA error. */
static int
regions_format (CuconvDeviceFrames * rf, int fi, int w, int h, int big,
    int padded, RegionStats * rs, cudaStream_t stream)
{
  const Format *fmt = &formats[fi];
  KeyPlane kp[3];
  Layout l;
  CuconvRect *rects = malloc (sizeof (CuconvRect) * MANY_RECTS);
  CuconvBox *boxes = malloc (sizeof (CuconvBox) * MANY_RECTS);
  double *strength = malloc (sizeof (double) * MANY_RECTS);
  uint8_t *ref[3] = { NULL }, *exp[3] = { NULL }, *mask[3] = { NULL };
  uint8_t *out = NULL;
  int keys[3], n_keys = 0, ret = 0, j, k, b, set;

  for (j = 0; j < fmt->n_planes; j++)
    keys[j] = key_of (kp, &n_keys, fi, j);
  for (j = 0; j < n_keys; j++) {
    kp[j].w = (w + kp[j].sub_x - 1) / kp[j].sub_x;
    kp[j].h = (h + kp[j].sub_y - 1) / kp[j].sub_y;
    kp[j].row = (size_t) kp[j].w * kp[j].n_comp * sample_bytes (kp[j].depth);
    kp[j].in = malloc (kp[j].row * kp[j].h);
    fill_bytes (kp[j].in, kp[j].row, kp[j].h, sample_bytes (kp[j].depth),
        opt.seed ^ ((uint64_t) j << 56) ^ ((uint64_t) w << 28) ^ h ^ 0x4e6);
  }
  for (j = 0; j < fmt->n_planes; j++) {
    const KeyPlane *kk = &kp[keys[j]];

    ref[j] = malloc (kk->row * kk->h);
    exp[j] = malloc (kk->row * kk->h);
    mask[j] = malloc ((size_t) kk->w * kk->h);
  }
  layout_init (&l, keys, fmt->n_planes, kp, padded);
  if (layout_upload (&l, kp, opt.seed + fi) < 0 ||
      cudaMallocHost ((void **) &out, l.dst_size) != cudaSuccess) {
    printf ("  ERROR: could not allocate a %dx%d %s frame\n", w, h,
        fmt->name);
    ret = -1;
    goto done;
  }

  for (k = 0; k < N_REGION_SETTINGS && ret == 0; k++) {
    for (b = 0; b < CUCONV_BORDER_N && ret == 0; b++) {
      CuconvPlane cpu[3], gpu[3];
      uint8_t op[3][CUCONV_MAX_COMP];
      CuconvFilter f;
      Setting st;

      /* big frames: the settings marked big, one border each; the quick
       * run: every border for the blurs, one for the others */
      if (big && !region_labels[k].big)
        continue;
      if (big && b != k % CUCONV_BORDER_N)
        continue;
      if (opt.race && (!region_labels[k].race || b != k % CUCONV_BORDER_N))
        continue;
      if (opt.quick && k > 1 && k != N_REGION_SETTINGS - 1 &&
          b != k % CUCONV_BORDER_N)
        continue;
      region_setting (&st, k, b);
      cuconv_filter_init (&f, &st.s);
      for (j = 0; j < fmt->n_planes; j++) {
        const KeyPlane *kk = &kp[keys[j]];
        unsigned fill;

        plane_ops (fi, j, &st, op[j], &fill);
        plane_init (&cpu[j], kk, op[j], fill);
        cpu[j].src = kk->in;
        cpu[j].dst = ref[j];
        cpu[j].src_stride = cpu[j].dst_stride = (ptrdiff_t) kk->row;
        gpu[j] = cpu[j];
        gpu[j].src = l.d_src + l.src_off[j];
        gpu[j].dst = l.d_dst + l.dst_off[j];
        gpu[j].src_stride = l.src_stride[j];
        gpu[j].dst_stride = l.dst_stride[j];
      }
      if (cuconv_reference_frame (cpu, fmt->n_planes, &f) < 0) {
        printf ("  ERROR: out of host memory for the reference\n");
        ret = -1;
        break;
      }

      for (set = 0; set < N_SETS && ret == 0; set++) {
        const int n = region_set (set, w, h, opt.seed + set + 7 * b, rects);

        if (big && set != SET_MANY && set != SET_EDGES && set != SET_TILES)
          continue;
        if (opt.race && set != SET_EDGES && set != SET_TILES)
          continue;
        for (j = 0; j < n; j++)
          boxes[j] = (CuconvBox) {
          rects[j].x, rects[j].y, rects[j].x + rects[j].w,
                rects[j].y + rects[j].h};
        /* then region-relative filters (INSIDE), gaussians and mosaics,
         * hard and soft, with the first setting and the privacy one */
        for (int c = 0; c < 2 * N_SOFT + 4; c++) {
          const int relative = c >= 2 * N_SOFT;
          const int mosaic = c >= 2 * N_SOFT + 2;
          const int mode = relative ? CUCONV_REGION_INSIDE :
              CUCONV_REGION_INSIDE + c % 2;
          const int soft = relative ? (c % 2) * (N_SOFT - 1) : c / 2;
          CuconvBorder border = (CuconvBorder) b;
          const CuconvRegions reg = { (CuconvRegionMode) mode, rects, n,
            soft ? boxes : NULL, soft_cases[soft].shape,
            soft_cases[soft].feather, relative ? strength : NULL,
            mosaic ? relative_pixelate : relative_gaussian, &border
          };
          CuconvPlane e[3];
          CuconvStatus cst;
          char what[256];
          int err;

          /* soft regions: not on the many small rectangles, and on big
           * frames only along the edges */
          if (soft && (set == SET_MANY || (big && set != SET_EDGES)))
            continue;
          if (relative && ((k != 0 && k != N_REGION_SETTINGS - 1) ||
                  (big && set != SET_EDGES)))
            continue;
          for (j = 0; relative && j < n; j++)
            strength[j] = (mosaic ? relative_blocks :
                relative_sigmas)[j % (n > 16 ? 4 : 6)];
          /* the definition: the reference with the input put back */
          for (j = 0; j < fmt->n_planes; j++) {
            const KeyPlane *kk = &kp[keys[j]];

            memcpy (exp[j], ref[j], kk->row * kk->h);
            e[j] = cpu[j];
            e[j].dst = exp[j];
            if (soft)
              soft_mask (mask[j], kk->w, kk->h, kk->sub_x, kk->sub_y, &reg);
            else
              region_mask (mask[j], kk->w, kk->h, kk->sub_x, kk->sub_y,
                  rects, n);
            if (!soft && mode == CUCONV_REGION_OUTSIDE)
              for (size_t q = 0; q < (size_t) kk->w * kk->h; q++)
                mask[j][q] = !mask[j][q];
          }
          if (relative) {
            if (cuconv_reference_frame_regions (e, fmt->n_planes, NULL,
                    &reg) < 0) {
              printf ("  ERROR: out of host memory for the reference\n");
              ret = -1;
              break;
            }
          } else {
            cuconv_regions_restore (e, fmt->n_planes, &reg);
          }

          snprintf (what, sizeof (what), "%s%s/%s %s%s, %s (%d), %s",
              mosaic ? "relative mosaics, not " : relative ?
              "relative sigmas, not " : "", st.label,
              border_names[b], mode == CUCONV_REGION_INSIDE ?
              "inside" : "outside", soft_cases[soft].name, set_names[set], n,
              padded ? "padded" : "tight");
          rs->cases++;
          err = cudaMemsetAsync (l.d_dst, POISON_A, l.dst_size, stream);
          if (err == 0)
            err = cuconv_device_frames_filter (rf, gpu, fmt->n_planes, &f,
                &reg, stream, &cst);
          if (err == 0)
            err = cudaMemcpyAsync (out, l.d_dst, l.dst_size,
                cudaMemcpyDeviceToHost, stream);
          if (err == 0)
            err = cudaStreamSynchronize (stream);
          if (err != 0) {
            char line[512];

            snprintf (line, sizeof (line), "%s: CUDA error %d (%s)", what,
                err, cudaGetErrorString ((enum cudaError) err));
            fail_line (fmt->name, &(Size) {
                w, h}, NULL, line);
            rs->failed++;
            ret = -1;
            break;
          }
          if (!check_regions (&l, fmt, kp, out, exp, mask,
                  (const uint8_t (*)[CUCONV_MAX_COMP]) op, rs, what))
            rs->failed++;
          else if (opt.verbose)
            printf ("  ok %s %dx%d %s\n", fmt->name, w, h, what);
        }
      }
    }
  }

  /* the source must come back as it went in */
  if (ret == 0) {
    uint8_t *back = malloc (l.src_size);

    if (!back || cudaMemcpy (back, l.d_src, l.src_size,
            cudaMemcpyDeviceToHost) != cudaSuccess)
      ret = -1;
    else if (memcmp (back, l.h_src, l.src_size) != 0) {
      fail_line (fmt->name, &(Size) {
          w, h}, NULL, "regions: the source buffer was modified");
      rs->failed++;
    }
    free (back);
  }

done:
  cudaFreeHost (out);
  layout_clear (&l);
  for (j = 0; j < 3; j++) {
    free (ref[j]);
    free (exp[j]);
    free (mask[j]);
  }
  for (j = 0; j < n_keys; j++)
    free (kp[j].in);
  free (rects);
  free (boxes);
  free (strength);
  return ret;
}

/* The regions matrix; returns the number of failed cases, or -1 on a
 * CUDA error. */
static int
run_regions (cudaStream_t stream)
{
  const char *const *names = opt.quick ? region_quick_formats : region_formats;
  const int n_names = opt.quick ? (int) (sizeof (region_quick_formats) /
      sizeof (region_quick_formats[0])) : N_REGION_FORMATS;
  RegionStats rs;
  CuconvStatus st;
  CuconvDeviceFrames *rf;
  double t0 = now_s ();
  int si, i, ret = 0;

  memset (&rs, 0, sizeof (rs));
  rf = cuconv_device_frames_new (&st);
  if (!rf) {
    printf ("  ERROR: %s\n", st.message);
    return -1;
  }
  printf ("regions: cuconv_device_frames_filter against "
      "cuconv_reference_frame_regions: +-1 LSB inside on filtered "
      "components, exact elsewhere\n");
  for (si = 0; si < (int) (sizeof (region_sizes) / sizeof (region_sizes[0]))
      && ret == 0; si++) {
    const int w = region_sizes[si].w, h = region_sizes[si].h;

    if ((opt.quick && region_sizes[si].big) || (opt.race && w < 100))
      continue;
    for (i = 0; i < n_names && ret == 0; i++) {
      const int fi = format_index (names[i]);
      const uint64_t before = rs.failed;

      if (fi < 0)
        continue;
      ret = regions_format (rf, fi, w, h, region_sizes[si].big, (si + i) & 1,
          &rs, stream);
      printf ("  %-9s %4dx%-4d %s\n", names[i], w, h, ret < 0 ? "CUDA ERROR" :
          rs.failed == before ? "ok" : "FAIL");
    }
  }
  cuconv_device_frames_free (rf);
  printf ("regions: %" PRIu64 " cases, %" PRIu64 " failed; %" PRIu64
      " samples inside, %" PRIu64 " outside, %" PRIu64 " off by 1; %.1f s\n",
      rs.cases, rs.failed, rs.inside, rs.outside, rs.off_by_one,
      now_s () - t0);
  return ret < 0 ? -1 : (int) (rs.failed > 0);
}

/* ---------------------------------------------------------------------- */
/* Wide filters (docs/design.md, "Wide filters through global memory"
 * and "Wide filters in register windows"): radii 65 to 1024 through the
 * dispatch (the global path, the box's running sums), and the global path
 * and the register-window passes forced at the fused paths' radii (1 to
 * 64), against the reference, with run_size's checks.  Every
 * border; planes far smaller than the kernel (1x1, 2x3, 3x2 at radius
 * 1024); mid planes (97x61), where the CPU reference's O(radius) cost a
 * sample stays moderate. */

static const char *const wide_formats[] = {
  "I420", "NV12", "Y42B", "RGBA", "AYUV", "GRAY16_LE", "P010_10LE",
  "I420_10LE", "I420_12LE", "Y444_16LE",
};

/* in --race: 1, 2 and 4 components, 8 and 16 bits (racecheck takes about
 * 30 s a format at 17x9) */
static const char *const wide_race_formats[] = { "NV12", "P010_10LE", "RGBA" };

static const Size wide_sizes[] = {
  {1, 1}, {2, 3}, {3, 2}, {17, 9}, {97, 61}, {385, 289}, {1921, 1081},
};

static const Size wide_quick_sizes[] = { {1, 1}, {3, 2}, {97, 61} };
static const Size wide_race_sizes[] = { {17, 9}, {97, 61} };

static const CuconvKernel wide_kernels[] = {
  CUCONV_KERNEL_GAUSSIAN, CUCONV_KERNEL_BOX, CUCONV_KERNEL_SHARPEN,
  CUCONV_KERNEL_SOBEL, CUCONV_KERNEL_LAPLACIAN,
};

#define N_WIDE_KERNELS ((int) (sizeof (wide_kernels) / sizeof (wide_kernels[0])))
#define MAX_WIDE_SETTINGS 256

/* A setting of kernel k, radius r and border b for the wide section: a
 * planes choice that alternates between filtering every component and
 * the kernel's own choice (copied and filled chroma, RGBA's alpha). */
static void
wide_setting (Setting * out, CuconvKernel k, unsigned r, int b, int max_w)
{
  memset (out, 0, sizeof (*out));
  out->s.kernel = k;
  out->s.border = b;
  out->s.radius = r;
  out->s.amount = 1.5;
  out->planes = (k + r + b) % 2 ? CUCONV_PLANES_ALL : CUCONV_PLANES_AUTO;
  out->max_w = max_w;
}

/* Radii 65..1024 through the dispatch: 1024 and 300 up to 97x61, 65 and
 * 100 up to 385x289 (--quick: 65 and 1024 up to 97x61). */
static int
wide_auto_settings (Setting * out)
{
  static const unsigned radii[] = { 65, 100, 300, 1024 };
  int n = 0, k, r, b;

  for (k = 0; k < N_WIDE_KERNELS; k++)
    for (r = 0; r < 4; r++)
      for (b = 0; b < CUCONV_BORDER_N; b++) {
        if (opt.quick && (r == 1 || r == 2 || (opt.race
                    && b != CUCONV_BORDER_MIRROR)))
          continue;
        wide_setting (&out[n++], wide_kernels[k], radii[r], b,
            radii[r] > 100 || opt.quick ? 97 : 385);
      }
  /* radius from sigma (box: ceil (3 sigma) = 300), anisotropic taps */
  for (b = 0; b < CUCONV_BORDER_N && !opt.quick; b++) {
    wide_setting (&out[n], CUCONV_KERNEL_BOX, 0, b, 97);
    out[n++].s.sigma = 100.0;
    wide_setting (&out[n], CUCONV_KERNEL_GAUSSIAN, 90, b, 385);
    out[n++].s.sigma_y = 7.0;
  }
  return n;
}

/* The fused paths' radii (and custom taps) forced through the global
 * path: up to 385x289, radius 7 also at 1921x1081 with one border. */
static int
wide_forced_settings (Setting * out)
{
  static const unsigned radii[] = { 1, 2, 7, 28, 48, 64 };
  static const double cx[] = { -1, 0, 2, 5, 2, 0, -1 }, cy[] = { 1, 2, 1 };
  int n = 0, k, r, b;

  for (k = 0; k < N_WIDE_KERNELS; k++)
    for (r = 0; r < 6; r++)
      for (b = 0; b < CUCONV_BORDER_N; b++) {
        if (opt.quick && (r % 2 == 1 || (opt.race
                    && b != CUCONV_BORDER_MIRROR)))
          continue;
        wide_setting (&out[n++], wide_kernels[k], radii[r], b,
            radii[r] == 7 && b == k % CUCONV_BORDER_N && !opt.quick ? 1921 :
            385);
      }
  for (b = 0; b < CUCONV_BORDER_N; b++) {
    if (opt.race && b != CUCONV_BORDER_MIRROR)
      continue;
    wide_setting (&out[n], CUCONV_KERNEL_CUSTOM, 0, b, 385);
    out[n].label = "custom 7x3 negative taps";
    out[n].s.normalize = 1;
    out[n].s.custom_x_len = 7;
    out[n].s.custom_y_len = 3;
    memcpy (out[n].s.custom_x, cx, sizeof (cx));
    memcpy (out[n++].s.custom_y, cy, sizeof (cy));
  }
  return n;
}

/* The three sets over the sizes; returns the failed cases, or -1 on a
 * CUDA error. */
static int
run_wide (cudaStream_t stream)
{
  static Setting settings[3][MAX_WIDE_SETTINGS];
  static const char *const set_label[3] = {
    "radii 65..1024 through the dispatch",
    "the global path forced at radii 1..64",
    "the register-window passes forced at radii 1..64",
  };
  const Size *sizes = opt.race ? wide_race_sizes : opt.quick ?
      wide_quick_sizes : wide_sizes;
  const int n_sizes = opt.race ? 2 : opt.quick ? 3 :
      (int) (sizeof (wide_sizes) / sizeof (wide_sizes[0]));
  const int n_set[3] = { wide_auto_settings (settings[0]),
    wide_forced_settings (settings[1]), wide_forced_settings (settings[2])
  };
  Stats stats[N_FORMATS];
  uint64_t cases = 0, failed = 0;
  double t0 = now_s ();
  int set, i, ret = 0;

  memset (stats, 0, sizeof (stats));
  run_formats = opt.race ? wide_race_formats : wide_formats;
  n_run_formats = opt.race ? (int) (sizeof (wide_race_formats) /
      sizeof (wide_race_formats[0])) : (int) (sizeof (wide_formats) /
      sizeof (wide_formats[0]));
  for (set = opt.window_only ? 2 : 0; set < 3 && ret == 0; set++) {
    run_path = set == 0 ? base_path : set == 1 ? CUCONV_PATH_GLOBAL :
        CUCONV_PATH_WINDOW;
    printf ("wide: %s, %d settings, against the reference\n",
        set_label[set], n_set[set]);
    for (i = 0; i < n_sizes && ret == 0; i++) {
      printf ("  size %dx%d\n", sizes[i].w, sizes[i].h);
      ret = run_size (&sizes[i], settings[set], n_set[set], stats, stream);
    }
  }
  run_path = base_path;
  run_formats = NULL;
  for (i = 0; i < N_FORMATS; i++) {
    cases += stats[i].cases;
    failed += stats[i].failed_cases;
  }
  printf ("wide: %" PRIu64 " cases, %" PRIu64 " failed%s; %.1f s\n", cases,
      failed, ret < 0 ? ", stopped on a CUDA error" : "", now_s () - t0);
  return ret < 0 ? -1 : failed > 0;
}

static void
usage (const char *argv0)
{
  printf ("usage: %s [--quick | --race] [--matrix | --regions | --wide | "
      "--window | "
      "--untruncated] "
      "[--stream | --mma | --tiled | --nlmeans-sums] [--kernel=NICK] "
      "[--seed=N] [--threads=N] "
      "[--verbose]\n"
      "  --quick      small sizes, fewer settings and formats, one poison\n"
      "               (for compute-sanitizer memcheck); the regions too\n"
      "  --race       a handful of cases for compute-sanitizer racecheck\n"
      "  --matrix     the general matrix only (and the contexts check)\n"
      "  --regions    the regions matrix only (with --quick or --race: its "
      "small runs)\n"
      "  --wide       the wide filters only (with --quick, --race: their "
      "small runs)\n"
      "  --window     of the wide filters, the register-window passes' "
      "set only\n"
      "  --untruncated  the untruncated gaussian only (with --quick or "
      "--race: theirs)\n"
      "  --stream     the streaming kernel wherever it takes a plane\n"
      "  --mma        the tensor-core blur wherever it takes a plane\n"
      "  --tiled      never the streaming kernel or the tensor-core blur\n"
      "  --nlmeans-sums  non-local means by sums (others as --tiled)\n"
      "  --kernel=NICK  the matrix's settings of one kernel type only, e.g.\n"
      "               --kernel=bilateral\n"
      "  --seed=N     input seed (default 0x%x, or $CUCONV_TEST_SEED)\n"
      "  --threads=N  CPU reference threads (default: all online CPUs)\n"
      "  --verbose    one line per passing case too\n", argv0, DEFAULT_SEED);
}

static int
parse_args (int argc, char **argv)
{
  const char *env = getenv ("CUCONV_TEST_SEED");
  int i;

  opt.seed = env ? strtoull (env, NULL, 0) : DEFAULT_SEED;
  opt.n_threads = (int) sysconf (_SC_NPROCESSORS_ONLN);
  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--quick") == 0)
      opt.quick = 1;
    else if (strcmp (argv[i], "--race") == 0)
      opt.quick = opt.race = 1;
    else if (strcmp (argv[i], "--regions") == 0)
      opt.regions_only = 1;
    else if (strcmp (argv[i], "--wide") == 0)
      opt.wide_only = 1;
    else if (strcmp (argv[i], "--window") == 0)
      opt.wide_only = opt.window_only = 1;
    else if (strcmp (argv[i], "--untruncated") == 0)
      opt.untruncated_only = 1;
    else if (strcmp (argv[i], "--matrix") == 0)
      opt.matrix_only = 1;
    else if (strcmp (argv[i], "--stream") == 0)
      base_path = run_path = CUCONV_PATH_STREAM;
    else if (strcmp (argv[i], "--mma") == 0)
      base_path = run_path = CUCONV_PATH_MMA;
    else if (strcmp (argv[i], "--tiled") == 0)
      base_path = run_path = CUCONV_PATH_TILED;
    else if (strcmp (argv[i], "--nlmeans-sums") == 0)
      base_path = run_path = CUCONV_PATH_NLMEANS_SUMS;
    else if (strcmp (argv[i], "--verbose") == 0 || strcmp (argv[i], "-v") == 0)
      opt.verbose = 1;
    else if (strncmp (argv[i], "--kernel=", 9) == 0)
      opt.kernel_only = argv[i] + 9;
    else if (strncmp (argv[i], "--seed=", 7) == 0)
      opt.seed = strtoull (argv[i] + 7, NULL, 0);
    else if (strncmp (argv[i], "--threads=", 10) == 0)
      opt.n_threads = atoi (argv[i] + 10);
    else {
      usage (argv[0]);
      return -1;
    }
  }
  if (opt.n_threads < 1)
    opt.n_threads = 1;
  return 0;
}

/* The driver calls check_contexts needs, through the runtime's entry
 * point table (CUDA 12.0 versions), so that the test does not link
 * libcuda. */
typedef CUresult (*DeviceGetFn) (CUdevice *, int);
/* cuCtxCreate as of CUDA 12.0 (driver_call's version): cuCtxCreate_v3,
 * with an execution-affinity list before the flags. */
typedef CUresult (*CtxCreateFn) (CUcontext *, CUexecAffinityParam *, int,
    unsigned int, CUdevice);
typedef CUresult (*CtxFn) (CUcontext);
typedef CUresult (*CtxPopFn) (CUcontext *);

static void *
driver_call (const char *name)
{
  enum cudaDriverEntryPointQueryResult q;
  void *f = NULL;

  if (cudaGetDriverEntryPointByVersion (name, &f, 12000, cudaEnableDefault,
          &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
    return NULL;
  return f;
}

/* A tight plane of one filtered component, w x h samples of depth bits
 * (8: a byte each, else 16-bit words), src to dst. */
static void
gray_plane (CuconvPlane * p, const void *src, void *dst, int w, int h,
    int depth)
{
  memset (p, 0, sizeof (*p));
  p->src = src;
  p->dst = dst;
  p->width = w;
  p->height = h;
  p->src_stride = p->dst_stride = w * (depth > 8 ? 2 : 1);
  p->n_comp = 1;
  p->sub_x = p->sub_y = 1;
  p->depth = depth;
  p->op[0] = CUCONV_COMP_FILTER;
}

/* Filters src (w x h samples of depth bits, tight) into dst with f in the
 * current context: through cuconv_filter_device on device copies, or
 * (strips) through a CuconvHostFrames from host memory.  0 on success. */
static int
filter_in_context (const void *src, void *dst, int w, int h, int depth,
    const CuconvFilter * f, int strips)
{
  const size_t bytes = (size_t) w * h * (depth > 8 ? 2 : 1);
  CuconvPlane p;
  CuconvStatus st;
  uint8_t *d_src = NULL, *d_dst = NULL;
  int r = -1;

  gray_plane (&p, NULL, NULL, w, h, depth);
  if (strips) {
    CuconvHostFrames *s = cuconv_host_frames_new (&st);

    if (!s) {
      printf ("  %s\n", st.message);
      return -1;
    }
    p.src = src;
    p.dst = dst;
    r = cuconv_host_frames_strips (s, &p, 1, f, &st);
    if (r != 0)
      printf ("  %s\n", st.message);
    cuconv_host_frames_free (s);
    return r;
  }
  if (cudaMalloc ((void **) &d_src, bytes) == cudaSuccess
      && cudaMalloc ((void **) &d_dst, bytes) == cudaSuccess
      && cudaMemcpy (d_src, src, bytes, cudaMemcpyHostToDevice) ==
      cudaSuccess) {
    p.src = d_src;
    p.dst = d_dst;
    r = cuconv_filter_device (&p, 1, f, NULL, &st);
    if (r != 0)
      printf ("  %s\n", st.message);
    else if (cudaMemcpy (dst, d_dst, bytes, cudaMemcpyDeviceToHost) !=
        cudaSuccess)
      r = -1;
  }
  cudaFree (d_src);
  cudaFree (d_dst);
  return r;
}

/* The engine in two contexts of one device, one after the other and back:
 * a kernel's dynamic shared memory limit belongs to a context, and these
 * filters need more than the default 48 KiB (the generic separable path at
 * radius 64, the box's running sums), so each context must be allowed it
 * on its own.  Each output is compared with the reference (+-1).  Returns
 * the number of failures; skipped (0) when the driver calls are missing. */
static int
check_contexts (void)
{
  const DeviceGetFn device_get = (DeviceGetFn) driver_call ("cuDeviceGet");
  const CtxCreateFn ctx_create = (CtxCreateFn) driver_call ("cuCtxCreate");
  const CtxFn ctx_destroy = (CtxFn) driver_call ("cuCtxDestroy");
  const CtxFn ctx_push = (CtxFn) driver_call ("cuCtxPushCurrent");
  const CtxPopFn ctx_pop = (CtxPopFn) driver_call ("cuCtxPopCurrent");
  const int w = 333, h = 211;
  static const struct
  {
    CuconvKernel kernel;
    unsigned radius;
  } cases[] = { {CUCONV_KERNEL_GAUSSIAN, 64}, {CUCONV_KERNEL_BOX, 40} };
  uint8_t *src = malloc ((size_t) w * h), *ref = malloc ((size_t) w * h);
  uint8_t *out = malloc ((size_t) w * h);
  CUcontext second = NULL, popped;
  CUdevice cudev;
  int dev, failures = 0;
  uint64_t seed = opt.seed;

  if (!device_get || !ctx_create || !ctx_destroy || !ctx_push || !ctx_pop
      || !src || !ref || !out || cudaGetDevice (&dev) != cudaSuccess
      || device_get (&cudev, dev) != CUDA_SUCCESS) {
    printf ("contexts: skipped (driver calls not available)\n");
    goto done;
  }
  /* cuCtxCreate makes the new context current: pop it until needed */
  if (ctx_create (&second, NULL, 0, 0, cudev) != CUDA_SUCCESS
      || ctx_pop (&popped) != CUDA_SUCCESS) {
    printf ("contexts: FAIL: cannot create a second context\n");
    failures++;
    goto done;
  }
  for (size_t i = 0; i < (size_t) w * h; i++)
    src[i] = (uint8_t) splitmix64 (&seed);
  for (size_t c = 0; c < sizeof (cases) / sizeof (cases[0]); c++) {
    CuconvSettings s;
    CuconvFilter f;
    CuconvPlane p;

    memset (&s, 0, sizeof (s));
    s.kernel = cases[c].kernel;
    s.border = CUCONV_BORDER_MIRROR;
    s.radius = cases[c].radius;
    cuconv_filter_init (&f, &s);
    gray_plane (&p, src, ref, w, h, 8);
    cuconv_reference_plane_filter (&p, &f);
    /* primary, second, primary again; device memory, then strips */
    for (int run = 0; run < 6; run++) {
      const int in_second = run % 3 == 1, strips = run >= 3;
      int r, bad = 0;

      memset (out, POISON_A, (size_t) w * h);
      if (in_second && ctx_push (second) != CUDA_SUCCESS) {
        failures++;
        continue;
      }
      r = filter_in_context (src, out, w, h, 8, &f, strips);
      if (in_second)
        ctx_pop (&popped);
      for (size_t i = 0; r == 0 && i < (size_t) w * h; i++)
        bad += abs ((int) out[i] - (int) ref[i]) > 1;
      if (r != 0 || bad) {
        printf ("contexts: FAIL: %s r=%u in the %s context (%s): %s\n",
            kernel_names[cases[c].kernel], cases[c].radius,
            in_second ? "second" : "primary", strips ? "strips" :
            "device memory", r ? "CUDA error" : "differs from the reference");
        failures++;
      }
    }
  }
  printf ("contexts: %s (two contexts of one device, each filter in the "
      "primary, a second and the primary again)\n",
      failures ? "FAIL" : "PASS");
done:
  if (second)
    ctx_destroy (second);
  free (src);
  free (ref);
  free (out);
  return failures;
}

/* ---------------------------------------------------------------------- */
/* The untruncated gaussian (radius 0 and sigma above 21.33: the recursive
 * path, cuda/kernels/cuconv-recursive.cu) against the reference, through run_size:
 * sigma 21.4 to 256, a direction without a sigma beside one with, two
 * sigmas, sharpen (amount 0.7 and 3); every border; 8-, 10-, 12- and
 * 16-bit formats of 1, 2 and 4 components (RGBA with copied and filled
 * channels); planes far smaller than sigma, rows of two and more chunks of
 * the row kernel, columns of many bands, one 1920x1080 frame; then one
 * frame through the strips. */

static const char *const untrunc_formats[] = {
  "GRAY8", "NV12", "RGBA", "I420", "GRAY16_LE", "I420_12LE", "P010_10LE",
  NULL,
};

static const char *const untrunc_race_formats[] = {
  "GRAY8", "NV12", "RGBA", NULL,
};

static const char *const untrunc_big_formats[] = { "GRAY8", "NV12", NULL };

static const struct
{
  CuconvKernel kernel;
  double sigma, sigma_y, amount;
  const char *ops4;
  unsigned runs;                /* F_QUICK, F_RACE: in those runs too */
} untrunc_list[] = {
  {CUCONV_KERNEL_GAUSSIAN, 21.4, 0, 0, NULL, F_QUICK},
  {CUCONV_KERNEL_GAUSSIAN, 30, 0, 0, "FLFC", 0},
  {CUCONV_KERNEL_GAUSSIAN, 64, 0, 0, NULL, F_RACE},
  {CUCONV_KERNEL_GAUSSIAN, 128, 0, 0, NULL, 0},
  {CUCONV_KERNEL_GAUSSIAN, 200, 0, 0, "CFLF", 0},
  {CUCONV_KERNEL_GAUSSIAN, 256, 0, 0, NULL, F_QUICK},
  {CUCONV_KERNEL_SHARPEN, 64, 0, 0.7, NULL, 0},
  {CUCONV_KERNEL_SHARPEN, 200, 0, 3.0, "FFLC", F_QUICK | F_RACE},
  {CUCONV_KERNEL_GAUSSIAN, 0, 100, 0, NULL, F_QUICK},
  {CUCONV_KERNEL_GAUSSIAN, 30, 200, 0, NULL, F_RACE},
  {CUCONV_KERNEL_SHARPEN, 0, 100, 3.0, NULL, 0},
};

#define N_UNTRUNC ((int) (sizeof (untrunc_list) / sizeof (untrunc_list[0])))

/* 17000 x 2: rows of 2 to 5 chunks (32 segments of 32 samples a warp, 16
 * warps a chunk); 2 x 3000: 12 bands of 256 rows */
static const Size untrunc_sizes[] = {
  {1, 1}, {2, 1}, {3, 2}, {5, 7}, {97, 61}, {333, 211}, {17000, 2},
  {2, 3000},
};

static const Size untrunc_quick_sizes[] = {
  {1, 1}, {3, 2}, {97, 61}, {17000, 2},
};

static const Size untrunc_race_sizes[] = { {5, 7}, {333, 211}, {17000, 2} };

/* One untruncated frame of 333x211 8-bit samples through the strips (a
 * host-memory frame, one strip for a wide filter) against the reference.
 * Returns the number of failures. */
static int
untrunc_strips (void)
{
  const int w = 333, h = 211;
  uint8_t *src = malloc ((size_t) w * h), *ref = malloc ((size_t) w * h);
  uint8_t *out = malloc ((size_t) w * h);
  uint64_t seed = opt.seed;
  CuconvSettings s;
  CuconvFilter *f = malloc (sizeof (*f));
  CuconvPlane p;
  int bad = 0, r = -1;

  if (src && ref && out && f) {
    for (size_t i = 0; i < (size_t) w * h; i++)
      src[i] = (uint8_t) splitmix64 (&seed);
    memset (&s, 0, sizeof (s));
    s.kernel = CUCONV_KERNEL_GAUSSIAN;
    s.border = CUCONV_BORDER_MIRROR;
    s.sigma = 64.0;
    cuconv_filter_init (f, &s);
    gray_plane (&p, src, ref, w, h, 8);
    cuconv_reference_plane_filter (&p, f);
    memset (out, POISON_A, (size_t) w * h);
    r = filter_in_context (src, out, w, h, 8, f, 1);
    for (size_t i = 0; r == 0 && i < (size_t) w * h; i++)
      bad += abs ((int) out[i] - (int) ref[i]) > 1;
  }
  printf ("untruncated through the strips (333x211, sigma 64, mirror): %s\n",
      r != 0 ? "FAIL (CUDA error)" : bad ? "FAIL" : "PASS");
  free (src);
  free (ref);
  free (out);
  free (f);
  return r != 0 || bad;
}

/* Steps of three quarters of the range (an eighth of it beside seven
 * eighths, one across each direction, in the middle) at 8, 12 and 16 bits
 * through the strongest untruncated filters, against the reference, every
 * border, along lines of 4099 samples.  Rounding errors of float states
 * cancel on noise and on short lines; along flat runs of thousands of
 * samples they add up (a CPU model of the kernels in float: 0.22 LSB a
 * direction at sigma 256 and 16 bits), and a sharpen of amount 10
 * multiplies them by ten (docs/design.md, "The recursive gaussian").  The steps stop
 * short of the range's ends, where the output would saturate and hide
 * the error.  Returns the number of failures. */
static int
untrunc_steps (void)
{
  static const int depths[] = { 8, 12, 16 };
  static const struct
  {
    CuconvKernel kernel;
    double sigma, amount;
  } list[] = {
    {CUCONV_KERNEL_GAUSSIAN, 256, 0}, {CUCONV_KERNEL_SHARPEN, 64, 10},
    {CUCONV_KERNEL_SHARPEN, 128, 10}, {CUCONV_KERNEL_SHARPEN, 256, 10},
  };
  static const Size sizes[] = { {4099, 5}, {5, 4099} };
  const size_t n = 4099 * 5;
  uint16_t *src = malloc (n * 2), *ref = malloc (n * 2), *out = malloc (n * 2);
  CuconvFilter *f = malloc (sizeof (*f));
  int failed = 0, run, e, b;

  if (!src || !ref || !out || !f) {
    free (src), free (ref), free (out), free (f);
    return 1;
  }
  /* each size at each depth */
  for (run = 0; run < 6; run++) {
    const int w = sizes[run / 3].w, h = sizes[run / 3].h;
    const int depth = depths[run % 3], max = (1 << depth) - 1;
    /* an eighth of the range from either end: room for the error to
     * show before the output saturates */
    const int lo = max / 8, hi = max - max / 8;
    int run_worst = 0;

    for (size_t i = 0; i < n; i++) {
      const int on = ((int) (i % w) >= w / 2) ^ ((int) (i / w) >= h / 2);

      if (depth == 8)
        ((uint8_t *) src)[i] = on ? hi : lo;
      else
        src[i] = on ? hi : lo;
    }
    for (e = 0; e < (int) (sizeof (list) / sizeof (list[0])); e++) {
      for (b = 0; b < CUCONV_BORDER_N; b++) {
        CuconvSettings s;
        CuconvPlane p;
        int worst = 0, r;

        memset (&s, 0, sizeof (s));
        s.kernel = list[e].kernel;
        s.border = b;
        s.sigma = list[e].sigma;
        s.amount = list[e].amount;
        cuconv_filter_init (f, &s);
        gray_plane (&p, src, ref, w, h, depth);
        cuconv_reference_plane_filter (&p, f);
        memset (out, POISON_A, n * 2);
        r = filter_in_context (src, out, w, h, depth, f, 0);
        for (size_t i = 0; r == 0 && i < n; i++) {
          const int diff = depth == 8 ?
              abs ((int) ((uint8_t *) out)[i] - ((uint8_t *) ref)[i]) :
              abs ((int) out[i] - (int) ref[i]);

          worst = diff > worst ? diff : worst;
        }
        run_worst = worst > run_worst ? worst : run_worst;
        if (r != 0 || worst > 1 || opt.verbose)
          printf ("  steps %dx%d %d-bit %s sigma %g amount %g border %d: "
              "%s (max |d| %d)\n", w, h, depth, kernel_names[list[e].kernel],
              list[e].sigma, list[e].amount, b, r != 0 ? "CUDA error" :
              worst > 1 ? "FAIL" : "ok", worst);
        failed += r != 0 || worst > 1;
      }
    }
    printf ("  steps %dx%d, %d-bit: max |d| %d\n", w, h, depth, run_worst);
  }
  printf ("untruncated at steps of 3/4 the range (4099x5 and 5x4099, 8, 12 and "
      "16 bits, sharpen amount 10): %s\n", failed ? "FAIL" : "PASS");
  free (src);
  free (ref);
  free (out);
  free (f);
  return failed;
}

/* Returns -1 on a CUDA error, 1 when a case failed, 0 otherwise. */
static int
run_untruncated (Stats * stats, cudaStream_t stream)
{
  static Setting settings[N_UNTRUNC * CUCONV_BORDER_N];
  static char labels[N_UNTRUNC][96];
  const char *const *saved = format_only;
  const Size *sizes = opt.race ? untrunc_race_sizes :
      opt.quick ? untrunc_quick_sizes : untrunc_sizes;
  const int n_sizes = opt.race ? (int) (sizeof (untrunc_race_sizes) /
      sizeof (Size)) : opt.quick ? (int) (sizeof (untrunc_quick_sizes) /
      sizeof (Size)) : (int) (sizeof (untrunc_sizes) / sizeof (Size));
  const unsigned run = opt.race ? F_RACE : opt.quick ? F_QUICK : 0;
  uint64_t before = 0, failed = 0;
  int n = 0, ret = 0, e, b, i;
  double t0 = now_s ();

  for (e = 0; e < N_UNTRUNC; e++) {
    if (run && !(untrunc_list[e].runs & run))
      continue;
    snprintf (labels[e], sizeof (labels[e]), "%s untruncated sigma=%g "
        "sigma_y=%g amount=%g%s%s", kernel_names[untrunc_list[e].kernel],
        untrunc_list[e].sigma, untrunc_list[e].sigma_y,
        untrunc_list[e].amount, untrunc_list[e].ops4 ? " ops4=" : "",
        untrunc_list[e].ops4 ? untrunc_list[e].ops4 : "");
    for (b = 0; b < CUCONV_BORDER_N; b++) {
      if (opt.race && b != CUCONV_BORDER_MIRROR)
        continue;
      memset (&settings[n], 0, sizeof (settings[n]));
      settings[n].label = labels[e];
      settings[n].planes = CUCONV_PLANES_ALL;
      settings[n].s.kernel = untrunc_list[e].kernel;
      settings[n].s.border = b;
      settings[n].s.sigma = untrunc_list[e].sigma;
      settings[n].s.sigma_y = untrunc_list[e].sigma_y;
      settings[n].s.amount = untrunc_list[e].amount;
      settings[n].ops4 = untrunc_list[e].ops4;
      n++;
    }
  }
  for (i = 0; i < N_FORMATS; i++)
    before += stats[i].failed_cases;

  printf ("untruncated gaussian: %d settings x %d sizes\n", n, n_sizes);
  format_only = opt.race ? untrunc_race_formats : untrunc_formats;
  for (i = 0; i < n_sizes && ret == 0; i++) {
    printf ("untruncated size %dx%d\n", sizes[i].w, sizes[i].h);
    ret = run_size (&sizes[i], settings, n, stats, stream);
  }
  if (ret == 0 && !opt.quick) {
    /* one large frame: sigma 64, mirror */
    static const Size big = { 1920, 1080 };
    Setting one = settings[2 * CUCONV_BORDER_N + CUCONV_BORDER_MIRROR];

    format_only = untrunc_big_formats;
    printf ("untruncated size %dx%d\n", big.w, big.h);
    ret = run_size (&big, &one, 1, stats, stream);
  }
  format_only = saved;
  for (i = 0; i < N_FORMATS; i++)
    failed += stats[i].failed_cases;
  failed -= before;
  if (ret == 0 && untrunc_strips () != 0)
    failed++;
  if (ret == 0 && !opt.race && untrunc_steps () != 0)
    failed++;
  printf ("untruncated: %s, %.1f s\n", ret < 0 ? "stopped on a CUDA error" :
      failed ? "FAIL" : "PASS", now_s () - t0);
  return ret < 0 ? -1 : failed != 0;
}

int
main (int argc, char **argv)
{
  const Size *sizes = NULL;
  int n_sizes = 0;
  static Setting settings[MAX_SETTINGS];
  Stats stats[N_FORMATS];
  Stats total;
  struct cudaDeviceProp prop;
  cudaStream_t stream;
  int n_settings, i, dev, failed = 0, aborted = 0, n_formats = 0;
  double t0 = now_s ();

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (parse_args (argc, argv) < 0)
    return 2;

  if (cuconv_device_count () == 0) {
    printf ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  if (cudaGetDevice (&dev) != cudaSuccess ||
      cudaGetDeviceProperties (&prop, dev) != cudaSuccess ||
      cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking) !=
      cudaSuccess) {
    printf ("ERROR: CUDA device 0 is not usable: %s\n",
        cudaGetErrorString (cudaGetLastError ()));
    return 1;
  }

  sizes = opt.race ? race_sizes : opt.quick ? quick_sizes : full_sizes;
  n_sizes = opt.race ? (int) (sizeof (race_sizes) / sizeof (Size)) :
      opt.quick ? (int) (sizeof (quick_sizes) / sizeof (Size))
      : (int) (sizeof (full_sizes) / sizeof (Size));
  n_settings = build_settings (settings);
  for (i = 0; i < N_FORMATS; i++)
    n_formats += format_in_run (i);

  printf ("test-gpu: %s matrix on %s (sm_%d%d)\n",
      opt.race ? "race" : opt.quick ? "quick" : "full", prop.name, prop.major,
      prop.minor);
  printf ("seed: 0x%" PRIx64 " (override with --seed=N or CUCONV_TEST_SEED)\n",
      opt.seed);
  printf ("tolerance: |gpu - reference| <= 1 LSB per filtered sample, "
      "copied and filled samples exact; a larger difference, a sample left "
      "unwritten, a byte written outside the planes, or a modified source "
      "fails\n");
  if (opt.quick)
    printf ("poison: destination filled with 0x%02X before each run\n",
        POISON_A);
  else
    printf ("poison: every case runs twice, the destination filled with "
        "0x%02X and then 0x%02X, and both outputs must agree\n", POISON_A,
        POISON_B);
  printf ("matrix: %d settings (the gaussian/box sweep on the 8-bit YUV "
      "formats, I420_10LE and P010; every kernel type with a planes choice "
      "on every format) x %d sizes x %d formats x tight and padded strides "
      "(a case = one setting, size, format and layout); CPU reference on %d "
      "threads\n",
      n_settings, n_sizes, n_formats, opt.n_threads);

  memset (stats, 0, sizeof (stats));
  for (i = 0; i < n_sizes && !opt.regions_only && !opt.wide_only
      && !opt.untruncated_only; i++) {
    printf ("size %dx%d\n", sizes[i].w, sizes[i].h);
    if (run_size (&sizes[i], settings, n_settings, stats, stream) < 0) {
      printf ("ERROR: stopping after a CUDA error at %dx%d\n", sizes[i].w,
          sizes[i].h);
      aborted = 1;
      break;
    }
  }
  if (!aborted && !opt.wide_only && !opt.untruncated_only && !opt.matrix_only
      && (!opt.race || opt.regions_only)) {
    const int r = run_regions (stream);

    aborted |= r < 0;
    failed |= r != 0;
  }
  if (!aborted && !opt.regions_only && !opt.untruncated_only
      && !opt.matrix_only && (!opt.race || opt.wide_only)) {
    const int r = run_wide (stream);

    aborted |= r < 0;
    failed |= r != 0;
  }
  if (!aborted && !opt.regions_only && !opt.wide_only && !opt.matrix_only) {
    const int r = run_untruncated (stats, stream);

    aborted |= r < 0;
    failed |= r != 0;
  }
  cudaStreamDestroy (stream);
  if (!aborted && !opt.regions_only && !opt.wide_only && !opt.untruncated_only)
    failed |= check_contexts () != 0;
  /* the table: the untruncated run's formats */
  if (opt.untruncated_only)
    format_only = untrunc_formats;

  memset (&total, 0, sizeof (total));
  printf ("\n| format | cases | failed | samples | +-1 | > 1 | unwritten | "
      "nondeterministic | guard bytes | max abs diff |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (i = 0; i < N_FORMATS; i++) {
    const Stats *s = &stats[i];

    if (!format_in_run (i))
      continue;
    printf ("| %s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64
        " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %d |\n",
        formats[i].name, s->cases, s->failed_cases, s->samples, s->off_by_one,
        s->off_by_more, s->unwritten, s->nondeterministic, s->guard,
        s->max_diff);
    failed += s->failed_cases != 0;
    total.cases += s->cases;
    total.failed_cases += s->failed_cases;
  }
  printf ("\n%s: %" PRIu64 " cases, %" PRIu64 " failed%s, seed 0x%" PRIx64
      ", %.1f s\n", failed || aborted ? "FAIL" : "PASS", total.cases,
      total.failed_cases, aborted ? ", stopped early on a CUDA error" : "",
      opt.seed, now_s () - t0);
  return failed || aborted ? 1 : 0;
}
