#!/usr/bin/env bash
# Stages a Debian suite's GStreamer runtime for the GPU host, which has the
# NVIDIA driver and the CUDA toolkit but no GStreamer, and a C library of
# its own: the suite's libraries travel with the suite's own dynamic loader,
# and every program of that GStreamer starts through it
# (ld-linux-x86-64.so.2 --library-path ...), so nothing of it leaks into the
# host's own programs (no LD_LIBRARY_PATH).
#
#   tests/gpu-runtime.sh SUITE DIR [ELF...]     here, as root
#   . DIR/env.sh                                on the GPU host (bash)
#
# SUITE's chroot is tests/debian-suite.sh's (CHROOT_DIR, default
# /var/tmp/gst-cudaconvolve-SUITE; made there by `tests/debian-suite.sh
# SUITE`).  DIR gets runtime.tar.xz and env.sh.  ELF: more programs or
# plugins of the chroot (paths inside it, e.g. a build's tests) whose
# libraries must travel too; the files themselves do not.
#
# On the GPU host, env.sh unpacks the runtime into /tmp/gst-SUITE once and
# exports GST_RUN (the loader with its library path: `$GST_RUN PROGRAM
# ARGS` runs a program built in the chroot), PATH (gst-launch-1.0 and
# gst-inspect-1.0 wrapped so), GST_PLUGIN_SYSTEM_PATH_1_0, a private
# GST_REGISTRY and GST_REGISTRY_FORK=no (the plugin scanner would start
# without the loader).
set -euo pipefail

suite=${1:?usage: tests/gpu-runtime.sh SUITE DIR [ELF...]}
out=${2:?usage: tests/gpu-runtime.sh SUITE DIR [ELF...]}
shift 2
root=${CHROOT_DIR:-/var/tmp/gst-cudaconvolve-$suite}
arch=x86_64-linux-gnu
# The plugins tests/gpu-host.sh and the GPU tests use: core elements and
# tracers, appsrc/appsink, videotestsrc, videoconvertscale, videorate,
# rawvideoparse, gaussianblur (gaudieffects) and nvcodec (cudaupload,
# cudadownload, nvh264dec).
plugins="coreelements coretracers app videotestsrc videoconvertscale videorate
rawparse gaudieffects nvcodec"
packages="gstreamer1.0-tools gstreamer1.0-plugins-base
gstreamer1.0-plugins-good gstreamer1.0-plugins-bad"

[ -x "$root/usr/bin/apt-get" ] ||
  { echo "gpu-runtime.sh: no chroot at $root (tests/debian-suite.sh $suite makes it)" >&2; exit 1; }
in_root () { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
installed () {
  local p
  for p in $packages; do
    [ "$(in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = \
      "install ok installed" ] || return 1
  done
}
installed || {
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  in_root apt-get update -qq
  # shellcheck disable=SC2086
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends $packages >/dev/null
}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/plugins" "$stage/bin"

elves=(/usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0)
for p in $plugins; do
  f=/usr/lib/$arch/gstreamer-1.0/libgst$p.so
  [ -f "$root$f" ] || { echo "gpu-runtime.sh: $suite has no $f" >&2; exit 1; }
  cp "$root$f" "$stage/plugins/"
  elves+=("$f")
done
cp "$root/usr/bin/gst-launch-1.0" "$root/usr/bin/gst-inspect-1.0" "$stage/bin/"

# Every library the programs and plugins need, as the suite's loader
# resolves them; the driver (libcuda) and the toolkit's libraries are the
# host's.
for f in "${elves[@]}" "$@"; do
  in_root ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u | grep -v -E '/lib(cuda|nvrtc|nvidia-)[^/]*$' |
  while read -r lib; do
    cp -L "$root$lib" "$stage/lib/"
  done
cp -L "$root/lib64/ld-linux-x86-64.so.2" "$stage/lib/"

cat >"$stage/bin/gst-run" <<'EOF'
#!/bin/sh
# Runs a program of the staged GStreamer through the suite's own loader.
here=$(dirname "$(readlink -f "$0")")/..
exec "$here/lib/ld-linux-x86-64.so.2" --library-path \
  "$here/lib${GST_RUN_HOST_LIBS:+:$GST_RUN_HOST_LIBS}" "$@"
EOF
for p in gst-launch-1.0 gst-inspect-1.0; do
  mv "$stage/bin/$p" "$stage/bin/$p.bin"
  printf '#!/bin/sh\nexec "$(dirname "$(readlink -f "$0")")/gst-run" "$(dirname "$(readlink -f "$0")")/%s.bin" "$@"\n' \
    "$p" >"$stage/bin/$p"
done
chmod +x "$stage/bin/"*
in_root dpkg-query -W -f='${Version}' libgstreamer1.0-0 >"$stage/VERSION"

mkdir -p "$out"
tar -C "$stage" -cf - . | xz -9e -T0 --lzma2=preset=9e,dict=64MiB >"$out/runtime.tar.xz"
sed "s/@SUITE@/$suite/" >"$out/env.sh" <<'EOF'
# Sourced on the GPU host (bash): unpacks @SUITE@'s GStreamer runtime
# (tests/gpu-runtime.sh) into /tmp/gst-@SUITE@ once and points the
# environment at it.
_gr_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_gr_root=/tmp/gst-@SUITE@
if [ ! -x "$_gr_root/bin/gst-run" ]; then
  mkdir -p "$_gr_root"
  xz -dc "$_gr_dir/runtime.tar.xz" | tar -C "$_gr_root" -xf -
fi
# the toolkit's libraries (nvrtc) for nvcodec; the driver is found through
# the host's loader cache, which the suite's loader reads as well
export GST_RUN_HOST_LIBS=/usr/local/cuda/lib64
export GST_RUN=$_gr_root/bin/gst-run
export PATH=$_gr_root/bin:$PATH
export GST_PLUGIN_SYSTEM_PATH_1_0=$_gr_root/plugins
export GST_REGISTRY=$_gr_root/registry.bin
export GST_REGISTRY_FORK=no
unset GST_PLUGIN_SCANNER _gr_dir _gr_root
EOF
echo "$out: GStreamer $(cat "$stage/VERSION") of $suite, $(du -h "$out/runtime.tar.xz" | cut -f1)"
