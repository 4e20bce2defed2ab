/* gst-cudaconvolve: what the fuzzers share (tests/fuzz/README.md).
 *
 * Each fuzzer reads its input as a little program: bytes taken one value
 * at a time, from the front, 0 once it is used up, so that every input
 * means something and a small change to it a small change to the run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __FUZZ_COMMON_H__
#define __FUZZ_COMMON_H__

#include <gst/gst.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

typedef struct
{
  const guint8 *data;
  gsize size;
} FuzzInput;

/* Whether any byte is left. */
gboolean fuzz_more (const FuzzInput * in);

guint8 fuzz_u8 (FuzzInput * in);
guint32 fuzz_u32 (FuzzInput * in);
guint64 fuzz_u64 (FuzzInput * in);

/* A number below n (n > 0). */
guint fuzz_below (FuzzInput * in, guint n);

/* A double from a small table of edge values (0, tiny, huge, infinite,
 * NaN, negative), a small integer, or 8 bytes of bits. */
gdouble fuzz_double (FuzzInput * in);

/* A string of up to max bytes (a length byte, then the bytes; a NUL ends
 * it early).  Free it. */
gchar *fuzz_string (FuzzInput * in, guint max);

/* One of the formats the element takes, and a size of up to max_w x
 * max_h (at least 1x1). */
void fuzz_video_info (FuzzInput * in, GstVideoInfo * info, guint max_w,
    guint max_h);

/* A memory of size (> 0) bytes for the element's input, filled from the
 * input (zeros once it is used up): system memory, or with
 * CUCONV_FUZZ_MEMORY=cuda CUDA memory of the context the element was
 * given. */
GstMemory *fuzz_memory_new (FuzzInput * in, gsize size);
/* A frame of info, its bytes from the input (then zeros): info's default
 * layout in system memory; in CUDA memory the allocator's, with a video
 * meta that says so. */
GstBuffer *fuzz_frame (FuzzInput * in, const GstVideoInfo * info);

/* Sets a writable property of e chosen by the input to a value the input
 * makes: a string deserialised as gst-launch-1.0 would, or a value of the
 * property's type (arrays nested up to two deep, of numbers, strings and
 * arrays), brought into the property's range as GObject requires. */
void fuzz_set_property (FuzzInput * in, GstElement * e);

/* A harness around a new cudaconvolve, *e, on the backend of
 * CUCONV_FUZZ_BACKEND (cpu unless set), in system memory or with
 * CUCONV_FUZZ_MEMORY=cuda in CUDA memory, with a bus of its own that
 * fuzz_harness_free () empties (messages never reach stderr), its caps
 * from the input (fuzz_video_info () up to max_w x max_h, in *info). */
GstHarness *fuzz_harness_new (FuzzInput * in, guint max_w, guint max_h,
    GstElement ** e, GstVideoInfo * info);
void fuzz_harness_free (GstHarness * h, GstElement * e);

/* Pushes buf and takes whatever came out. */
void fuzz_push (GstHarness * h, GstBuffer * buf);

/* libFuzzer's, once before the first input (fuzz-common.c has it for
 * every fuzzer): GStreamer with this build's plugin (from
 * GST_PLUGIN_PATH), the registry in-process, criticals fatal; with
 * CUCONV_FUZZ_MEMORY=cuda a CUDA context on device 0 (exits 77 without
 * one). */
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* Each fuzzer's: one input. */
int LLVMFuzzerTestOneInput (const guint8 * data, gsize size);

G_END_DECLS
#endif /* __FUZZ_COMMON_H__ */
