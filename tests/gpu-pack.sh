#!/usr/bin/env bash
# Packs what tests/gpu-host.sh runs from a build folder for the GPU host,
# which gets only what the device tool carries (64 MiB in all): the
# plugin and the test and benchmark programs, in one xz archive.
#
#   tests/gpu-pack.sh BUILD DIR     here, from any folder
#   tar xJf DIR/build.tar.xz        on the GPU host, from the repository root
#
# BUILD: a build folder of the repository, relative to its root (for the
# H100 and H200, one configured with MESON_SETUP_ARGS=-Dcuda-arch=90); DIR:
# a folder git ignores, to carry (for example .gpu-host, beside the
# runtime ../shared/gpu-host/stage.sh or tests/gpu-runtime.sh put there).
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")/.."
build=${1:?usage: tests/gpu-pack.sh BUILD DIR}
out=${2:?usage: tests/gpu-pack.sh BUILD DIR}

if [ ! -d "$build/gst" ] || [ ! -d "$build/tests" ]; then
  echo "gpu-pack: $build is not a build folder of this repository" >&2
  exit 1
fi
mkdir -p "$out"
# the plugin, and the programs of tests/ and tests/fuzz/ (not meson's
# object folders)
find "$build/gst" "$build/tests" -maxdepth 2 -type f \
    \( -name '*.so' -o -perm -u+x \) ! -path '*.p/*' -print0 | sort -z |
  tar --null -T - -cf - | xz -9e -T0 >"$out/build.tar.xz"
echo "gpu-pack: $out/build.tar.xz, $(du -h "$out/build.tar.xz" | cut -f1)"
