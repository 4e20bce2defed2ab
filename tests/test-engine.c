/* gst-cudaconvolve: the engine of a stream of frames (cuda/api/cuconv-engine.h)
 * on the CPU, against the definitions it composes: the reference with
 * its regions (within ±1 where it filters, exact where the input stays),
 * the temporal denoise row by row (exact) and when its state starts
 * afresh; what it refuses; and its CPU bands' threads, which the process
 * keeps.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "cuconv-bands.h"
#include "cuconv-engine.h"
#include "cuconv-motion.h"

#define SEED 4242

/* A frame of up to three planes: luma, and two chroma planes subsampled
 * by sub in both directions. */
typedef struct
{
  CuconvPlane p[3];
  int n_planes;
} Frame;

static void
frame_new (Frame * f, int width, int height, int n_planes, int sub,
    int depth, GRand * rand)
{
  const int bytes = depth > 8 ? 2 : 1;

  memset (f, 0, sizeof (*f));
  f->n_planes = n_planes;
  for (int i = 0; i < n_planes; i++) {
    CuconvPlane *p = &f->p[i];
    const int s = i ? sub : 1;
    /* a stride past the row, odd in samples */
    const ptrdiff_t stride = ((width + s - 1) / s + 3) * bytes;
    uint8_t *src;

    p->width = (width + s - 1) / s;
    p->height = (height + s - 1) / s;
    p->sub_x = p->sub_y = s;
    p->n_comp = 1;
    p->depth = depth;
    p->fill = 1u << (depth - 1);
    p->src_stride = p->dst_stride = stride;
    src = g_malloc (stride * p->height);
    for (ptrdiff_t b = 0; b < stride * p->height; b++)
      src[b] = g_rand_int_range (rand, 0, 256);
    if (bytes == 2)
      for (ptrdiff_t b = 1; b < stride * p->height; b += 2)
        src[b] &= (1 << (depth - 8)) - 1;
    p->src = src;
    p->dst = g_malloc0 (stride * p->height);
  }
}

static void
frame_free (Frame * f)
{
  for (int i = 0; i < f->n_planes; i++) {
    g_free ((gpointer) f->p[i].src);
    g_free (f->p[i].dst);
  }
}

/* The planes of f with dst replaced by fresh memory. */
static void
frame_other_dst (const Frame * f, Frame * g)
{
  *g = *f;
  for (int i = 0; i < f->n_planes; i++)
    g->p[i].dst = g_malloc0 (f->p[i].dst_stride * f->p[i].height);
}

static void
frame_free_dst (Frame * g)
{
  for (int i = 0; i < g->n_planes; i++)
    g_free (g->p[i].dst);
}

static int
sample (const CuconvPlane * p, const uint8_t * base, int x, int y)
{
  const uint8_t *row = base + (ptrdiff_t) y * p->dst_stride;

  return p->depth > 8 ? row[2 * x] | row[2 * x + 1] << 8 : row[x];
}

/* The largest difference between a's and b's dst samples. */
static int
max_diff (const Frame * a, const Frame * b)
{
  int worst = 0;

  for (int i = 0; i < a->n_planes; i++)
    for (int y = 0; y < a->p[i].height; y++)
      for (int x = 0; x < a->p[i].width; x++)
        worst = MAX (worst, ABS (sample (&a->p[i], a->p[i].dst, x, y) -
                sample (&b->p[i], b->p[i].dst, x, y)));
  return worst;
}

static void
settings_init (CuconvSettings * s, CuconvKernel kernel, unsigned radius,
    double sigma)
{
  memset (s, 0, sizeof (*s));
  s->kernel = kernel;
  s->border = CUCONV_BORDER_MIRROR;
  s->radius = radius;
  s->sigma = sigma;
  s->amount = 1.0;
  s->sigma_range = 30.0;
}

/* Every kernel family the CPU takes, and one it leaves to the reference;
 * every region mode, one band and several: the engine is the reference
 * with its regions. */
GST_START_TEST (test_engine_filter_and_regions)
{
  static const CuconvRect rects[] = { {3, 2, 9, 7}, {20, 10, 30, 12} };
  static const CuconvRegions regions[] = {
    {CUCONV_REGION_FRAME, NULL, 0},
    {CUCONV_REGION_INSIDE, rects, 2},
    {CUCONV_REGION_OUTSIDE, rects, 2},
    {CUCONV_REGION_INSIDE, NULL, 0},
  };
  static const struct
  {
    CuconvKernel kernel;
    unsigned radius;
    double sigma;
  } kernels[] = {
    {CUCONV_KERNEL_GAUSSIAN, 2, 0}, {CUCONV_KERNEL_BOX, 5, 0},
    {CUCONV_KERNEL_SOBEL, 1, 0}, {CUCONV_KERNEL_BILATERAL, 2, 0},
    {CUCONV_KERNEL_GAUSSIAN, 0, 30.0}, {CUCONV_KERNEL_SHARPEN, 80, 0},
  };
  GRand *rand = g_rand_new_with_seed (SEED);
  CuconvFilter *filter = g_new0 (CuconvFilter, 1);
  CuconvEngine *e = cuconv_engine_new ();

  for (int depth = 8; depth <= 10; depth += 2) {
    Frame in;

    frame_new (&in, 61, 37, depth == 8 ? 1 : 3, 2, depth, rand);
    for (guint k = 0; k < G_N_ELEMENTS (kernels); k++) {
      CuconvSettings s;

      settings_init (&s, kernels[k].kernel, kernels[k].radius,
          kernels[k].sigma);
      cuconv_filter_init (filter, &s);
      for (guint r = 0; r < G_N_ELEMENTS (regions); r++) {
        for (unsigned threads = 1; threads <= 3; threads += 2) {
          CuconvFrame fr = { in.p, in.n_planes, CUCONV_MEMORY_CPU };
          CuconvStatus st = { 0 };
          Frame ref;

          fr.filter = filter;
          fr.regions = &regions[r];
          fr.cpu_threads = threads;
          frame_other_dst (&in, &ref);
          fail_unless (cuconv_reference_frame_regions (ref.p, ref.n_planes,
                  filter, &regions[r]) == 0);
          fail_unless_equals_int (cuconv_engine_filter (e, &fr, &st), 0);
          fail_unless (max_diff (&in, &ref) <= 1, "kernel %u regions %u "
              "depth %d: %d from the reference", k, r, depth,
              max_diff (&in, &ref));
          frame_free_dst (&ref);
        }
      }
    }
    frame_free (&in);
  }
  cuconv_engine_free (e);
  g_free (filter);
  g_rand_free (rand);
}

GST_END_TEST;

static void
make_gaussian (CuconvFilter * f, double sigma, const CuconvBox * box,
    void *data)
{
  CuconvSettings s;

  settings_init (&s, CUCONV_KERNEL_GAUSSIAN, 0, sigma);
  s.sigma_y = sigma;
  cuconv_filter_init (f, &s);
}

static void
make_mosaic (CuconvFilter * f, double side, const CuconvBox * box,
    void *data)
{
  CuconvSettings s;

  settings_init (&s, CUCONV_KERNEL_PIXELATE, 0, 0);
  s.block_size = (unsigned) side;
  cuconv_filter_init (f, &s);
  for (int i = 0; i < CUCONV_MAX_SUBSAMPLE; i++) {
    f->block_x0[i] = box->x0;
    f->block_y0[i] = box->y0;
  }
}

/* Region-relative filters on the CPU: the engine's crops (the untruncated
 * gaussian's cut at 6 sigmas, well inside this frame) within ±1 of the
 * reference's whole planes; mosaics exact. */
GST_START_TEST (test_engine_relative)
{
  static const CuconvRect rects[] = { {170, 120, 40, 40}, {20, 30, 64, 50},
    {150, 100, 30, 90}
  };
  static const CuconvBox boxes[] = { {170, 120, 210, 160},
    {18, 25, 84, 80}, {150, 100, 180, 190}
  };
  static const double sigmas[] = { 25.0, 3.0, 25.0 }, sides[] = { 7, 5, 16 };
  GRand *rand = g_rand_new_with_seed (SEED);
  CuconvEngine *e = cuconv_engine_new ();

  for (int depth = 8; depth <= 10; depth += 2) {
    for (int mosaic = 0; mosaic <= 1; mosaic++) {
      const CuconvRegions reg = { CUCONV_REGION_INSIDE, rects, 3, boxes,
        depth == 8 ? CUCONV_SHAPE_BOX : CUCONV_SHAPE_ELLIPSE,
        depth == 8 ? 0.0 : 5.0, mosaic ? sides : sigmas,
        mosaic ? make_mosaic : make_gaussian, NULL
      };
      CuconvFrame fr = { NULL, 0, CUCONV_MEMORY_CPU };
      CuconvStatus st = { 0 };
      Frame in, ref;

      frame_new (&in, 400, 300, depth == 8 ? 1 : 3, 2, depth, rand);
      fr.planes = in.p;
      fr.n_planes = in.n_planes;
      fr.regions = &reg;
      frame_other_dst (&in, &ref);
      fail_unless (cuconv_reference_frame_regions (ref.p, ref.n_planes, NULL,
              &reg) == 0);
      /* the frame's filter, which the regions' own replace */
      fr.filter = (CuconvFilter *) g_new0 (CuconvFilter, 1);
      fail_unless_equals_int (cuconv_engine_filter (e, &fr, &st), 0);
      fail_unless (max_diff (&in, &ref) <= (mosaic ? 0 : 1), "depth %d "
          "%s: %d from the reference", depth, mosaic ? "mosaics" :
          "sigmas", max_diff (&in, &ref));
      g_free ((gpointer) fr.filter);
      frame_free_dst (&ref);
      frame_free (&in);
    }
  }
  cuconv_engine_free (e);
  g_rand_free (rand);
}

GST_END_TEST;

/* The state of the temporal denoise: frame by frame as
 * cuconv_temporal_rows () defines it (_i 1: the compensated denoise,
 * cuconv_motion_search () and cuconv_temporal_rows_compensated (); 2:
 * the two modes in turn), the filter applied to it; afresh on the first
 * frame, on a restart, after a frame without the denoise and after the
 * CPU's memory was released. */
GST_START_TEST (test_engine_temporal)
{
  /* restart asked, denoise on, frame made afresh by the definition */
  static const struct
  {
    int restart, on, afresh;
  } steps[] = {
    {0, 1, 1}, {0, 1, 0}, {0, 1, 0}, {1, 1, 1}, {0, 1, 0}, {0, 0, 0},
    {0, 1, 1}, {0, 1, 0},
  };
  GRand *rand = g_rand_new_with_seed (SEED + 1);
  CuconvFilter *filter = g_new0 (CuconvFilter, 1);
  CuconvEngine *e = cuconv_engine_new ();
  uint8_t lut[CUCONV_TEMPORAL_LUT];
  CuconvMotionLayout l;
  CuconvSettings s;
  Frame state[2];
  void *scratch;

  settings_init (&s, CUCONV_KERNEL_GAUSSIAN, 2, 0);
  cuconv_filter_init (filter, &s);
  cuconv_temporal_lut (lut, 0.8, 40.0);
  {
    Frame shape;

    frame_new (&shape, 45, 23, 3, 2, 8, rand);
    frame_other_dst (&shape, &state[0]);
    frame_other_dst (&shape, &state[1]);
    frame_free (&shape);
  }
  cuconv_motion_layout (45, 23, &l);
  scratch = g_malloc (l.bytes);

  for (guint i = 0; i < 2 * G_N_ELEMENTS (steps); i++) {
    const guint n = i % G_N_ELEMENTS (steps);
    /* the second round: with and without the filter */
    const CuconvFilter *f = i < G_N_ELEMENTS (steps) ? filter : NULL;
    const int compensate = __i__ == 1 || (__i__ == 2 && i % 2 == 1);
    CuconvFrame fr = { NULL, 3, CUCONV_MEMORY_CPU };
    CuconvStatus st = { 0 };
    Frame in, ref;

    if (i == G_N_ELEMENTS (steps))
      cuconv_engine_release_cpu (e);
    frame_new (&in, 45, 23, 3, 2, 8, rand);
    fr.planes = in.p;
    fr.filter = steps[n].on ? f : filter;
    fr.temporal = steps[n].on ? lut : NULL;
    fr.temporal_restart = steps[n].restart;
    fr.temporal_compensate = compensate;
    fail_unless_equals_int (cuconv_engine_filter (e, &fr, &st), 0);

    /* the definition: the state (compensated: the new one beside the
     * previous, then in its place), then the filter from it */
    frame_other_dst (&in, &ref);
    if (steps[n].on) {
      const CuconvMotionVector *field = NULL;

      if (compensate && !steps[n].afresh) {
        CuconvPlane g = in.p[0];

        field = cuconv_motion_search (&g, 0, state[0].p[0].dst,
            state[0].p[0].dst_stride, scratch);
      }
      for (int p = 0; p < 3; p++) {
        CuconvPlane t = in.p[p];

        t.dst = state[compensate].p[p].dst;
        t.dst_stride = state[compensate].p[p].dst_stride;
        if (compensate)
          cuconv_temporal_rows_compensated (&t, state[0].p[p].dst,
              state[0].p[p].dst_stride, field, cuconv_motion_blocks (45),
              lut, steps[n].afresh, 0, t.height);
        else
          cuconv_temporal_rows (&t, lut, steps[n].afresh, 0, t.height);
        ref.p[p].src = t.dst;
      }
      if (compensate) {
        const Frame tmp = state[0];

        state[0] = state[1];
        state[1] = tmp;
      }
    }
    if (fr.filter)
      fail_unless (cuconv_reference_frame (ref.p, 3, filter) == 0);
    else
      for (int p = 0; p < 3; p++)
        memcpy (ref.p[p].dst, ref.p[p].src, ref.p[p].dst_stride *
            ref.p[p].height);
    fail_unless (max_diff (&in, &ref) <= (fr.filter ? 1 : 0),
        "frame %u: %d from the definition", i, max_diff (&in, &ref));
    frame_free_dst (&ref);
    frame_free (&in);
  }
  frame_free_dst (&state[0]);
  frame_free_dst (&state[1]);
  g_free (scratch);
  cuconv_engine_free (e);
  g_free (filter);
  g_rand_free (rand);
}

GST_END_TEST;

/* What the engine refuses, with a sentence: no planes or too many, a
 * frame with nothing to do, the GPU's memory before its side is open. */
GST_START_TEST (test_engine_refuses)
{
  GRand *rand = g_rand_new_with_seed (SEED + 2);
  CuconvFilter *filter = g_new0 (CuconvFilter, 1);
  CuconvEngine *e = cuconv_engine_new ();
  CuconvSettings s;
  Frame in;
  const struct
  {
    int n_planes;
    const CuconvFilter *filter;
    CuconvMemory memory;
  } cases[] = {
    {0, filter, CUCONV_MEMORY_CPU}, {CUCONV_MAX_PLANES + 1, filter,
        CUCONV_MEMORY_CPU}, {1, NULL, CUCONV_MEMORY_CPU},
    {1, filter, CUCONV_MEMORY_HOST}, {1, filter, CUCONV_MEMORY_PINNED},
    {1, filter, CUCONV_MEMORY_DEVICE},
  };

  settings_init (&s, CUCONV_KERNEL_BOX, 1, 0);
  cuconv_filter_init (filter, &s);
  frame_new (&in, 9, 5, 1, 1, 8, rand);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    CuconvFrame fr = { in.p, cases[c].n_planes, cases[c].memory };
    CuconvStatus st = { 0 };

    fr.filter = cases[c].filter;
    fail_if (cuconv_engine_filter (e, &fr, &st) == 0, "case %u taken", c);
    fail_unless (st.code != 0 && st.message[0] != '\0', "case %u", c);
  }
  frame_free (&in);
  cuconv_engine_free (e);
  g_free (filter);
  g_rand_free (rand);
}

GST_END_TEST;

/* The threads bands ran on, by kernel thread id. */
typedef struct
{
  GMutex lock;
  GHashTable *tids;
} Tids;

static gboolean
note_thread (guint band, gpointer data)
{
  Tids *t = data;

  g_mutex_lock (&t->lock);
  g_hash_table_add (t->tids, GINT_TO_POINTER ((gint) syscall (SYS_gettid)));
  g_mutex_unlock (&t->lock);
  return TRUE;
}

/* Band objects made and freed again and again, as a stream that stops
 * and starts makes them, run on the same few threads: the process's, a
 * processor's worth, and the callers'. */
GST_START_TEST (test_bands_threads_kept)
{
  Tids t;
  guint round;

  g_mutex_init (&t.lock);
  t.tids = g_hash_table_new (NULL, NULL);
  for (round = 0; round < 40; round++) {
    CuconvBands *b = cuconv_bands_new (6);

    fail_unless (cuconv_bands_run (b, note_thread, &t));
    cuconv_bands_free (b);
  }
  fail_unless (g_hash_table_size (t.tids) > 1, "one thread ran every band");
  fail_unless (g_hash_table_size (t.tids) <= g_get_num_processors () + 1,
      "%u threads ran the bands of 40 objects", g_hash_table_size (t.tids));
  g_hash_table_unref (t.tids);
  g_mutex_clear (&t.lock);
}

GST_END_TEST;

/* A child process made with fork () after bands ran has none of its
 * parent's threads: its bands still run.  It says so through a pipe and
 * ends at once, as a child of a multi-threaded process does: a leak check
 * (valgrind's) would count the parent's threads it never had. */
GST_START_TEST (test_bands_after_fork)
{
  Tids t;
  CuconvBands *b = cuconv_bands_new (4);
  int status = 0, waited = 0, fds[2];
  char said = 0;
  pid_t child;

  g_mutex_init (&t.lock);
  t.tids = g_hash_table_new (NULL, NULL);
  fail_unless (cuconv_bands_run (b, note_thread, &t));
  fail_unless (pipe (fds) == 0);
  child = fork ();
  fail_if (child < 0);
  if (child == 0) {
    CuconvBands *c = cuconv_bands_new (4);
    const char ok = cuconv_bands_run (c, note_thread, &t) ? 'y' : 'n';

    if (write (fds[1], &ok, 1) != 1)
      _exit (1);
    raise (SIGKILL);
  }
  close (fds[1]);
  while (waitpid (child, &status, WNOHANG) == 0 && waited++ < 1000)
    g_usleep (10000);
  if (waited > 1000) {
    kill (child, SIGKILL);
    waitpid (child, &status, 0);
  }
  fail_unless (read (fds[0], &said, 1) == 1 && said == 'y',
      "the child's bands never finished");
  close (fds[0]);
  cuconv_bands_free (b);
  g_hash_table_unref (t.tids);
  g_mutex_clear (&t.lock);
}

GST_END_TEST;

static Suite *
engine_suite (void)
{
  Suite *s = suite_create ("cuconv-engine");
  TCase *tc = tcase_create ("cpu");

  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_engine_filter_and_regions);
  tcase_add_test (tc, test_engine_relative);
  tcase_add_loop_test (tc, test_engine_temporal, 0, 3);
  tcase_add_test (tc, test_engine_refuses);
  tcase_add_test (tc, test_bands_threads_kept);
  tcase_add_test (tc, test_bands_after_fork);
  suite_add_tcase (s, tc);
  return s;
}

GST_CHECK_MAIN (engine);
