#!/usr/bin/env bash
# Runs the project on another Debian suite: a chroot made with debootstrap
# (its default mirror), this checkout and the machine's CUDA toolkit mounted
# in, then `./run COMMAND` inside, which installs that suite's packages.
#
#   tests/debian-suite.sh SUITE [COMMAND]      as root; COMMAND: test (default)
#
#   SUITE        bookworm (GStreamer 1.22), trixie (1.26), forky, sid, ...
#   CHROOT_DIR   where the chroot is kept and reused
#                (default /var/tmp/gst-cudaconvolve-SUITE)
#   MESON_SETUP_ARGS   passed on to ./run (e.g. -Dcuda-arch=75)
#   SANITIZE, FUZZ_SECONDS   passed on to ./run (SANITIZE=0: no sanitizer
#                      stage in ./run test)
#   SUITE_BUILD_DIR    the build folder inside the chroot (default
#                      /var/tmp/build): the checkout's own build/ is left
#                      alone
#
# Needs debootstrap, which is installed when missing.
set -euo pipefail

suite=${1:?usage: tests/debian-suite.sh SUITE [COMMAND]}
command=${2:-test}
src=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
root=${CHROOT_DIR:-/var/tmp/gst-cudaconvolve-$suite}
cuda=""
[ -d /usr/local/cuda ] && cuda=$(readlink -f /usr/local/cuda)

say () { printf '\033[1m==> [%s] %s\033[0m\n' "$suite" "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { echo "debian-suite.sh: run as root (debootstrap, chroot, mount)" >&2; exit 1; }
if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

if [ ! -x "$root/usr/bin/apt-get" ]; then
  say "debootstrap $suite into $root"
  rm -rf "$root"
  debootstrap --variant=minbase "$suite" "$root" >"$root.debootstrap.log" 2>&1 ||
    { tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
fi

mounts=()
cleanup () {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -l "${mounts[i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT
bind () {                       # bind SOURCE TARGET-IN-CHROOT
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounts+=("$root$2")
}
bind /proc /proc
bind /sys /sys
bind /dev /dev
bind /dev/pts /dev/pts
bind "$src" /src
if [ -n "$cuda" ]; then
  bind "$cuda" "$cuda"
  ln -sfn "$cuda" "$root/usr/local/cuda"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The Release files of testing and sid carry an expiry date, which a
# snapshot of the archive passes: a throwaway test chroot takes them.
echo 'Acquire::Check-Valid-Until "false";' \
  >"$root/etc/apt/apt.conf.d/99gst-cudaconvolve-snapshot"

say "./run $command ($(chroot "$root" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'))"
chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
  MESON_SETUP_ARGS="${MESON_SETUP_ARGS:-}" \
  SANITIZE="${SANITIZE:-1}" FUZZ_SECONDS="${FUZZ_SECONDS:-30}" \
  BUILD_DIR="${SUITE_BUILD_DIR:-/var/tmp/build}" \
  /src/run "$command" </dev/null
