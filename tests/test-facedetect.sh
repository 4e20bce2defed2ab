#!/usr/bin/env bash
# A real detector, end to end: OpenCV's facedetect finds the
# faces in a photograph and attaches a GstVideoRegionOfInterestMeta
# ("face") to the frame; cudaconvolve region=roi blurs only those boxes,
# grown by roi-margin.  The frame is taken three times, in one pipeline:
#
#   before  facedetect's output, as I420
#   after   through cudaconvolve region=roi roi-types=face roi-margin=16
#   whole   through cudaconvolve on the whole frame (the same filter)
#
# and checked sample by sample, on every plane, against the boxes
# facedetect reported on the bus (the same rectangles as its metas): inside
# the grown boxes `after` is `whole` (the region semantics of
# docs/semantics.md) and differs from `before` for most samples; outside it
# is `before`, bit for bit.
#
#   tests/test-facedetect.sh [PHOTO]     (GST_PLUGIN_PATH=build/gst)
#
# The photograph: Grace Hopper's portrait from matplotlib's sample data
# (Debian: python-matplotlib-data); facedetect and its Haar cascades come
# from gstreamer1.0-opencv and opencv-data.  Without any of them the test
# is skipped (exit 77).  CUCONV_FACEDETECT_KEEP=DIR keeps the frames there.
set -euo pipefail

PHOTO=${1:-${CUCONV_FACE_PHOTO:-/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg}}
CASCADE=/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml
MARGIN=16
FILTER="sigma=12 radius=0"

skip () { echo "SKIP: $*"; exit 77; }
fail () { echo "FAIL: $*" >&2; exit 1; }

command -v gst-launch-1.0 >/dev/null && command -v gst-inspect-1.0 >/dev/null ||
  skip "no gst-launch-1.0 (gstreamer1.0-tools)"
gst-inspect-1.0 facedetect >/dev/null 2>&1 ||
  skip "no facedetect element (gstreamer1.0-opencv)"
[ -r "$CASCADE" ] || skip "no Haar cascade $CASCADE (opencv-data)"
[ -r "$PHOTO" ] || skip "no photograph $PHOTO (python-matplotlib-data)"
for e in decodebin videoconvert imagefreeze tee filesink; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 ||
    skip "no $e element (gstreamer1.0-plugins-base, -good)"
done
gst-inspect-1.0 cudaconvolve >/dev/null 2>&1 ||
  fail "GStreamer cannot load cudaconvolve (GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-})"
gst-inspect-1.0 cudaconvolve | grep '^  region ' >/dev/null ||
  fail "this cudaconvolve has no region property"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${CUCONV_FACEDETECT_KEEP:-$tmp}
mkdir -p "$out"

# One frame of the photograph.  facedetect takes RGB; the frames are
# compared in I420, whose chroma planes have half the luma's size.  The
# messages (-m) carry the faces, the caps (-v) the frame's size.
# facedetect's nose, mouth and eye cascades are not in Debian's opencv-data:
# it says so on stderr and finds faces all the same.
log=$tmp/gst.log
gst-launch-1.0 -m -v filesrc location="$PHOTO" ! decodebin ! videoconvert \
  ! imagefreeze num-buffers=1 ! videoconvert \
  ! facedetect display=false ! videoconvert ! video/x-raw,format=I420 \
  ! tee name=t \
  t. ! queue ! filesink name=before location="$out/before.yuv" \
  t. ! queue ! cudaconvolve region=roi roi-types=face roi-margin=$MARGIN \
      $FILTER ! filesink name=after location="$out/after.yuv" \
  t. ! queue ! cudaconvolve $FILTER \
      ! filesink name=whole location="$out/whole.yuv" >"$log" 2>&1 ||
  { cat "$log" >&2; fail "the pipeline failed"; }

# Nothing in the pipeline scales: any pad's raw video caps give the size.
caps=$(grep -m1 'caps = video/x-raw, .*width=(int)' "$log") ||
  { cat "$log" >&2; fail "no caps in gst-launch's output"; }
width=$(sed -n 's/.*width=(int)\([0-9]*\).*/\1/p' <<<"$caps")
height=$(sed -n 's/.*height=(int)\([0-9]*\).*/\1/p' <<<"$caps")

# facedetect's message: faces=(structure){ "face\,\ x\=\(uint\)158\,\ ...
# one quoted structure per face.
faces=$(grep 'from element "facedetect0" (element)' "$log" | head -n 1 |
  tr -d '\\' |
  grep -oE 'x=\(uint\)[0-9]+, y=\(uint\)[0-9]+, width=\(uint\)[0-9]+, height=\(uint\)[0-9]+' |
  sed -E 's/[a-z]+=\(uint\)//g; s/,//g') || true
[ -n "$faces" ] || { cat "$log" >&2; fail "facedetect found no face in $PHOTO"; }
echo "photo: $PHOTO, ${width}x${height}"
echo "faces (x y w h):"
sed 's/^/  /' <<<"$faces"

size=$(stat -c %s "$out/before.yuv")
for f in after whole; do
  [ "$(stat -c %s "$out/$f.yuv")" = "$size" ] ||
    fail "$f.yuv has $(stat -c %s "$out/$f.yuv") bytes, before.yuv $size"
done

# cmp -l lists the 1-based offsets of the bytes that differ.  The awk
# program maps an offset to plane, column and row (GStreamer's default I420
# layout: strides rounded up to 4, chroma of ceil (size / 2)) and says
# whether it lies in a box: grown by the margin, clipped to the frame, on
# chroma scaled by 2 and rounded outward.
classify='
function ru4(v) { return int((v + 3) / 4) * 4 }
BEGIN {
  cw = int((W + 1) / 2); ch = int((H + 1) / 2)
  pw[0] = W; ph[0] = H; ps[0] = ru4(W); sb[0] = 1; po[0] = 0
  pw[1] = pw[2] = cw; ph[1] = ph[2] = ch; ps[1] = ps[2] = ru4(cw)
  sb[1] = sb[2] = 2
  po[1] = ps[0] * H; po[2] = po[1] + ps[1] * ch
  n = split(FACES, v, " ")
  for (b = 0; b < n / 4; b++) {
    x0 = v[4 * b + 1] - M; y0 = v[4 * b + 2] - M
    x1 = v[4 * b + 1] + v[4 * b + 3] + M; y1 = v[4 * b + 2] + v[4 * b + 4] + M
    if (x0 < 0) x0 = 0; if (y0 < 0) y0 = 0
    if (x1 > W) x1 = W; if (y1 > H) y1 = H
    for (p = 0; p < 3; p++) {
      bx0[p, b] = int(x0 / sb[p]); by0[p, b] = int(y0 / sb[p])
      bx1[p, b] = int((x1 + sb[p] - 1) / sb[p])
      by1[p, b] = int((y1 + sb[p] - 1) / sb[p])
    }
  }
  nb = n / 4
  # Samples inside the boxes, per plane (boxes may overlap).
  for (p = 0; p < 3; p++)
    for (y = 0; y < ph[p]; y++)
      for (x = 0; x < pw[p]; x++)
        total[p] += inside(p, x, y)
}
function inside(p, x, y,   b) {
  for (b = 0; b < nb; b++)
    if (x >= bx0[p, b] && x < bx1[p, b] && y >= by0[p, b] && y < by1[p, b])
      return 1
  return 0
}
{
  o = $1 - 1
  p = o >= po[2] ? 2 : o >= po[1] ? 1 : 0
  o -= po[p]; y = int(o / ps[p]); x = o % ps[p]
  if (x < pw[p] && y < ph[p] && inside(p, x, y)) in_[p]++; else out_[p]++
}
END {
  for (p = 0; p < 3; p++)
    printf "%d %d %d %d\n", p, in_[p] + 0, out_[p] + 0, total[p]
}'

diffs () {
  { cmp -l "$out/$1.yuv" "$out/$2.yuv" || true; } |
    awk -v W="$width" -v H="$height" -v M="$MARGIN" -v FACES="$(echo $faces)" \
      "$classify"
}

status=0
# after against before: changes inside the boxes only, and most of them.
while read -r p changed_in changed_out total; do
  echo "plane $p: $changed_in of $total samples in the boxes changed," \
    "$changed_out outside"
  if [ "$changed_out" -ne 0 ]; then
    echo "FAIL: plane $p: $changed_out samples changed outside the boxes" >&2
    status=1
  fi
  if [ $((changed_in * 2)) -lt "$total" ]; then
    echo "FAIL: plane $p: fewer than half the samples in the boxes changed" >&2
    status=1
  fi
done < <(diffs before after)

# after against the whole-frame filter: equal inside the boxes.
while read -r p differ_in differ_out total; do
  if [ "$differ_in" -ne 0 ]; then
    echo "FAIL: plane $p: $differ_in samples in the boxes differ from the" \
      "whole-frame filter's" >&2
    status=1
  fi
done < <(diffs whole after)

[ "$status" -eq 0 ] && echo "PASS: the faces are blurred and nothing else changed"
exit "$status"
