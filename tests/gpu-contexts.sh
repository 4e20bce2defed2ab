#!/usr/bin/env bash
# gst-cudaconvolve: how much GPU memory a pipeline's process holds, with
# and without cudaconvolve.  A CUDA context costs a few hundred MiB of
# device memory, so a second context per device shows as a jump of that
# size; one context shows as the element's frame buffers alone.  Run on
# the GPU host with GStreamer's environment set (. .gpu-host/env.sh):
#
#   tests/gpu-contexts.sh PLUGIN_DIR [LABEL]
#
# PLUGIN_DIR holds libgstcudaconvolve.so (e.g. build/gst).  Prints a
# Markdown table: pipeline, MiB the process holds on the GPU, MiB above
# the same pipeline without cudaconvolve.
set -uo pipefail

dir=$(cd "${1:?usage: $0 PLUGIN_DIR [LABEL]}" && pwd)
label=${2:-$dir}
SRC="videotestsrc is-live=true num-buffers=120 \
  ! video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1"
CUDA_IN="cudaupload ! video/x-raw(memory:CUDAMemory)"

# The process's GPU memory (MiB) two seconds into the pipeline: its own
# row of nvidia-smi's compute apps, or the whole GPU's use less the idle
# figure where the host shows no per-process rows.
measure () {
  local pid mem idle

  idle=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits |
    head -1)
  # shellcheck disable=SC2086,SC2068
  GST_PLUGIN_PATH=$dir GST_REGISTRY=/tmp/gpu-contexts-$$.bin \
    gst-launch-1.0 -q $@ >/dev/null 2>&1 &
  pid=$!
  sleep 2
  nvidia-smi --query-compute-apps=pid,process_name,used_memory \
    --format=csv,noheader >&2
  mem=$(nvidia-smi --query-compute-apps=pid,used_memory \
    --format=csv,noheader,nounits | awk -F', *' -v p="$pid" '$1 == p { print $2 }')
  if [ -z "$mem" ]; then
    mem=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits |
      head -1)
    mem=$((mem - idle))
  fi
  wait "$pid" || mem="failed"
  echo "$mem"
}

# a - b, or "—" when either failed
minus () {
  case "$1$2" in *[!0-9-]*|"") echo "—" ;; *) echo $(($1 - $2)) ;; esac
}

base=$(measure "$SRC ! $CUDA_IN ! cudadownload ! fakesink")
with=$(measure "$SRC ! $CUDA_IN ! cudaconvolve radius=4 ! cudadownload ! fakesink")
two=$(measure "$SRC ! $CUDA_IN ! cudaconvolve radius=4 ! cudaconvolve kernel=sobel ! cudadownload ! fakesink")
host=$(measure "$SRC ! cudaconvolve backend=cuda radius=4 ! fakesink")

echo
echo "### GPU memory of one process ($label)"
echo
echo "| pipeline (1920x1080 NV12) | MiB on the GPU | above the pipeline without cudaconvolve |"
echo "|---|---:|---:|"
echo "| cudaupload ! cudadownload | $base | — |"
echo "| cudaupload ! cudaconvolve ! cudadownload | $with | $(minus "$with" "$base") |"
echo "| cudaupload ! cudaconvolve ! cudaconvolve ! cudadownload | $two | $(minus "$two" "$base") |"
echo "| cudaconvolve backend=cuda (system memory) | $host | $(minus "$host" "$base") |"
