#!/usr/bin/env bash
# gst-cudaconvolve: the GPU steps, run ON the GPU host from the repository
# root, with the build folder (configured and built on the dev machine)
# carried along:
#
#   . .gpu-host/env.sh && tests/gpu-host.sh [check|bench|all]
#
#   check  core, then the steps of mma and denoise (below),
#          build/tests/test-gpu-element, build/tests/test-gpu-pipeline
#          (nvcodec's elements, CUDA memory, nvh264dec) and racecheck on
#          its --quick run
#          build/tests/test-robustness in full on backend=cuda, and
#          compute-sanitizer memcheck on its CI-sized run
#   core   build/tests/test-gpu (full matrix, then again with the
#          streaming kernel forced: --stream), compute-sanitizer memcheck
#          on test-gpu --quick (and --quick --stream) and racecheck on
#          test-gpu --race (and --race --regions)
#   bench  bench-kernel built here with nvcc against NPP (falls back to
#          build/tests/bench-kernel without NPP), then build/tests/bench-element
#   all    both (the default)
#   element
#          check's steps for the element alone: test-gpu-element,
#          test-gpu-pipeline and its racecheck, test-robustness
#          (ROBUSTNESS=ci: its CI size) and its memcheck
#   load   build/tests/cycles (memory across start/stop cycles while
#          properties change, in system and CUDA memory), build/tests/scaling
#          (chained elements, parallel pipelines) and the latency step
#   denoise
#          the bilateral, non-local means by sums and the temporal denoise
#          alone: test-gpu --kernel=bilateral, test-gpu --kernel=nlmeans
#          --nlmeans-sums, test-gpu-temporal, memcheck on their quick runs
#          and racecheck on the bilateral's and the sums' --race runs
#   mma    the tensor-core blur forced wherever it takes a plane: test-gpu
#          --mma, memcheck on its --quick run and racecheck on --race
#   soak SECONDS
#          build/tests/soak SECONDS cuda: frames in = out, resident and GPU
#          memory every minute
#   wide   the large blurs alone: test-gpu --wide and
#          --untruncated, memcheck on their --quick runs and racecheck on
#          their --race runs, bench-kernel --wide, bench-element
#   hostile
#          hostile input on backend=cuda: build/tests/test-hostile and its
#          memcheck, the fuzzers' seed corpora (tests/fuzz/corpus, or
#          FUZZ_CORPORA=DIR holding a folder per fuzzer) replayed in system
#          and in CUDA memory under compute-sanitizer memcheck, and
#          build/tests/cycles for CYCLES (default 10000; 0: none) start/stop cycles
#          on each backend, resident memory as a user sees it, bounded over
#          the last half (256 KiB)
#   candidates
#          the kernels written but not yet taken by the dispatch, and the
#          top level's motion search a warp a block: test-gpu --window
#          (the register-window passes) and --kernel=nlmeans
#          --nlmeans-sums, memcheck on their --quick runs, racecheck on
#          their --race runs, test-gpu-temporal and its memcheck, then
#          bench-kernel --wide, --nlmeans and --temporal
#   latency
#          build/tests/latency: what the element adds to a live 30 frames/s
#          pipeline on backend=cuda, from GStreamer's latency tracer, in
#          system and CUDA memory, beside its LATENCY query's answer
#
# Logs go to $OUT (default ./gpu-out); a summary comes last: one line per
# step, then the tables.  Exits non-zero when a step failed.
#
# Environment: BUILD (default build), OUT, CUDA_HOME (default /usr/local/cuda),
# GST_RUN (set by the env.sh of tests/gpu-runtime.sh: what starts a program
# built against another suite's GStreamer; the build's programs run
# through it),
# SM (compute capability for nvcc, default: the GPU's, e.g. 90),
# TEST_GPU_ARGS (extra arguments for the full test-gpu run, e.g. --seed=7).
set -uo pipefail

cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
MODE=${1:-all}
BUILD=${BUILD:-build}
OUT=${OUT:-./gpu-out}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export PATH=$PATH:$CUDA_HOME/bin
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
export GST_PLUGIN_PATH=$PWD/$BUILD/gst
export GST_DEBUG=${GST_DEBUG:-cudaconvolve:2}
RUN=${GST_RUN:-}

case $MODE in
  check|core|element|bench|all|load|soak|latency|wide|denoise|mma|hostile|candidates) ;;
  *) echo "usage: $0 [check|core|element|bench|all|load|soak SECONDS|latency|wide|denoise|mma|hostile|candidates]" >&2; exit 2 ;;
esac

SUMMARY=()
FAILED=0
T0=$SECONDS

# step NAME TIMEOUT_S LOG CMD...: runs CMD with a time limit, logs its
# output and records PASS (0), SKIP (77) or FAIL.
step () {
  local name=$1 limit=$2 log=$OUT/$3 t=$SECONDS rc
  shift 3
  echo "==> $name: $*" >&2
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  case $rc in
    0) SUMMARY+=("PASS  $name ($((SECONDS - t)) s, $log)") ;;
    77) SUMMARY+=("SKIP  $name (no usable CUDA device, $log)") ;;
    124|137) SUMMARY+=("FAIL  $name: timed out after $limit s ($log)"); FAILED=1 ;;
    *) SUMMARY+=("FAIL  $name: exit $rc ($log)"); FAILED=1 ;;
  esac
  return $rc
}

need () {
  if [ ! -x "$1" ]; then
    SUMMARY+=("FAIL  $1 is missing: build on the dev machine and carry $BUILD")
    FAILED=1
    return 1
  fi
}

sanitizer () {
  command -v compute-sanitizer 2>/dev/null ||
    { [ -x "$CUDA_HOME/bin/compute-sanitizer" ] && echo "$CUDA_HOME/bin/compute-sanitizer"; }
}

# The engine against the CPU reference: the full matrix, again with the
# streaming kernel forced, and compute-sanitizer on the quick runs.
run_core () {
  local cs=$(sanitizer)

  if need "$BUILD/tests/test-gpu"; then
    # shellcheck disable=SC2086
    step "test-gpu (full matrix)" 420 test-gpu.log \
      $RUN "$BUILD/tests/test-gpu" ${TEST_GPU_ARGS:-}
    # shellcheck disable=SC2086
    step "test-gpu --stream (full matrix)" 420 test-gpu-stream.log \
      $RUN "$BUILD/tests/test-gpu" --stream ${TEST_GPU_ARGS:-}
    if [ -z "$cs" ]; then
      SUMMARY+=("FAIL  compute-sanitizer not found (PATH, $CUDA_HOME/bin)")
      FAILED=1
    else
      step "memcheck test-gpu --quick" 300 memcheck.log \
        "$cs" --tool memcheck --leak-check full --error-exitcode 1 \
        $RUN "$BUILD/tests/test-gpu" --quick
      step "memcheck test-gpu --quick --stream" 300 memcheck-stream.log \
        "$cs" --tool memcheck --error-exitcode 1 \
        $RUN "$BUILD/tests/test-gpu" --quick --stream
      step "racecheck test-gpu --race" 300 racecheck.log \
        "$cs" --tool racecheck --error-exitcode 1 \
        $RUN "$BUILD/tests/test-gpu" --race
      step "racecheck test-gpu --race --regions" 300 racecheck-regions.log \
        "$cs" --tool racecheck --error-exitcode 1 \
        $RUN "$BUILD/tests/test-gpu" --race --regions
    fi
  fi
}

run_check () {
  run_core
  run_mma
  run_denoise
  run_element
}

# The element among GStreamer's CUDA elements, on the GStreamer in use.
run_element () {
  local cs=$(sanitizer)

  if need "$BUILD/tests/test-gpu-element"; then
    step "test-gpu-element" 600 test-gpu-element.log \
      $RUN "$BUILD/tests/test-gpu-element"
  fi
  if need "$BUILD/tests/test-gpu-pipeline"; then
    step "test-gpu-pipeline" 300 test-gpu-pipeline.log \
      env CUCONV_TEST_DATA=tests/data $RUN "$BUILD/tests/test-gpu-pipeline"
    [ -z "$cs" ] ||
      step "racecheck test-gpu-pipeline --quick" 300 racecheck-pipeline.log \
        "$cs" --tool racecheck --error-exitcode 1 \
        env CUCONV_TEST_DATA=tests/data $RUN "$BUILD/tests/test-gpu-pipeline" --quick
  fi
  if need "$BUILD/tests/test-robustness"; then
    step "test-robustness (${ROBUSTNESS:-full}, backend=cuda)" 400 \
      test-robustness.log env CUCONV_ROBUSTNESS_BACKEND=cuda \
      CUCONV_ROBUSTNESS_FULL=$([ "${ROBUSTNESS:-full}" = full ] && echo 1) \
      $RUN "$BUILD/tests/test-robustness"
    [ -z "$cs" ] ||
      step "memcheck test-robustness (CI size, backend=cuda)" 400 \
        memcheck-robustness.log "$cs" --tool memcheck --error-exitcode 1 \
        env CK_FORK=no CUCONV_ROBUSTNESS_BACKEND=cuda \
        $RUN "$BUILD/tests/test-robustness"
  fi
}

# test-gpu ARGS... in full, then compute-sanitizer memcheck on its --quick
# run and racecheck on its --race run (where compute-sanitizer is there):
# test-gpu-NAME.log, memcheck-NAME.log, racecheck-NAME.log.
checked_test_gpu () {
  local name=$1 cs
  shift
  cs=$(sanitizer)

  # shellcheck disable=SC2086
  step "test-gpu $*" 420 "test-gpu-$name.log" \
    $RUN "$BUILD/tests/test-gpu" "$@"
  [ -n "$cs" ] || return 0
  # shellcheck disable=SC2086
  step "memcheck test-gpu --quick $*" 300 "memcheck-$name.log" \
    "$cs" --tool memcheck --error-exitcode 1 \
    $RUN "$BUILD/tests/test-gpu" --quick "$@"
  # shellcheck disable=SC2086
  step "racecheck test-gpu --race $*" 300 "racecheck-$name.log" \
    "$cs" --tool racecheck --error-exitcode 1 \
    $RUN "$BUILD/tests/test-gpu" --race "$@"
}

# test-gpu-temporal, then compute-sanitizer memcheck on it.
checked_temporal () {
  local cs
  cs=$(sanitizer)

  need "$BUILD/tests/test-gpu-temporal" || return 0
  # shellcheck disable=SC2086
  step "test-gpu-temporal" 300 test-gpu-temporal.log \
    $RUN "$BUILD/tests/test-gpu-temporal"
  [ -z "$cs" ] ||
    # shellcheck disable=SC2086
    step "memcheck test-gpu-temporal" 300 memcheck-temporal.log \
      "$cs" --tool memcheck --error-exitcode 1 \
      $RUN "$BUILD/tests/test-gpu-temporal"
}

run_wide () {
  if need "$BUILD/tests/test-gpu"; then
    checked_test_gpu wide --wide
    checked_test_gpu untruncated --untruncated
  fi
  if need "$BUILD/tests/bench-kernel"; then
    step "bench-kernel --wide" 240 bench-kernel-wide.md \
      $RUN "$BUILD/tests/bench-kernel" --wide
  fi
  if need "$BUILD/tests/bench-element"; then
    step "bench-element" 240 bench-element.md $RUN "$BUILD/tests/bench-element"
  fi
}

# The kernels the dispatch does not take yet, and the top level's motion
# search a warp a block: conformance, memcheck and racecheck, then their
# benchmark rows beside the paths the dispatch takes.
run_candidates () {
  local args

  if need "$BUILD/tests/test-gpu"; then
    checked_test_gpu window --window
    checked_test_gpu nlmeans-sums --kernel=nlmeans --nlmeans-sums
  fi
  checked_temporal
  if need "$BUILD/tests/bench-kernel"; then
    for args in wide nlmeans temporal; do
      # shellcheck disable=SC2086
      step "bench-kernel --$args" 300 "bench-kernel-$args.md" \
        $RUN "$BUILD/tests/bench-kernel" --$args
    done
  fi
}

run_denoise () {
  if need "$BUILD/tests/test-gpu"; then
    checked_test_gpu bilateral --kernel=bilateral
    checked_test_gpu nlmeans-sums --kernel=nlmeans --nlmeans-sums
  fi
  checked_temporal
}

run_mma () {
  local cs=$(sanitizer)

  if need "$BUILD/tests/test-gpu"; then
    step "test-gpu --mma (full matrix)" 420 test-gpu-mma.log \
      $RUN "$BUILD/tests/test-gpu" --mma ${TEST_GPU_ARGS:-}
    if [ -n "$cs" ]; then
      step "memcheck test-gpu --quick --mma" 300 memcheck-mma.log \
        "$cs" --tool memcheck --error-exitcode 1 \
        $RUN "$BUILD/tests/test-gpu" --quick --mma
      step "racecheck test-gpu --race --mma" 300 racecheck-mma.log \
        "$cs" --tool racecheck --error-exitcode 1 \
        $RUN "$BUILD/tests/test-gpu" --race --mma
    fi
  fi
}

run_soak () {
  local seconds=${1:?usage: $0 soak SECONDS}

  if need "$BUILD/tests/soak"; then
    step "soak $seconds s (backend=cuda)" $((seconds + 120)) soak.log \
      $RUN "$BUILD/tests/soak" "$seconds" cuda
  fi
}

# The latency tracer lives in the coretracers plugin, which the staged
# runtime (.gpu-host/env.sh) unpacks but does not put on its plugin path:
# put it on GST_PLUGIN_PATH from wherever it lies.
latency_tracer () {
  local d tmp

  gst-inspect-1.0 coretracers >/dev/null 2>&1 && return 0
  for d in /tmp/gst-root/usr/lib/x86_64-linux-gnu/gstreamer-1.0 \
    /usr/lib/x86_64-linux-gnu/gstreamer-1.0; do
    [ -f "$d/libgstcoretracers.so" ] || continue
    tmp=$(mktemp -d)
    cp "$d/libgstcoretracers.so" "$tmp/"
    export GST_PLUGIN_PATH=$tmp${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
    return 0
  done
  return 1
}

run_latency () {
  latency_tracer || echo "coretracers not found: the latency step will fail"
  if need "$BUILD/tests/latency"; then
    step "latency (live, backend=cuda)" 300 latency.md \
      $RUN "$BUILD/tests/latency"
  fi
}

# Memory across start/stop cycles with properties changing, chains and
# parallel pipelines, latency.  The cycles run alone: they bound the GPU
# memory of the whole device.
run_hostile () {
  local cs=$(sanitizer) name memory corpora=${FUZZ_CORPORA:-tests/fuzz/corpus}
  local cycles=${CYCLES:-10000} pids=() b

  # the long cycles first, in the background, one process a backend
  if [ "$cycles" != 0 ] && need "$BUILD/tests/cycles"; then
    for b in cuda cpu; do
      timeout "${CYCLES_TIMEOUT:-1200}" $RUN "$BUILD/tests/cycles" --backend=$b --cycles="$cycles" \
        --as-user --last-half=256 >"$OUT/cycles-hostile-$b.log" 2>&1 &
      pids+=($!)
    done
  fi
  if need "$BUILD/tests/test-hostile"; then
    step "test-hostile (backend=cuda)" 300 test-hostile.log \
      env CUCONV_ROBUSTNESS_BACKEND=cuda $RUN "$BUILD/tests/test-hostile"
    [ -z "$cs" ] ||
      step "memcheck test-hostile (backend=cuda)" 400 memcheck-hostile.log \
        "$cs" --tool memcheck --error-exitcode 1 env CK_FORK=no \
        CUCONV_ROBUSTNESS_BACKEND=cuda $RUN "$BUILD/tests/test-hostile"
  fi
  for name in fuzz-properties fuzz-regions fuzz-frames; do
    need "$BUILD/tests/fuzz/$name-replay" || continue
    for memory in system cuda; do
      step "$name corpus, $memory memory, backend=cuda" 400 \
        "replay-$name-$memory.log" ${cs:+"$cs" --tool memcheck --error-exitcode 1} \
        env CUCONV_FUZZ_BACKEND=cuda CUCONV_FUZZ_MEMORY=$memory \
        $RUN "$BUILD/tests/fuzz/$name-replay" "$corpora/$name"
    done
  done
  for b in "${!pids[@]}"; do
    if wait "${pids[$b]}"; then
      SUMMARY+=("PASS  cycles ($cycles, backend=$([ "$b" = 0 ] && echo cuda || echo cpu))")
    else
      SUMMARY+=("FAIL  cycles ($cycles, backend=$([ "$b" = 0 ] && echo cuda || echo cpu))")
      FAILED=1
    fi
  done
}

run_load () {
  if need "$BUILD/tests/cycles"; then
    step "cycles (system memory, backend=cuda)" 300 cycles.log \
      $RUN "$BUILD/tests/cycles"
    step "cycles (CUDA memory, backend=cuda)" 300 cycles-cuda-memory.log \
      $RUN "$BUILD/tests/cycles" --cuda-memory
    # a figure, not a test: the same with identity in the element's place
    timeout 300 $RUN "$BUILD/tests/cycles" --cuda-memory --control \
      >"$OUT/cycles-control.log" 2>&1
  fi
  if need "$BUILD/tests/scaling"; then
    step "scaling (chains, parallel pipelines)" 300 scaling.md \
      $RUN "$BUILD/tests/scaling"
  fi
  run_latency
}

# The benchmark with nvcc, with NPP when the toolkit has it, linked
# against the engine's static libraries of the carried build (built for
# this GPU's architecture on the dev machine); without them, the engine's
# kernels and what they use compiled here from the sources (every .cu and
# .c of cuda/'s folders but engine/, the stream of frames over GLib's
# threads), objects in parallel.  Its output goes to the caller's log.
build_bench_kernel () {
  local sm=${SM:-} obj=$OUT/obj pids=() f o rc=0 nvcc=nvcc
  local npp_def=() npp_libs=() srcs=() libs=()

  command -v nvcc >/dev/null || nvcc=$CUDA_HOME/bin/nvcc
  if [ -z "$sm" ]; then
    sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
      head -1 | tr -d ' .')
  fi
  sm=${sm:-90}
  if [ -f "$CUDA_HOME/include/nppi.h" ] && [ "${NPP:-1}" != 0 ]; then
    npp_def=(-DHAVE_NPP)
    npp_libs=(-lnppif -lnppc)
  else
    echo "NPP not found under $CUDA_HOME (or NPP=0): building without it"
  fi
  if [ -f "$BUILD/cuda/libcuconv-cuda.a" ]; then
    srcs=(tests/bench-kernel.cu)
    libs=("$BUILD"/cuda/libcuconv-{cuda,core,cpu}.a)
    echo "the engine from ${libs[*]}"
  else
    srcs=(cuda/{filter,cpu,kernels,pipelines}/*.{cu,c} tests/bench-kernel.cu)
  fi
  rm -rf "$obj"
  mkdir -p "$obj"
  for f in "${srcs[@]}"; do
    [ -f "$f" ] || continue
    o=$obj/$(basename "$f").o
    "$nvcc" -O3 -std=c++17 -gencode "arch=compute_$sm,code=sm_$sm" \
      "${npp_def[@]}" -Icuda/api -Icuda/filter -Icuda/cpu -Icuda/kernels \
      -Icuda/pipelines -I"$CUDA_HOME/include" -c "$f" -o "$o" &
    pids+=($!)
  done
  for f in "${pids[@]}"; do
    wait "$f" || rc=1
  done
  [ $rc -eq 0 ] || return 1
  "$nvcc" -gencode "arch=compute_$sm,code=sm_$sm" "$obj"/*.o "${libs[@]}" \
    -L"$CUDA_HOME/lib64" "${npp_libs[@]}" -lm -o "$OUT/bench-kernel"
}

run_bench () {
  local bk=$OUT/bench-kernel

  local t=$SECONDS

  echo "==> build bench-kernel (nvcc, NPP when present)" >&2
  if build_bench_kernel >"$OUT/build-bench-kernel.log" 2>&1; then
    SUMMARY+=("PASS  build bench-kernel ($((SECONDS - t)) s, $(grep -q 'without' "$OUT/build-bench-kernel.log" && echo 'without NPP' || echo 'with NPP'), $OUT/build-bench-kernel.log)")
  else
    bk=$BUILD/tests/bench-kernel
    SUMMARY+=("FAIL  build bench-kernel ($OUT/build-bench-kernel.log); using $bk, built without NPP")
    FAILED=1
  fi
  # NPP is not timed on the wide rows (its box at r = 256 takes about a
  # second a call); a row takes seconds, and the limit is generous
  if need "$bk"; then
    step "bench-kernel" 540 bench-kernel.md "$bk"
  fi
  if need "$BUILD/tests/bench-element"; then
    step "bench-element" 240 bench-element.md $RUN "$BUILD/tests/bench-element"
  fi
}

case $MODE in
  check) run_check ;;
  core) run_core ;;
  element) run_element ;;
  bench) run_bench ;;
  all) run_check; run_bench ;;
  soak) run_soak "${2:-}" ;;
  denoise) run_denoise ;;
  mma) run_mma ;;
  latency) run_latency ;;
  load) run_load ;;
  hostile) run_hostile ;;
  wide) run_wide ;;
  candidates) run_candidates ;;
esac

{
  echo
  echo "## gpu-host.sh $MODE: $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - T0)) s"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
    sed 's/^/GPU, driver: /'
  gst-inspect-1.0 --version 2>/dev/null | sed -n 's/^GStreamer /GStreamer: /p'
  echo
  printf '%s\n' "${SUMMARY[@]}"
  for f in test-gpu.log test-gpu-stream.log test-gpu-mma.log \
      test-gpu-wide.log \
      test-gpu-untruncated.log test-gpu-bilateral.log \
      test-gpu-nlmeans-sums.log test-gpu-temporal.log test-gpu-window.log \
      test-gpu-element.log test-gpu-pipeline.log test-robustness.log \
      test-hostile.log cycles.log cycles-cuda-memory.log cycles-control.log \
      cycles-hostile-cuda.log cycles-hostile-cpu.log soak.log; do
    [ -f "$OUT/$f" ] || continue
    echo
    echo "### $f (end)"
    tail -n 14 "$OUT/$f"
  done
  for f in memcheck.log memcheck-stream.log memcheck-mma.log racecheck.log \
      racecheck-regions.log racecheck-mma.log \
      racecheck-pipeline.log \
      memcheck-robustness.log memcheck-wide.log racecheck-wide.log \
      memcheck-untruncated.log racecheck-untruncated.log \
      memcheck-bilateral.log racecheck-bilateral.log memcheck-temporal.log \
      memcheck-window.log racecheck-window.log memcheck-nlmeans-sums.log \
      racecheck-nlmeans-sums.log \
      memcheck-hostile.log $(cd "$OUT" && ls replay-*.log 2>/dev/null); do
    [ -f "$OUT/$f" ] || continue
    echo
    echo "### $f: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$OUT/$f" | tr '\n' ' ')"
  done
  for f in bench-kernel.md bench-kernel-wide.md bench-kernel-nlmeans.md \
      bench-kernel-temporal.md bench-element.md scaling.md \
      latency.md; do
    [ -f "$OUT/$f" ] || continue
    echo
    cat "$OUT/$f"
  done
} | tee "$OUT/summary.md"

exit $FAILED
