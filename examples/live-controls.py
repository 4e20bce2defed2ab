#!/usr/bin/env python3
# live-controls.py: change cudaconvolve's properties from a Python
# application while the pipeline plays (the same as live-controls.c).
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   - a GstController ramp: "radius" follows a line from 1 to 12 over the
#     clip, synchronised to each frame's timestamp by the element itself;
#   - a GLib timer: "kernel" switches every second;
#   - "active-backend" is read (and notified) to say whether the GPU or the
#     CPU filters.
#
# Needs PyGObject and GStreamer's typelibs (Debian: python3-gi,
# gir1.2-gstreamer-1.0).  Run, with the plugin built in build/:
#   GST_PLUGIN_PATH=build/gst python3 examples/live-controls.py [FRAMES]
# Exits 0 on EOS, 1 on an error or when something did not happen.

import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstController", "1.0")
from gi.repository import GLib, Gst, GstController  # noqa: E402

FRAMERATE = 30
KERNELS = ["gaussian", "box", "sharpen", "sobel"]


def main():
    Gst.init(None)
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 90
    if frames < 2:
        print(f"usage: {sys.argv[0]} [FRAMES (2 or more, default 90)]",
              file=sys.stderr)
        return 1

    # A bounded clip played in real time (sync=true), as a camera would
    # deliver it, so that the one-second timer fires while it plays.
    pipeline = Gst.parse_launch(
        f"videotestsrc num-buffers={frames} pattern=ball "
        f"! video/x-raw,format=I420,width=320,height=240,"
        f"framerate={FRAMERATE}/1 "
        "! cudaconvolve name=blur ! fakesink sync=true")
    blur = pipeline.get_by_name("blur")
    loop = GLib.MainLoop()
    state = {"failed": False, "kernel": 0, "radii": set()}

    # radius from 1 at the start to 12 at the end, linearly.  An absolute
    # binding takes the values as they are (a plain DirectControlBinding
    # maps 0..1 onto the property's range).
    ramp = GstController.InterpolationControlSource()
    ramp.props.mode = GstController.InterpolationMode.LINEAR
    ramp.set(0, 1.0)
    ramp.set((frames - 1) * Gst.SECOND // FRAMERATE, 12.0)
    blur.add_control_binding(
        GstController.DirectControlBinding.new_absolute(blur, "radius", ramp))

    # Emitted from the streaming thread when the element starts filtering.
    def on_active_backend(element, pspec):
        print(f"active-backend: {element.props.active_backend}", flush=True)

    blur.connect("notify::active-backend", on_active_backend)

    # Every second, from the main loop: the next kernel, from the next
    # frame on.  Enum properties take their nick as a string.
    def switch_kernel():
        state["kernel"] = (state["kernel"] + 1) % len(KERNELS)
        blur.set_property("kernel", KERNELS[state["kernel"]])
        radius = blur.props.radius         # moved by the controller
        state["radii"].add(radius)
        print(f"kernel -> {KERNELS[state['kernel']]} "
              f"(radius is now {radius})", flush=True)
        return GLib.SOURCE_CONTINUE

    def watchdog():
        print("no EOS after 30 s: giving up", file=sys.stderr)
        state["failed"] = True
        loop.quit()
        return GLib.SOURCE_REMOVE

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.EOS:
            print("EOS")
            loop.quit()
        elif msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            print(f"error from {msg.src.get_name()}: {err.message}\n{debug}",
                  file=sys.stderr)
            state["failed"] = True
            loop.quit()

    bus = pipeline.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    GLib.timeout_add(1000, switch_kernel)
    GLib.timeout_add_seconds(30, watchdog)

    pipeline.set_state(Gst.State.PLAYING)
    loop.run()
    pipeline.set_state(Gst.State.NULL)
    bus.remove_signal_watch()

    # A ramp that never moved the property means the controller is not
    # synchronised: say so rather than exit 0.
    if (not state["failed"] and frames >= 2 * FRAMERATE
            and len(state["radii"]) < 2):
        print(f"radius did not follow the ramp: {sorted(state['radii'])}",
              file=sys.stderr)
        state["failed"] = True
    return 1 if state["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
