/* gst-cudaconvolve: the GPU's temporal denoise (cuconv_temporal_device)
 * against its definition (cuconv_temporal_rows) over sequences of frames:
 * the state must be the same bit for bit after every frame, for every
 * depth, shift and packing, strengths and thresholds, COPY and FILL
 * components, with a reset (first frame) in the middle of a sequence.
 * The frames are a still picture with noise and a square that moves, so
 * that both the averaging and the motion cut-off are exercised.  Padding
 * of the state must stay untouched.  Then whole frames of 2, 3 and 5
 * planes in one call each, and the compensated denoise
 * (cuconv_temporal_compensated_device) against its definition over a
 * moving camera's frames.  Exits 77 without a usable device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuconv-cuda.h"
#include "cuconv-motion.h"

#define EXIT_SKIP 77
#define GUARD 0xA5
#define N_FRAMES 12
#define RESET_AT 7

typedef struct
{
  const char *name;
  int n_comp, depth, shift;
} Geometry;

static const Geometry geometries[] = {
  {"8-bit planar", 1, 8, 0}, {"8-bit UV", 2, 8, 0}, {"RGBA", 4, 8, 0},
  {"10-bit", 1, 10, 0}, {"12-bit", 1, 12, 0}, {"P010 UV", 2, 10, 6},
  {"16-bit", 1, 16, 0}, {"16-bit UV", 2, 16, 0},
};

static const int sizes[][2] = { {1, 1}, {3, 7}, {385, 289}, {1921, 1081} };
/* the compensated denoise: below a block, a level, and several levels */
static const int compensated_sizes[][2] = { {1, 1}, {3, 7}, {97, 61},
{385, 289}, {1921, 1081}
};

static const struct
{
  double strength, threshold;
} settings[] = { {0.9, 20.0}, {1.0, 255.0}, {0.5, 4.0}, {0.3, 1.0} };

static uint32_t rng;

static uint32_t
rnd (void)
{
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

/* Writes word k of a row of samples of bytes (1, or 2: little-endian). */
static void
put_word (uint8_t * row, int k, int bytes, uint32_t word)
{
  if (bytes == 1) {
    row[k] = (uint8_t) word;
  } else {
    row[2 * k] = (uint8_t) word;
    row[2 * k + 1] = (uint8_t) (word >> 8);
  }
}

/* Frame t: a ramp, noise of a few levels, a bright square moving 3
 * pixels a frame, and garbage in the bits outside each sample. */
static void
make_frame (uint8_t * buf, size_t stride, int w, int h, const Geometry * g,
    int t)
{
  const int bytes = g->depth > 8 ? 2 : 1;
  const uint32_t mask = (1u << g->depth) - 1;
  int x, y, c;

  for (y = 0; y < h; y++) {
    for (x = 0; x < w; x++) {
      for (c = 0; c < g->n_comp; c++) {
        const int i = x * g->n_comp + c;
        const int in_square = x >= 3 * t && x < 3 * t + 20 && y >= 5
            && y < 40;
        uint32_t v = ((uint32_t) (x + 2 * y + 40 * c) << (g->depth - 8))
            + (rnd () % 9 << (g->depth - 8)) + (in_square ? mask / 2 : 0);

        put_word (buf + y * stride, i, bytes, (v & mask) << g->shift |
            (rnd () & ~(mask << g->shift) & 0xffff));
      }
    }
  }
}

/* One sequence; returns the number of frames that differ. */
static int
run_case (const Geometry * g, int w, int h, int set, int ops,
    cudaStream_t stream)
{
  const int bytes = g->depth > 8 ? 2 : 1;
  const size_t wb = (size_t) w * g->n_comp * bytes, stride = wb + 9;
  const size_t size = stride * h;
  uint8_t *in = malloc (size), *state = malloc (size), *got = malloc (size);
  uint8_t *d_in = NULL, *d_state = NULL, k[CUCONV_TEMPORAL_LUT];
  CuconvPlane p, dp;
  CuconvStatus st;
  int t, c, failed = 0;
  size_t y, i;

  memset (&p, 0, sizeof (p));
  p.width = w;
  p.height = h;
  p.n_comp = g->n_comp;
  p.sub_x = p.sub_y = 1;
  p.depth = g->depth;
  p.shift = g->shift;
  p.src_stride = p.dst_stride = (ptrdiff_t) stride;
  for (c = 0; c < g->n_comp; c++)
    p.op[c] = g->n_comp > 1 && (ops + c) % 3 == 1 ? CUCONV_COMP_COPY :
        g->n_comp > 1 && (ops + c) % 3 == 2 ? CUCONV_COMP_FILL :
        CUCONV_COMP_FILTER;
  cuconv_temporal_lut (k, settings[set].strength, settings[set].threshold);

  if (!in || !state || !got || cudaMalloc ((void **) &d_in, size) !=
      cudaSuccess || cudaMalloc ((void **) &d_state, size) != cudaSuccess
      || cudaMemset (d_state, GUARD, size) != cudaSuccess) {
    printf ("ERROR: out of memory for %dx%d\n", w, h);
    exit (1);
  }
  memset (state, GUARD, size);
  p.src = in;
  p.dst = state;
  dp = p;
  dp.src = d_in;
  dp.dst = d_state;

  for (t = 0; t < N_FRAMES && !failed; t++) {
    const int first = t == 0 || t == RESET_AT;

    make_frame (in, stride, w, h, g, t);
    cuconv_temporal_rows (&p, k, first, 0, h);
    if (cudaMemcpyAsync (d_in, in, size, cudaMemcpyHostToDevice, stream)
        != cudaSuccess
        || cuconv_temporal_device (&dp, 1, k, first, stream, &st) != 0
        || cudaMemcpyAsync (got, d_state, size, cudaMemcpyDeviceToHost,
            stream) != cudaSuccess
        || cudaStreamSynchronize (stream) != cudaSuccess) {
      printf ("ERROR: CUDA failed on %s %dx%d frame %d: %s\n", g->name, w, h,
          t, cudaGetErrorString (cudaGetLastError ()));
      exit (1);
    }
    for (y = 0; y < (size_t) h && !failed; y++) {
      for (i = 0; i < stride; i++) {
        const size_t at = y * stride + i;
        const uint8_t want = i < wb ? state[at] : GUARD;

        if (got[at] != want) {
          printf ("FAIL: %s %dx%d strength %g threshold %g ops %d frame %d%s: "
              "byte %zu of row %zu is 0x%02x, the definition's 0x%02x%s\n",
              g->name, w, h, settings[set].strength, settings[set].threshold,
              ops, t, first ? " (first)" : "", i, y, got[at], want,
              i < wb ? "" : " (padding written)");
          failed = 1;
          break;
        }
      }
    }
  }
  cudaFree (d_in);
  cudaFree (d_state);
  free (in);
  free (state);
  free (got);
  return failed;
}

/* A whole frame in one call: planes of different geometries (luma, and
 * chroma planar or interleaved, 8 or 16 bit, five planes at most so that
 * a frame takes more than one launch), rows 256-byte aligned as the
 * element's buffers are, each plane checked against its definition.
 * Returns the number of frames that differ. */
static int
run_frame (int w, int h, int n_planes, int interleaved, const Geometry * g,
    cudaStream_t stream)
{
  const int bytes = g->depth > 8 ? 2 : 1;
  CuconvPlane p[5], dp[5];
  uint8_t *in[5], *state[5], *got[5], *d_in[5], *d_state[5];
  uint8_t k[CUCONV_TEMPORAL_LUT];
  size_t size[5];
  CuconvStatus st;
  int n, t, failed = 0;

  cuconv_temporal_lut (k, 0.9, 30.0);
  memset (p, 0, sizeof (p));
  for (n = 0; n < n_planes; n++) {
    const int nc = n > 0 && interleaved ? 2 : 1;
    const int pw = n == 0 ? w : (w + 1) / 2, ph = n == 0 ? h : (h + 1) / 2;
    const size_t stride = ((size_t) pw * nc * bytes + 255) / 256 * 256;

    p[n].width = pw;
    p[n].height = ph;
    p[n].n_comp = nc;
    p[n].sub_x = p[n].sub_y = 1;
    p[n].depth = g->depth;
    p[n].shift = g->shift;
    p[n].src_stride = p[n].dst_stride = (ptrdiff_t) stride;
    size[n] = stride * ph;
    in[n] = malloc (size[n]);
    state[n] = malloc (size[n]);
    got[n] = malloc (size[n]);
    if (!in[n] || !state[n] || !got[n] || cudaMalloc ((void **) &d_in[n],
            size[n]) != cudaSuccess || cudaMalloc ((void **) &d_state[n],
            size[n]) != cudaSuccess) {
      printf ("ERROR: out of memory for a %dx%d frame\n", w, h);
      exit (1);
    }
    memset (in[n], 0, size[n]);
    memset (state[n], GUARD, size[n]);
    cudaMemset (d_state[n], GUARD, size[n]);
    p[n].src = in[n];
    p[n].dst = state[n];
    dp[n] = p[n];
    dp[n].src = d_in[n];
    dp[n].dst = d_state[n];
  }

  for (t = 0; t < N_FRAMES && !failed; t++) {
    const int first = t == 0 || t == RESET_AT;
    Geometry pg = *g;

    for (n = 0; n < n_planes; n++) {
      pg.n_comp = p[n].n_comp;
      make_frame (in[n], (size_t) p[n].src_stride, p[n].width, p[n].height,
          &pg, t + n);
      cuconv_temporal_rows (&p[n], k, first, 0, p[n].height);
      if (cudaMemcpyAsync (d_in[n], in[n], size[n], cudaMemcpyHostToDevice,
              stream) != cudaSuccess) {
        printf ("ERROR: CUDA failed: %s\n",
            cudaGetErrorString (cudaGetLastError ()));
        exit (1);
      }
    }
    if (cuconv_temporal_device (dp, n_planes, k, first, stream, &st) != 0) {
      printf ("ERROR: %s\n", st.message);
      exit (1);
    }
    for (n = 0; n < n_planes; n++)
      if (cudaMemcpyAsync (got[n], d_state[n], size[n],
              cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
          cudaStreamSynchronize (stream) != cudaSuccess) {
        printf ("ERROR: CUDA failed: %s\n",
            cudaGetErrorString (cudaGetLastError ()));
        exit (1);
      }
    for (n = 0; n < n_planes && !failed; n++) {
      if (memcmp (got[n], state[n], size[n]) != 0) {
        printf ("FAIL: %s %dx%d frame of %d planes%s, frame %d: plane %d "
            "differs from the definition\n", g->name, w, h, n_planes,
            interleaved ? " (interleaved chroma)" : "", t, n);
        failed = 1;
      }
    }
  }
  for (n = 0; n < n_planes; n++) {
    cudaFree (d_in[n]);
    cudaFree (d_state[n]);
    free (in[n]);
    free (state[n]);
    free (got[n]);
  }
  return failed;
}

/* Frame t of a camera moving over a texture: sample (x, y) of a plane
 * subsampled by s shows the texture at (x s + 1.75 t, y s - 2.5 t) (so
 * that every motion has a fraction), with noise and garbage outside the
 * sample's bits. */
static void
make_moving (uint8_t * buf, size_t stride, const CuconvPlane * p, int t)
{
  const int bytes = p->depth > 8 ? 2 : 1;
  const uint32_t mask = (1u << p->depth) - 1;

  for (int y = 0; y < p->height; y++)
    for (int x = 0; x < p->width; x++)
      for (int c = 0; c < p->n_comp; c++) {
        const int i = x * p->n_comp + c;
        const int u = (x * p->sub_x * 4 + 7 * t) / 4;
        const int v = (y * p->sub_y * 2 - 5 * t) / 2;
        uint32_t val = (uint32_t) (((u * 7) ^ (v * 13)) % 97 + ((u / 9 + v /
                    7) % 2) * 80 + 30 * c + rnd () % 5) % 256;

        put_word (buf + y * stride, i, bytes, ((val << (p->depth - 8)) &
                mask) << p->shift | (rnd () & ~(mask << p->shift) & 0xffff));
      }
}

/* The compensated denoise (cuconv_temporal_compensated_device) against
 * its definition (cuconv_motion_search, cuconv_temporal_rows_compensated)
 * over a sequence with a reset: the vectors and each new state the same
 * bit for bit, every frame.  Luma of geometry g (component guide guiding)
 * and, with chroma, a plane of interleaved pairs subsampled 2x2.  Returns
 * 1 when they differ. */
static int
run_compensated (int w, int h, const Geometry * g, int guide, int chroma,
    cudaStream_t stream)
{
  const int n_planes = chroma ? 2 : 1;
  CuconvPlane p[2], dp[2];
  uint8_t *in[2], *state[2][2], *got[2], *d_in[2], *d_state[2][2];
  const uint8_t *prev[2];
  ptrdiff_t prev_stride[2];
  uint8_t *scratch, *d_scratch, *field, k[CUCONV_TEMPORAL_LUT];
  size_t size[2], field_bytes;
  CuconvMotionLayout l;
  CuconvStatus st;
  int n, t, failed = 0;

  cuconv_temporal_lut (k, 0.9, 60.0);
  memset (p, 0, sizeof (p));
  for (n = 0; n < n_planes; n++) {
    const int bytes = g->depth > 8 ? 2 : 1;

    p[n].n_comp = n == 0 ? g->n_comp : 2;
    p[n].sub_x = p[n].sub_y = n == 0 ? 1 : 2;
    p[n].width = n == 0 ? w : (w + 1) / 2;
    p[n].height = n == 0 ? h : (h + 1) / 2;
    p[n].depth = g->depth;
    p[n].shift = g->shift;
    p[n].src_stride = p[n].dst_stride =
        (ptrdiff_t) ((size_t) p[n].width * p[n].n_comp * bytes + 3);
    for (int c = 0; c < p[n].n_comp; c++)
      p[n].op[c] = n == 0 && c == 3 ? CUCONV_COMP_COPY : CUCONV_COMP_FILTER;
    size[n] = (size_t) p[n].src_stride * p[n].height;
    in[n] = malloc (size[n]);
    got[n] = malloc (size[n]);
    state[n][0] = calloc (1, size[n]);
    state[n][1] = calloc (1, size[n]);
    if (!in[n] || !got[n] || !state[n][0] || !state[n][1] ||
        cudaMalloc ((void **) &d_in[n], size[n]) != cudaSuccess ||
        cudaMalloc ((void **) &d_state[n][0], size[n]) != cudaSuccess ||
        cudaMalloc ((void **) &d_state[n][1], size[n]) != cudaSuccess ||
        cudaMemset (d_state[n][0], 0, size[n]) != cudaSuccess ||
        cudaMemset (d_state[n][1], 0, size[n]) != cudaSuccess) {
      printf ("ERROR: out of memory for a %dx%d frame\n", w, h);
      exit (1);
    }
  }
  cuconv_motion_layout (w, h, &l);
  field_bytes = l.a[0] - l.field[0];
  scratch = malloc (l.bytes);
  field = malloc (field_bytes);
  if (!scratch || !field || cudaMalloc ((void **) &d_scratch, l.bytes) !=
      cudaSuccess) {
    printf ("ERROR: out of memory for a %dx%d frame\n", w, h);
    exit (1);
  }

  for (t = 0; t < N_FRAMES && !failed; t++) {
    const int first = t == 0 || t == RESET_AT, cur = t % 2, old = 1 - cur;
    const CuconvMotionVector *want = NULL;

    for (n = 0; n < n_planes; n++) {
      make_moving (in[n], (size_t) p[n].src_stride, &p[n], t);
      p[n].src = in[n];
      p[n].dst = state[n][cur];
      dp[n] = p[n];
      dp[n].src = d_in[n];
      dp[n].dst = d_state[n][cur];
      prev[n] = d_state[n][old];
      prev_stride[n] = p[n].src_stride;
      cudaMemcpyAsync (d_in[n], in[n], size[n], cudaMemcpyHostToDevice,
          stream);
    }
    if (!first)
      want = cuconv_motion_search (&p[0], guide, state[0][old],
          p[0].src_stride, scratch);
    for (n = 0; n < n_planes; n++)
      cuconv_temporal_rows_compensated (&p[n], state[n][old],
          p[n].src_stride, want, cuconv_motion_blocks (w), k, first, 0,
          p[n].height);
    if (cuconv_temporal_compensated_device (dp, n_planes, prev, prev_stride,
            guide, d_scratch, k, first, stream, &st) != 0) {
      printf ("ERROR: %s\n", st.message);
      exit (1);
    }
    for (n = 0; n < n_planes; n++)
      cudaMemcpyAsync (got[n], d_state[n][cur], size[n],
          cudaMemcpyDeviceToHost, stream);
    cudaMemcpyAsync (field, d_scratch + l.field[0], field_bytes,
        cudaMemcpyDeviceToHost, stream);
    if (cudaStreamSynchronize (stream) != cudaSuccess) {
      printf ("ERROR: CUDA failed: %s\n",
          cudaGetErrorString (cudaGetLastError ()));
      exit (1);
    }
    if (want && memcmp (field, want, field_bytes) != 0) {
      printf ("FAIL: compensated %s %dx%d%s frame %d: the vectors differ "
          "from the definition's\n", g->name, w, h, chroma ? " + chroma" : "",
          t);
      failed = 1;
    }
    for (n = 0; n < n_planes && !failed; n++) {
      for (int y = 0; y < p[n].height && !failed; y++) {
        const size_t row = (size_t) y * p[n].src_stride;
        const size_t wb = (size_t) p[n].width * p[n].n_comp *
            (g->depth > 8 ? 2 : 1);

        if (memcmp (got[n] + row, state[n][cur] + row, wb) != 0) {
          printf ("FAIL: compensated %s %dx%d%s frame %d%s: row %d of "
              "plane %d differs from the definition\n", g->name, w, h,
              chroma ? " + chroma" : "", t, first ? " (first)" : "", y, n);
          failed = 1;
        }
      }
    }
  }
  for (n = 0; n < n_planes; n++) {
    cudaFree (d_in[n]);
    cudaFree (d_state[n][0]);
    cudaFree (d_state[n][1]);
    free (in[n]);
    free (got[n]);
    free (state[n][0]);
    free (state[n][1]);
  }
  cudaFree (d_scratch);
  free (scratch);
  free (field);
  return failed;
}

int
main (void)
{
  cudaStream_t stream;
  int g, z, s, cases = 0, failed = 0;

  setvbuf (stdout, NULL, _IOLBF, 0);
  if (cuconv_device_count () == 0) {
    printf ("SKIP: no usable CUDA device\n");
    return EXIT_SKIP;
  }
  if (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking) !=
      cudaSuccess) {
    printf ("ERROR: CUDA device 0 is not usable: %s\n",
        cudaGetErrorString (cudaGetLastError ()));
    return 1;
  }
  rng = 12345;
  for (g = 0; g < (int) (sizeof (geometries) / sizeof (geometries[0])); g++)
    for (z = 0; z < (int) (sizeof (sizes) / sizeof (sizes[0])); z++)
      for (s = 0; s < (int) (sizeof (settings) / sizeof (settings[0])); s++) {
        failed += run_case (&geometries[g], sizes[z][0], sizes[z][1], s,
            g + z + s, stream);
        cases++;
      }
  {
    static const struct
    {
      int w, h, planes, interleaved, geometry;
    } frames[] = {
      {1920, 1080, 2, 1, 0}, {1921, 1081, 3, 0, 0}, {385, 289, 2, 1, 5},
      {1921, 1081, 3, 0, 3}, {97, 31, 5, 0, 0},
    };

    for (z = 0; z < (int) (sizeof (frames) / sizeof (frames[0])); z++) {
      failed += run_frame (frames[z].w, frames[z].h, frames[z].planes,
          frames[z].interleaved, &geometries[frames[z].geometry], stream);
      cases++;
    }
  }
  for (g = 0; g < (int) (sizeof (geometries) / sizeof (geometries[0])); g++)
    for (z = 0; z < (int) (sizeof (compensated_sizes) /
            sizeof (compensated_sizes[0])); z++) {
      failed += run_compensated (compensated_sizes[z][0],
          compensated_sizes[z][1], &geometries[g],
          geometries[g].n_comp == 4 ? 1 : 0, geometries[g].n_comp == 1,
          stream);
      cases++;
    }
  printf ("test-gpu-temporal: %d of %d sequences of %d frames differ from "
      "the definition\n", failed, cases, N_FRAMES);
  cudaStreamDestroy (stream);
  return failed ? 1 : 0;
}
