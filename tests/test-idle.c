/* gst-cudaconvolve: the idle watch of the frame in flight
 * (gst/gstcudavideofilteridle.c), on the CPU.  An arm left alone runs out
 * after the timeout and calls func once, with its serial; a disarm in
 * time never lets it; arms and disarms back to back, as the streaming
 * thread makes them a frame apart, never call func and do not wake the
 * watch's thread for every frame.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include <gst/check/gstcheck.h>

#include "gstcudavideofilteridle.h"

/* Long, so that a loaded machine's stalls between an arm and a disarm stay
 * under it: the element's is 1 ms. */
#define TIMEOUT_US 50000

typedef struct
{
  GMutex lock;
  GCond cond;
  guint calls;
  guint serial;                 /* of the last call */
  gint64 at;                    /* g_get_monotonic_time () of the last call */
} Calls;

static Calls calls;

static void
on_idle (gpointer data, guint serial)
{
  Calls *c = data;

  g_mutex_lock (&c->lock);
  c->calls++;
  c->serial = serial;
  c->at = g_get_monotonic_time ();
  g_cond_broadcast (&c->cond);
  g_mutex_unlock (&c->lock);
}

static GstCudaVideoFilterIdle *
watch_new (void)
{
  memset (&calls, 0, sizeof (calls));
  g_mutex_init (&calls.lock);
  g_cond_init (&calls.cond);
  return gst_cuda_video_filter_idle_new ("idle-under-test", on_idle, &calls,
      TIMEOUT_US);
}

static void
watch_free (GstCudaVideoFilterIdle * idle)
{
  gst_cuda_video_filter_idle_free (idle);
  g_mutex_clear (&calls.lock);
  g_cond_clear (&calls.cond);
}

/* The calls so far, once there are n or us have passed. */
static guint
wait_calls (guint n, gint64 us)
{
  const gint64 end = g_get_monotonic_time () + us;
  guint got;

  g_mutex_lock (&calls.lock);
  while (calls.calls < n && g_cond_wait_until (&calls.cond, &calls.lock,
          end));
  got = calls.calls;
  g_mutex_unlock (&calls.lock);
  return got;
}

/* Busy for us, as the streaming thread is between an arm and a disarm. */
static void
spin (gint64 us)
{
  const gint64 end = g_get_monotonic_time () + us;

  while (g_get_monotonic_time () < end);
}

GST_START_TEST (test_runs_out)
{
  GstCudaVideoFilterIdle *idle = watch_new ();
  gint64 armed;

  armed = g_get_monotonic_time ();
  gst_cuda_video_filter_idle_arm (idle);
  fail_unless_equals_int (wait_calls (1, 100 * TIMEOUT_US), 1);
  fail_unless (calls.at - armed >= TIMEOUT_US, "called %" G_GINT64_FORMAT
      " us after the arm", calls.at - armed);
  fail_unless (gst_cuda_video_filter_idle_is_current (idle, calls.serial));
  /* once */
  fail_unless_equals_int (wait_calls (2, 3 * TIMEOUT_US), 1);

  /* a later arm runs out in its turn; a disarm makes its serial stale */
  gst_cuda_video_filter_idle_arm (idle);
  fail_unless_equals_int (wait_calls (2, 100 * TIMEOUT_US), 2);
  gst_cuda_video_filter_idle_disarm (idle);
  fail_if (gst_cuda_video_filter_idle_is_current (idle, calls.serial));
  watch_free (idle);
}

GST_END_TEST;

GST_START_TEST (test_disarm_in_time)
{
  GstCudaVideoFilterIdle *idle = watch_new ();

  gst_cuda_video_filter_idle_arm (idle);
  spin (TIMEOUT_US / 20);
  gst_cuda_video_filter_idle_disarm (idle);
  fail_unless_equals_int (wait_calls (1, 3 * TIMEOUT_US), 0);

  /* stopped armed: nothing comes, and the next arm starts the thread
   * again */
  gst_cuda_video_filter_idle_arm (idle);
  gst_cuda_video_filter_idle_stop (idle);
  fail_unless_equals_int (wait_calls (1, 3 * TIMEOUT_US), 0);
  gst_cuda_video_filter_idle_arm (idle);
  fail_unless_equals_int (wait_calls (1, 100 * TIMEOUT_US), 1);
  watch_free (idle);
}

GST_END_TEST;

/* 20000 frames 15 us apart (six timeouts), each armed and at once
 * disarmed (the streaming thread gone downstream and back) and then busy
 * (the frame's work): the watch's thread may wake about once a timeout,
 * not once a frame.  When a disarm cleared the deadline it woke for 80 to
 * 99% of the frames on an H200 host, and 255 to 1075 times here in five
 * runs on two cores (6 or 7 now). */
GST_START_TEST (test_back_to_back)
{
  GstCudaVideoFilterIdle *idle = watch_new ();
  const guint frames = 20000;
  guint before, wakes, i;
  gint64 t0, ms;

  /* the thread from the first arm, asleep once it has run out */
  gst_cuda_video_filter_idle_arm (idle);
  fail_unless_equals_int (wait_calls (1, 100 * TIMEOUT_US), 1);
  spin (TIMEOUT_US / 10);
  before = gst_cuda_video_filter_idle_wakes (idle);

  t0 = g_get_monotonic_time ();
  for (i = 0; i < frames; i++) {
    gst_cuda_video_filter_idle_arm (idle);
    gst_cuda_video_filter_idle_disarm (idle);
    spin (15);
  }
  ms = (g_get_monotonic_time () - t0) / 1000;
  wakes = gst_cuda_video_filter_idle_wakes (idle) - before;

  GST_INFO ("%u frames in %" G_GINT64_FORMAT " ms: %u wakes", frames, ms,
      wakes);
  fail_unless (wakes <= 4 + 2 * ms * 1000 / TIMEOUT_US, "the watch's "
      "thread woke %u times for %u frames in %" G_GINT64_FORMAT " ms", wakes,
      frames, ms);
  fail_unless_equals_int (wait_calls (2, 3 * TIMEOUT_US), 1);
  watch_free (idle);
}

GST_END_TEST;

static Suite *
idle_suite (void)
{
  Suite *s = suite_create ("idle");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_runs_out);
  tcase_add_test (tc, test_disarm_in_time);
  tcase_add_test (tc, test_back_to_back);
  return s;
}

GST_CHECK_MAIN (idle);
