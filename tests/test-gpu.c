/* gst-cudaconvolve: GPU conformance suite for the CUDA engine.
 *
 * ccv_cuda_filter_device () against the CPU reference (ccv_reference_plane)
 * over every plane geometry of the supported formats, both kernels, every
 * border mode, radii 1..64, sigma-only settings and sizes from 1x1 to
 * 3840x2160, with tight (odd) and padded strides.  Tolerance: +-1 LSB.
 *
 *   test-gpu [--quick | --race] [--seed=N] [--threads=N] [--verbose]
 *
 * Exits 77 (skip) when no CUDA device is usable, 0 when every case passes,
 * 1 otherwise.  The seed can also come from CCV_TEST_SEED.
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

#include <cuda_runtime_api.h>

#include "ccv.h"
#include "ccv-cuda.h"

#define EXIT_SKIP 77
/* Bytes around every plane that the kernel must leave as they are. */
#define GUARD 256
#define POISON_A 0xA5
#define POISON_B 0x5A
#define MAX_FAIL_LINES 30
#define DEFAULT_SEED 0x5eed2024u

/* One plane of a format: its geometry and its slot, so that different planes
 * of a frame get different data while a plane shared by two formats (the
 * luma plane of all of them, the chroma planes of I420 and YV12) is
 * generated, and its reference computed, once. */
typedef enum
{
  KEY_Y, KEY_420_1, KEY_420_2, KEY_NV_UV, KEY_422_1, KEY_422_2, KEY_444_1,
  KEY_444_2, N_KEYS
} PlaneKey;

static const struct
{
  int n_comp, sub_x, sub_y;
} key_geom[N_KEYS] = {
  {1, 1, 1}, {1, 2, 2}, {1, 2, 2}, {2, 2, 2}, {1, 2, 1}, {1, 2, 1},
  {1, 1, 1}, {1, 1, 1},
};

typedef struct
{
  const char *name;
  int n_planes;
  PlaneKey key[3];
  int quick;                    /* in the --quick matrix */
} Format;

/* The quick set still covers every geometry except 4:4:4 chroma, which is
 * the luma geometry. */
static const Format formats[] = {
  {"GRAY8", 1, {KEY_Y}, 0},
  {"I420", 3, {KEY_Y, KEY_420_1, KEY_420_2}, 1},
  {"YV12", 3, {KEY_Y, KEY_420_2, KEY_420_1}, 0},
  {"NV12", 2, {KEY_Y, KEY_NV_UV}, 1},
  {"NV21", 2, {KEY_Y, KEY_NV_UV}, 0},
  {"Y42B", 3, {KEY_Y, KEY_422_1, KEY_422_2}, 1},
  {"Y444", 3, {KEY_Y, KEY_444_1, KEY_444_2}, 0},
};

#define N_FORMATS ((int) (sizeof (formats) / sizeof (formats[0])))

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

static const unsigned full_radii[] = { 1, 2, 3, 4, 7, 8, 16, 31, 64 };
/* The quick run still takes the engine's unrolled radii (1, 3, 16 and
 * their chroma halves) and its generic path (31, 64). */
static const unsigned quick_radii[] = { 1, 3, 16, 31, 64 };

/* --race, for compute-sanitizer racecheck, which takes about a second a
 * launch: interior and border tiles of the unrolled (1, 16) and generic
 * (31) separable paths and of the box kernel, mirror border, I420 and
 * NV12. */
static const Size race_sizes[] = { {17, 9}, {385, 289} };
static const unsigned race_radii[] = { 1, 16, 31 };

/* Radius 0 with a sigma, and a sigma that does not match the radius. */
static const struct
{
  CcvKernel kernel;
  unsigned radius;
  double sigma;
} extra_settings[] = {
  {CCV_KERNEL_GAUSSIAN, 0, 1.5},
  {CCV_KERNEL_GAUSSIAN, 0, 10.0},
  {CCV_KERNEL_BOX, 0, 1.5},
  {CCV_KERNEL_GAUSSIAN, 5, 4.0},
  {CCV_KERNEL_GAUSSIAN, 16, 0.5},
};

static const char *const kernel_names[] = { "gaussian", "box" };
static const char *const border_names[] = { "clamp", "mirror", "wrap", "zero" };

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

typedef struct
{
  int quick;                    /* --quick or --race */
  int race;
  int verbose;
  uint64_t seed;
  int n_threads;
} Options;

static Options opt;
static int fail_lines;

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

/* Noise, flat 0 and 255 areas (rounding at saturation, taps summing to 1)
 * and salt and pepper, in 8x8 blocks chosen at random. */
static void
fill_plane (uint8_t * p, int w, int h, int n_comp, uint64_t seed)
{
  uint64_t s = seed;
  int row = w * n_comp, bw = (row + 7) / 8, bh = (h + 7) / 8;
  uint8_t *mode = malloc ((size_t) bw * bh);
  int x, y;

  for (x = 0; x < bw * bh; x++)
    mode[x] = splitmix64 (&s) % 8;
  for (y = 0; y < h; y++) {
    for (x = 0; x < row; x++) {
      uint8_t m = mode[(y / 8) * bw + x / 8];
      uint8_t v = (uint8_t) splitmix64 (&s);

      if (m == 5)
        v = 255;
      else if (m == 6)
        v = 0;
      else if (m == 7)
        v = (v & 1) ? 255 : 0;
      p[(size_t) y * row + x] = v;
    }
  }
  free (mode);
}

/* ---------------------------------------------------------------------- */
/* The CPU references, computed by a pool of threads ahead of the GPU checks
 * (at most `window' settings ahead, to bound memory). */

typedef struct
{
  int w, h, n_comp, sub_x, sub_y;
  int used;
  uint8_t *in;                  /* stride w * n_comp */
} KeyPlane;

typedef struct
{
  pthread_mutex_t lock;
  pthread_cond_t cond;
  const KeyPlane *kp;
  const CcvSettings *settings;
  int n_settings;
  int next_job;                 /* setting * N_KEYS + key */
  int consumed;                 /* settings the GPU checks are done with */
  int window;
  int *done;                    /* per setting: keys finished */
  uint8_t **ref;                /* per job */
  int alloc_failed;
} RefPool;

static void *
ref_worker (void *data)
{
  RefPool *pool = data;

  for (;;) {
    const KeyPlane *k;
    uint8_t *out = NULL;
    int job;

    pthread_mutex_lock (&pool->lock);
    while (pool->next_job < pool->n_settings * N_KEYS &&
        pool->next_job / N_KEYS >= pool->consumed + pool->window)
      pthread_cond_wait (&pool->cond, &pool->lock);
    if (pool->next_job >= pool->n_settings * N_KEYS) {
      pthread_mutex_unlock (&pool->lock);
      break;
    }
    job = pool->next_job++;
    pthread_mutex_unlock (&pool->lock);

    k = &pool->kp[job % N_KEYS];
    if (k->used) {
      CcvFilter f;
      CcvPlane p;
      size_t n = (size_t) k->w * k->h * k->n_comp;

      out = malloc (n);
      memset (&p, 0, sizeof (p));
      p.src = k->in;
      p.dst = out;
      p.src_stride = p.dst_stride = (ptrdiff_t) k->w * k->n_comp;
      p.width = k->w;
      p.height = k->h;
      p.n_comp = k->n_comp;
      p.sub_x = k->sub_x;
      p.sub_y = k->sub_y;
      ccv_filter_init (&f, &pool->settings[job / N_KEYS]);
      if (out && ccv_reference_plane (&p, ccv_filter_taps_x (&f, &p),
              ccv_filter_taps_y (&f, &p), f.settings.border) < 0) {
        free (out);
        out = NULL;
      }
    }

    pthread_mutex_lock (&pool->lock);
    pool->ref[job] = out;
    if (k->used && !out)
      pool->alloc_failed = 1;
    pool->done[job / N_KEYS]++;
    pthread_cond_broadcast (&pool->cond);
    pthread_mutex_unlock (&pool->lock);
  }
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* One format's frame on the device, in one of two layouts: tight (stride =
 * row bytes, odd for odd widths) or padded (src and dst strides differ).
 * Planes start 256-byte aligned with GUARD bytes between them. */

typedef struct
{
  int padded;
  int n_planes;
  int w[3], h[3];
  PlaneKey key[3];
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
layout_init (Layout * l, const Format * fmt, const KeyPlane * kp, int padded)
{
  size_t so = GUARD, doff = GUARD;
  int i;

  memset (l, 0, sizeof (*l));
  l->padded = padded;
  l->n_planes = fmt->n_planes;
  for (i = 0; i < fmt->n_planes; i++) {
    const KeyPlane *k = &kp[fmt->key[i]];
    size_t row = (size_t) k->w * k->n_comp;

    l->key[i] = fmt->key[i];
    l->w[i] = k->w;
    l->h[i] = k->h;
    l->src_stride[i] = padded ? round_up (row, 256) + 256 : row;
    l->dst_stride[i] = padded ? round_up (row, 128) + 64 : row;
    l->src_off[i] = so;
    l->dst_off[i] = doff;
    /* the last row ends at its last sample, as tight as a frame can be */
    so += (size_t) l->src_stride[i] * (k->h - 1) + row;
    doff += (size_t) l->dst_stride[i] * (k->h - 1) + row;
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
  fill_plane (l->h_src, (int) l->src_size, 1, 1, seed);
  for (i = 0; i < l->n_planes; i++) {
    const KeyPlane *k = &kp[l->key[i]];
    size_t row = (size_t) k->w * k->n_comp;

    for (y = 0; y < k->h; y++)
      memcpy (l->h_src + l->src_off[i] + (size_t) y * l->src_stride[i],
          k->in + (size_t) y * row, row);
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

static void
layout_planes (const Layout * l, CcvPlane * planes)
{
  int i;

  for (i = 0; i < l->n_planes; i++) {
    memset (&planes[i], 0, sizeof (planes[i]));
    planes[i].src = l->d_src + l->src_off[i];
    planes[i].dst = l->d_dst + l->dst_off[i];
    planes[i].src_stride = l->src_stride[i];
    planes[i].dst_stride = l->dst_stride[i];
    planes[i].width = l->w[i];
    planes[i].height = l->h[i];
    planes[i].n_comp = key_geom[l->key[i]].n_comp;
    planes[i].sub_x = key_geom[l->key[i]].sub_x;
    planes[i].sub_y = key_geom[l->key[i]].sub_y;
  }
}

/* Bytes outside the planes' samples that are not the poison. */
static uint64_t
count_guard_damage (const Layout * l, const uint8_t * buf, uint8_t poison)
{
  uint64_t bad = 0;
  size_t pos = 0, i;
  int p, y;

  for (p = 0; p < l->n_planes; p++) {
    size_t row = (size_t) l->w[p] * key_geom[l->key[p]].n_comp;

    for (y = 0; y < l->h[p]; y++) {
      size_t start = l->dst_off[p] + (size_t) y * l->dst_stride[p];

      for (i = pos; i < start; i++)
        bad += buf[i] != poison;
      pos = start + row;
    }
  }
  for (i = pos; i < l->dst_size; i++)
    bad += buf[i] != poison;
  return bad;
}

/* ---------------------------------------------------------------------- */
/* Checks */

static void
settings_label (const CcvSettings * s, char *buf, size_t len)
{
  if (s->radius == 0 || s->sigma > 0.0)
    snprintf (buf, len, "%s/%s r=%u sigma=%g", kernel_names[s->kernel],
        border_names[s->border], s->radius, s->sigma);
  else
    snprintf (buf, len, "%s/%s r=%u", kernel_names[s->kernel],
        border_names[s->border], s->radius);
}

static void
fail_line (const char *fmt_name, const Size * sz, const CcvSettings * s,
    const char *what)
{
  char label[96] = "";

  if (fail_lines++ >= MAX_FAIL_LINES) {
    if (fail_lines == MAX_FAIL_LINES + 1)
      printf ("  (further failures not shown)\n");
    return;
  }
  if (s)
    settings_label (s, label, sizeof (label));
  printf ("  FAIL %s %dx%d %s: %s\n", fmt_name, sz->w, sz->h, label, what);
}

/* Compares one downloaded frame with the references; returns TRUE when the
 * case passes.  a was poisoned with POISON_A, b (NULL in the quick run)
 * with POISON_B. */
static int
check_frame (const Layout * l, const uint8_t * a, const uint8_t * b,
    uint8_t *const *refs, Stats * st, const char *fmt_name, const Size * sz,
    const CcvSettings * s)
{
  const char *lay = l->padded ? "padded" : "tight";
  char what[256];
  int ok = 1, p, y, x;
  uint64_t g;

  for (p = 0; p < l->n_planes; p++) {
    int n = key_geom[l->key[p]].n_comp;
    size_t row = (size_t) l->w[p] * n;
    const uint8_t *ref = refs[l->key[p]];
    uint64_t bad = 0, unwritten = 0, nondet = 0;
    int first_x = -1, first_y = -1, first_g = 0, first_r = 0, maxd = 0;

    for (y = 0; y < l->h[p]; y++) {
      const uint8_t *ra = a + l->dst_off[p] + (size_t) y * l->dst_stride[p];
      const uint8_t *rb = b ? b + l->dst_off[p] +
          (size_t) y * l->dst_stride[p] : NULL;
      const uint8_t *rr = ref + (size_t) y * row;
      uint64_t n1 = 0, nb = 0;

      for (x = 0; x < (int) row; x++) {
        int d = ra[x] > rr[x] ? ra[x] - rr[x] : rr[x] - ra[x];

        maxd = d > maxd ? d : maxd;
        n1 += d == 1;
        nb += d > 1;
      }
      st->off_by_one += n1;
      if (nb && first_y < 0) {
        for (x = 0; x < (int) row; x++) {
          int d = ra[x] > rr[x] ? ra[x] - rr[x] : rr[x] - ra[x];
          if (d > 1)
            break;
        }
        first_x = x;
        first_y = y;
        first_g = ra[x];
        first_r = rr[x];
      }
      bad += nb;
      if (rb && memcmp (ra, rb, row) != 0) {
        for (x = 0; x < (int) row; x++) {
          if (ra[x] == rb[x])
            continue;
          if (ra[x] == POISON_A && rb[x] == POISON_B)
            unwritten++;
          else
            nondet++;
        }
      }
    }
    st->samples += (uint64_t) row * l->h[p];
    st->off_by_more += bad;
    st->unwritten += unwritten;
    st->nondeterministic += nondet;
    if (maxd > st->max_diff)
      st->max_diff = maxd;

    if (bad) {
      snprintf (what, sizeof (what), "%s plane %d (%dx%d, %d comp): "
          "%" PRIu64 " samples off by > 1 (max %d), first at x=%d c=%d "
          "y=%d: gpu %d, reference %d", lay, p, l->w[p], l->h[p], n, bad,
          maxd, first_x / n, first_x % n, first_y, first_g, first_r);
      fail_line (fmt_name, sz, s, what);
      ok = 0;
    }
    if (unwritten || nondet) {
      snprintf (what, sizeof (what), "%s plane %d (%dx%d, %d comp): "
          "%" PRIu64 " samples never written, %" PRIu64 " differ between "
          "two identical runs", lay, p, l->w[p], l->h[p], n, unwritten,
          nondet);
      fail_line (fmt_name, sz, s, what);
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
    fail_line (fmt_name, sz, s, what);
    ok = 0;
  }
  return ok;
}

/* Runs the engine on l with the destination poisoned with `poison' and
 * downloads the whole destination buffer into out. */
static int
run_gpu (const Layout * l, const CcvFilter * f, uint8_t poison, uint8_t * out,
    cudaStream_t stream)
{
  CcvPlane planes[3];
  int err;

  layout_planes (l, planes);
  err = cudaMemsetAsync (l->d_dst, poison, l->dst_size, stream);
  if (err != cudaSuccess)
    return err;
  err = ccv_cuda_filter_device (planes, l->n_planes, f, stream);
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

static int
build_settings (CcvSettings * out)
{
  const unsigned *radii = opt.race ? race_radii :
      opt.quick ? quick_radii : full_radii;
  int n_radii = opt.race ? (int) (sizeof (race_radii) / sizeof (unsigned)) :
      opt.quick ? (int) (sizeof (quick_radii) / sizeof (unsigned))
      : (int) (sizeof (full_radii) / sizeof (unsigned));
  int n = 0, k, b, r, e;

  for (k = 0; k < CCV_KERNEL_N; k++) {
    for (b = 0; b < CCV_BORDER_N; b++) {
      if (opt.race && b != CCV_BORDER_MIRROR)
        continue;
      for (r = 0; r < n_radii; r++) {
        memset (&out[n], 0, sizeof (out[n]));
        out[n].kernel = k;
        out[n].border = b;
        out[n].radius = radii[r];
        n++;
      }
    }
  }
  for (e = 0; e < (int) (sizeof (extra_settings) / sizeof (extra_settings[0]));
      e++) {
    for (b = 0; b < CCV_BORDER_N; b++) {
      /* the quick run takes the first two once, with mirror */
      if (opt.race || (opt.quick && (b != CCV_BORDER_MIRROR || e >= 2)))
        continue;
      memset (&out[n], 0, sizeof (out[n]));
      out[n].kernel = extra_settings[e].kernel;
      out[n].border = b;
      out[n].radius = extra_settings[e].radius;
      out[n].sigma = extra_settings[e].sigma;
      n++;
    }
  }
  return n;
}

static int
format_in_run (int i)
{
  if (opt.race)
    return strcmp (formats[i].name, "I420") == 0
        || strcmp (formats[i].name, "NV12") == 0;
  return !opt.quick || formats[i].quick;
}

/* Returns -1 on a CUDA error (which may be sticky: the run stops), 0
 * otherwise; failures are counted in stats. */
static int
run_size (const Size * sz, const CcvSettings * settings, int n_settings,
    Stats * stats, cudaStream_t stream)
{
  KeyPlane kp[N_KEYS];
  Layout lay[N_FORMATS][2];
  RefPool pool;
  pthread_t *threads;
  uint8_t *h_a = NULL, *h_b = NULL;
  size_t max_dst = 0;
  double t0 = now_s (), t_wait = 0.0;
  int ret = 0, i, j, s, n_threads;
  Stats before[N_FORMATS];

  /* max_diff is reported per size, then folded into the totals */
  memcpy (before, stats, sizeof (before));
  for (i = 0; i < N_FORMATS; i++)
    stats[i].max_diff = 0;
  memset (kp, 0, sizeof (kp));
  memset (lay, 0, sizeof (lay));
  for (i = 0; i < N_FORMATS; i++) {
    if (!format_in_run (i))
      continue;
    for (j = 0; j < formats[i].n_planes; j++)
      kp[formats[i].key[j]].used = 1;
  }
  for (i = 0; i < N_KEYS; i++) {
    kp[i].n_comp = key_geom[i].n_comp;
    kp[i].sub_x = key_geom[i].sub_x;
    kp[i].sub_y = key_geom[i].sub_y;
    kp[i].w = (sz->w + kp[i].sub_x - 1) / kp[i].sub_x;
    kp[i].h = (sz->h + kp[i].sub_y - 1) / kp[i].sub_y;
    if (!kp[i].used)
      continue;
    kp[i].in = malloc ((size_t) kp[i].w * kp[i].h * kp[i].n_comp);
    fill_plane (kp[i].in, kp[i].w, kp[i].h, kp[i].n_comp,
        opt.seed ^ ((uint64_t) i << 56) ^ ((uint64_t) sz->w << 28) ^
        (uint64_t) sz->h);
  }

  for (i = 0; i < N_FORMATS; i++) {
    if (!format_in_run (i))
      continue;
    for (j = 0; j < 2; j++) {
      layout_init (&lay[i][j], &formats[i], kp, j);
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

  memset (&pool, 0, sizeof (pool));
  pthread_mutex_init (&pool.lock, NULL);
  pthread_cond_init (&pool.cond, NULL);
  pool.kp = kp;
  pool.settings = settings;
  pool.n_settings = n_settings;
  pool.window = opt.n_threads < 4 ? 4 : opt.n_threads;
  pool.done = calloc (n_settings, sizeof (int));
  pool.ref = calloc ((size_t) n_settings * N_KEYS, sizeof (uint8_t *));
  /* small frames: threads cost more than they save */
  n_threads = (size_t) sz->w * sz->h < 4096 ? 1 : opt.n_threads;
  threads = calloc (n_threads, sizeof (pthread_t));
  for (i = 0; i < n_threads; i++)
    pthread_create (&threads[i], NULL, ref_worker, &pool);

  for (s = 0; s < n_settings && ret == 0; s++) {
    CcvFilter f;
    double tw = now_s ();

    pthread_mutex_lock (&pool.lock);
    while (pool.done[s] < N_KEYS)
      pthread_cond_wait (&pool.cond, &pool.lock);
    pthread_mutex_unlock (&pool.lock);
    t_wait += now_s () - tw;
    if (pool.alloc_failed) {
      printf ("  ERROR: out of host memory for the reference\n");
      ret = -1;
      break;
    }

    ccv_filter_init (&f, &settings[s]);
    for (i = 0; i < N_FORMATS && ret == 0; i++) {
      if (!format_in_run (i))
        continue;
      for (j = 0; j < 2; j++) {
        Layout *l = &lay[i][j];
        int err = run_gpu (l, &f, POISON_A, h_a, stream);

        /* under compute-sanitizer one run per layout is enough */
        if (err == 0 && !opt.quick)
          err = run_gpu (l, &f, POISON_B, h_b, stream);
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
        if (!check_frame (l, h_a, opt.quick ? NULL : h_b, pool.ref + (size_t) s * N_KEYS,
                &stats[i], formats[i].name, sz, &settings[s]))
          stats[i].failed_cases++;
        else if (opt.verbose) {
          char label[96];

          settings_label (&settings[s], label, sizeof (label));
          printf ("  ok %s %dx%d %s %s\n", formats[i].name, sz->w, sz->h,
              label, l->padded ? "padded" : "tight");
        }
      }
    }

    pthread_mutex_lock (&pool.lock);
    for (j = 0; j < N_KEYS; j++) {
      free (pool.ref[(size_t) s * N_KEYS + j]);
      pool.ref[(size_t) s * N_KEYS + j] = NULL;
    }
    pool.consumed = s + 1;
    pthread_cond_broadcast (&pool.cond);
    pthread_mutex_unlock (&pool.lock);
  }

  /* On an early stop let the workers run out of jobs quickly. */
  pthread_mutex_lock (&pool.lock);
  pool.consumed = n_settings;
  pool.next_job = n_settings * N_KEYS;
  pthread_cond_broadcast (&pool.cond);
  pthread_mutex_unlock (&pool.lock);
  for (i = 0; i < n_threads; i++)
    pthread_join (threads[i], NULL);
  for (i = 0; i < n_settings * N_KEYS; i++)
    free (pool.ref[i]);
  free (threads);
  free (pool.ref);
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
    printf ("  %-5s %4" PRIu64 " cases  max |d| %d  +-1: %9" PRIu64
        " of %11" PRIu64 " samples  %s\n", formats[i].name,
        b->cases - a->cases, b->max_diff, b->off_by_one - a->off_by_one,
        b->samples - a->samples,
        b->failed_cases == a->failed_cases ? "ok" : "FAIL");
  }
  for (i = 0; i < N_FORMATS; i++)
    if (before[i].max_diff > stats[i].max_diff)
      stats[i].max_diff = before[i].max_diff;
  printf ("  %dx%d done in %.1f s (%.1f s waiting for the CPU reference, "
      "%d threads)\n", sz->w, sz->h, now_s () - t0, t_wait, n_threads);

out_layouts:
  cudaFreeHost (h_a);
  cudaFreeHost (h_b);
  for (i = 0; i < N_FORMATS; i++)
    for (j = 0; j < 2; j++)
      layout_clear (&lay[i][j]);
  for (i = 0; i < N_KEYS; i++)
    free (kp[i].in);
  return ret;
}

static void
usage (const char *argv0)
{
  printf ("usage: %s [--quick | --race] [--seed=N] [--threads=N] [--verbose]\n"
      "  --quick      small sizes, a few radii, one poison\n"
      "  --race       a handful of cases for compute-sanitizer racecheck\n"
      "               value (for compute-sanitizer)\n"
      "  --seed=N     input seed (default 0x%x, or $CCV_TEST_SEED)\n"
      "  --threads=N  CPU reference threads (default: all online CPUs)\n"
      "  --verbose    one line per passing case too\n", argv0, DEFAULT_SEED);
}

static int
parse_args (int argc, char **argv)
{
  const char *env = getenv ("CCV_TEST_SEED");
  int i;

  opt.seed = env ? strtoull (env, NULL, 0) : DEFAULT_SEED;
  opt.n_threads = (int) sysconf (_SC_NPROCESSORS_ONLN);
  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--quick") == 0)
      opt.quick = 1;
    else if (strcmp (argv[i], "--race") == 0)
      opt.quick = opt.race = 1;
    else if (strcmp (argv[i], "--verbose") == 0 || strcmp (argv[i], "-v") == 0)
      opt.verbose = 1;
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

int
main (int argc, char **argv)
{
  const Size *sizes = NULL;
  int n_sizes = 0;
  CcvSettings settings[CCV_KERNEL_N * CCV_BORDER_N * 16 + 64];
  Stats stats[N_FORMATS];
  Stats total;
  struct cudaDeviceProp prop;
  cudaStream_t stream;
  int n_settings, i, dev, failed = 0, aborted = 0;
  double t0 = now_s ();

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (parse_args (argc, argv) < 0)
    return 2;

  if (ccv_cuda_device_count () == 0) {
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

  printf ("test-gpu: %s matrix on %s (sm_%d%d)\n",
      opt.race ? "race" : opt.quick ? "quick" : "full", prop.name, prop.major, prop.minor);
  printf ("seed: 0x%" PRIx64 " (override with --seed=N or CCV_TEST_SEED)\n",
      opt.seed);
  printf ("tolerance: |gpu - reference| <= 1 LSB per sample; a larger "
      "difference, a sample left unwritten, a byte written outside the "
      "planes, or a modified source fails\n");
  if (opt.quick)
    printf ("poison: destination filled with 0x%02X before each run\n",
        POISON_A);
  else
    printf ("poison: every case runs twice, the destination filled with "
        "0x%02X and then 0x%02X, and both outputs must agree\n", POISON_A,
        POISON_B);
  printf ("matrix: %d settings (kernel x border x radius, sigma-only) x %d "
      "sizes x %d formats x tight and padded strides (a case = one setting, "
      "size, format and layout); CPU reference on %d threads\n",
      n_settings, n_sizes, opt.race ? 2 : opt.quick ? 3 : N_FORMATS,
      opt.n_threads);

  memset (stats, 0, sizeof (stats));
  for (i = 0; i < n_sizes; i++) {
    printf ("size %dx%d\n", sizes[i].w, sizes[i].h);
    if (run_size (&sizes[i], settings, n_settings, stats, stream) < 0) {
      printf ("ERROR: stopping after a CUDA error at %dx%d\n", sizes[i].w,
          sizes[i].h);
      aborted = 1;
      break;
    }
  }
  cudaStreamDestroy (stream);

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
