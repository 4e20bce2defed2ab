/* live-controls: change cudaconvolve's properties from an application
 * while the pipeline plays.
 *
 * Copyright (C) 2024 gst-cudaconvolve authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Three ways an application drives the element:
 *   - a GstController ramp: "radius" follows a line from 1 to 12 over the
 *     clip, synchronised to each frame's timestamp by the element itself;
 *   - plain g_object_set from the main loop: "kernel" switches every
 *     second (gaussian, box, sharpen, sobel, then around again);
 *   - reading: "active-backend" says whether the GPU or the CPU filters
 *     (notified when it changes, so we print it as soon as it is known).
 *
 * Build and run (from the build directory):
 *   GST_PLUGIN_PATH=$PWD/gst ./examples/live-controls [FRAMES]
 * Exits 0 on EOS, 1 on an error or when something did not happen.
 */

#include <stdlib.h>

#include <gst/gst.h>
#include <gst/controller/controller.h>

#define FRAMERATE 30

/* Everything the callbacks share. */
typedef struct
{
  GMainLoop *loop;
  GstElement *pipeline;
  GstElement *blur;
  guint kernel_index;
  guint radius_min, radius_max;
  gboolean failed;
} App;

/* The kernels the timer cycles through, by their gst-inspect nicks. */
static const gchar *kernels[] = { "gaussian", "box", "sharpen", "sobel" };

/* notify::active-backend is emitted from the streaming thread when the
 * element starts filtering; printing from there is fine. */
static void
on_active_backend (GObject * blur, GParamSpec * pspec, gpointer user_data)
{
  gchar *backend;

  g_object_get (blur, "active-backend", &backend, NULL);
  g_print ("active-backend: %s\n", backend);
  g_free (backend);
}

/* Every second, from the main loop: switch the kernel.  The element takes
 * the new value from the next frame on. */
static gboolean
switch_kernel (gpointer user_data)
{
  App *app = user_data;
  guint radius;

  app->kernel_index = (app->kernel_index + 1) % G_N_ELEMENTS (kernels);
  /* The enum's nick is the easiest way to set it from C, as gst-launch
   * does; g_object_set with the enum's integer value works too. */
  gst_util_set_object_arg (G_OBJECT (app->blur), "kernel",
      kernels[app->kernel_index]);

  /* The controller has been moving radius meanwhile. */
  g_object_get (app->blur, "radius", &radius, NULL);
  app->radius_min = MIN (app->radius_min, radius);
  app->radius_max = MAX (app->radius_max, radius);
  g_print ("kernel -> %s (radius is now %u)\n", kernels[app->kernel_index],
      radius);
  return G_SOURCE_CONTINUE;
}

/* A stuck pipeline must not hang the test suite. */
static gboolean
watchdog (gpointer user_data)
{
  App *app = user_data;

  g_printerr ("no EOS after 30 s: giving up\n");
  app->failed = TRUE;
  g_main_loop_quit (app->loop);
  return G_SOURCE_REMOVE;
}

static gboolean
on_bus_message (GstBus * bus, GstMessage * msg, gpointer user_data)
{
  App *app = user_data;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_EOS:
      g_print ("EOS\n");
      g_main_loop_quit (app->loop);
      break;
    case GST_MESSAGE_ERROR:{
      GError *err;
      gchar *debug;

      gst_message_parse_error (msg, &err, &debug);
      g_printerr ("error from %s: %s\n%s\n", GST_OBJECT_NAME (msg->src),
          err->message, debug ? debug : "");
      g_clear_error (&err);
      g_free (debug);
      app->failed = TRUE;
      g_main_loop_quit (app->loop);
      break;
    }
    default:
      break;
  }
  return TRUE;
}

/* radius goes from 1 at the start to 12 at the end of the clip, linearly.
 * An absolute binding uses the values as they are (a plain
 * gst_direct_control_binding_new maps 0..1 onto the property's range). */
static void
add_radius_ramp (GstElement * blur, GstClockTime duration)
{
  GstControlSource *ramp = gst_interpolation_control_source_new ();

  g_object_set (ramp, "mode", GST_INTERPOLATION_MODE_LINEAR, NULL);
  gst_timed_value_control_source_set (GST_TIMED_VALUE_CONTROL_SOURCE (ramp),
      0, 1.0);
  gst_timed_value_control_source_set (GST_TIMED_VALUE_CONTROL_SOURCE (ramp),
      duration, 12.0);
  gst_object_add_control_binding (GST_OBJECT (blur),
      gst_direct_control_binding_new_absolute (GST_OBJECT (blur), "radius",
          ramp));
  gst_object_unref (ramp);
}

int
main (int argc, char **argv)
{
  App app = { 0 };
  GError *error = NULL;
  GstBus *bus;
  gchar *desc;
  guint frames = 90, watch_id;
  gint status;

  gst_init (&argc, &argv);
  if (argc > 1)
    frames = (guint) g_ascii_strtoull (argv[1], NULL, 10);
  if (frames < 2) {
    g_printerr ("usage: %s [FRAMES (2 or more, default 90)]\n", argv[0]);
    return 1;
  }

  /* A bounded clip played in real time (sync=true), as a camera would
   * deliver it, so that the one-second timer fires while it plays. */
  desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball "
      "! video/x-raw,format=I420,width=320,height=240,framerate=%d/1 "
      "! cudaconvolve name=blur ! fakesink sync=true", frames, FRAMERATE);
  app.pipeline = gst_parse_launch (desc, &error);
  g_free (desc);
  if (!app.pipeline) {
    g_printerr ("could not build the pipeline: %s\n", error->message);
    g_clear_error (&error);
    return 1;
  }
  app.blur = gst_bin_get_by_name (GST_BIN (app.pipeline), "blur");
  app.loop = g_main_loop_new (NULL, FALSE);
  app.radius_min = G_MAXUINT;

  add_radius_ramp (app.blur, gst_util_uint64_scale (frames - 1, GST_SECOND,
          FRAMERATE));
  g_signal_connect (app.blur, "notify::active-backend",
      G_CALLBACK (on_active_backend), NULL);

  bus = gst_element_get_bus (app.pipeline);
  watch_id = gst_bus_add_watch (bus, on_bus_message, &app);
  gst_object_unref (bus);
  g_timeout_add (1000, switch_kernel, &app);
  g_timeout_add_seconds (30, watchdog, &app);

  gst_element_set_state (app.pipeline, GST_STATE_PLAYING);
  g_main_loop_run (app.loop);
  gst_element_set_state (app.pipeline, GST_STATE_NULL);

  /* A ramp that never moved the property means the controller is not
   * synchronised: say so rather than exit 0. */
  if (!app.failed && frames >= 2 * FRAMERATE &&
      app.radius_min >= app.radius_max) {
    g_printerr ("radius did not follow the ramp (stayed at %u)\n",
        app.radius_min);
    app.failed = TRUE;
  }
  status = app.failed ? EXIT_FAILURE : EXIT_SUCCESS;

  g_source_remove (watch_id);
  g_main_loop_unref (app.loop);
  gst_object_unref (app.blur);
  gst_object_unref (app.pipeline);
  return status;
}
