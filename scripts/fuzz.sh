#!/usr/bin/env bash
# Coverage-guided fuzzing of the targets in fuzz/CMakeLists.txt (KUBESCHED_FUZZ_TARGETS); see
# fuzz/README.md. `make fuzz` and `make fuzz-replay` call this.
#
#   scripts/fuzz.sh run [TARGET...]         build the targets instrumented, fuzz each in turn for
#                                           FUZZ_SECONDS, print a summary; exit 1 if any crashed
#   scripts/fuzz.sh replay TARGET FILE...   run inputs once through the target (ASan/UBSan report)
#   scripts/fuzz.sh build [TARGET...]       only build
#
# Environment: FUZZ_SECONDS (600 per target), FUZZ_ENGINE (libfuzzer, the default, or afl),
# FUZZ_TIMEOUT (seconds one input may take before it counts as a hang; 10).
# Seeds come from fuzz/corpus/<name>; the working corpus, findings and log go to
# build/<preset>/out/<name>/ (preset fuzz for libFuzzer, fuzz-afl for AFL++).
set -euo pipefail
cd "$(dirname "$0")/.."

engine=${FUZZ_ENGINE:-libfuzzer}
seconds=${FUZZ_SECONDS:-600}
hang_seconds=${FUZZ_TIMEOUT:-10}
case "$engine" in
  libfuzzer) preset=fuzz ;;
  afl) preset=fuzz-afl ;;
  *) echo "FUZZ_ENGINE must be libfuzzer or afl, not '$engine'" >&2; exit 2 ;;
esac
build_dir=build/$preset
out_root=$build_dir/out

# Configures every time (a few seconds), so targets.txt lists what fuzz/CMakeLists.txt lists now.
configure() {
  cmake --preset "$preset" >/dev/null
}

# The targets named on the command line, or every one in KUBESCHED_FUZZ_TARGETS.
select_targets() {
  local all
  all=$(cat "$build_dir/fuzz/targets.txt")
  if [ $# -eq 0 ]; then
    echo "$all"
    return
  fi
  local t
  for t in "$@"; do
    if ! grep -qx "$t" <<<"$all"; then
      echo "unknown fuzz target '$t' (KUBESCHED_FUZZ_TARGETS: $(echo $all))" >&2
      exit 2
    fi
    echo "$t"
  done
}

build() {
  local targets=() t
  for t in "$@"; do targets+=("${t}_fuzz"); done
  if [ ${#targets[@]} -eq 0 ]; then
    echo "no fuzz target to build" >&2
    exit 2
  fi
  cmake --build --preset "$preset" --target "${targets[@]}"
}

# Reports go to the terminal in full: symbolized stacks, every UBSan error fatal.
sanitizer_env() {
  local symbolizer
  for symbolizer in /usr/lib/llvm-16/bin/llvm-symbolizer "$(command -v llvm-symbolizer || true)"; do
    if [ -x "$symbolizer" ]; then
      # The sanitizers want the real file (Debian's /usr/bin/llvm-symbolizer is a link).
      symbolizer=$(readlink -f "$symbolizer")
      export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$symbolizer}
      export UBSAN_SYMBOLIZER_PATH=${UBSAN_SYMBOLIZER_PATH:-$symbolizer}
      break
    fi
  done
  export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:symbolize=1}
}

# One line of `key: value` from AFL++'s fuzzer_stats.
afl_stat() { sed -n "s/^$2 *: *//p" "$1" | head -1; }

summary_lines=()
crashed=0

run_libfuzzer() {
  local name=$1 bin=$build_dir/fuzz/${1}_fuzz out=$out_root/$1
  local log=$out/fuzz.log dict=()
  mkdir -p "$out/corpus" "$out/findings"
  if [ -f "fuzz/dict/$name.dict" ]; then dict=(-dict="fuzz/dict/$name.dict"); fi
  local before
  before=$(find "$out/findings" -type f | sort)
  local seeds=()
  if [ -d "fuzz/corpus/$name" ]; then seeds=("fuzz/corpus/$name"); fi
  echo "== $name: libFuzzer for ${seconds}s (log: $log)"
  # -fork=1: the fuzzing runs in a child process that is restarted after a crash, hang or OOM, so
  # one finding does not end the run; the parent merges each child's new inputs into the corpus.
  sanitizer_env
  local rc=0
  "$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout="$hang_seconds" -rss_limit_mb=2560 \
    -artifact_prefix="$out/findings/" "${dict[@]}" "$out/corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  # Fork mode's progress lines: "#N: cov: C ft: F corp: K exec/s: E oom/timeout/crash: O/T/X time: Ss ...".
  local last execs secs cov ft total corp
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
  if [ -z "$last" ]; then
    echo "   $name: libFuzzer did not run (exit $rc); the end of $log:" >&2
    tail -20 "$log" >&2
    summary_lines+=("$name: FAILED TO RUN (exit $rc, see $log)")
    crashed=1
    return
  fi
  execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
  secs=$(sed -nE 's/.* time: ([0-9]+)s.*/\1/p' <<<"$last")
  total=$(sed -nE 's/^INFO: Loaded 1 modules +\(([0-9]+) inline 8-bit counters.*/\1/p' "$log" | head -1)
  corp=$(find "$out/corpus" -type f | wc -l)
  # Coverage as a plain (non-fork) run reports it: the working corpus run once, "INITED cov: ft:".
  # (Fork mode's own cov counts differently and is not comparable with other runs.)
  local inited
  "$bin" -runs=0 -timeout="$hang_seconds" -rss_limit_mb=2560 "$out/corpus" >"$out/coverage.log" 2>&1 || true
  inited=$(grep -E '^#[0-9]+[[:space:]]+INITED' "$out/coverage.log" | tail -1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$inited")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$inited")
  local new=() f
  mapfile -t new < <(comm -13 <(echo "$before") <(find "$out/findings" -type f | sort) | grep -v '^$' || true)
  local crashes=0 hangs=0 ooms=0
  for f in "${new[@]}"; do
    case "$(basename "$f")" in
      timeout-*) hangs=$((hangs + 1)) ;;
      oom-*) ooms=$((ooms + 1)) ;;
      *) crashes=$((crashes + 1)) ;;  # crash-, leak-, and anything else libFuzzer saves
    esac
  done
  summary_lines+=("$(printf '%-10s %11s execs %7s/s  cov %s/%s edges, ft %s  corpus %s  crashes %s  hangs %s  ooms %s' \
    "$name" "$execs" "$(( ${secs:-0} > 0 ? execs / secs : 0 ))" "${cov:-?}" "${total:-?}" "${ft:-?}" "$corp" "$crashes" "$hangs" "$ooms")")
  if [ ${#new[@]} -gt 0 ]; then
    crashed=1
    # A bug is usually found again and again: show each distinct report line once (fork mode logs
    # the children's "ERROR:" and "runtime error:" lines), then the smallest inputs.
    local line
    while IFS= read -r line; do summary_lines+=("    $line"); done < <(
      grep -E 'ERROR:|runtime error:' "$log" | sed -E 's/==[0-9]+==//; s/0x[0-9a-f]+/0x.../g' |
        sort -u | head -5)
    while IFS= read -r f; do summary_lines+=("    $f"); done < <(ls -1Sr "${new[@]}" | head -5)
    if [ ${#new[@]} -gt 5 ]; then summary_lines+=("    ... and $((${#new[@]} - 5)) more in $out/findings"); fi
  fi
}

run_afl() {
  local name=$1 bin=$build_dir/fuzz/${1}_fuzz out=$out_root/$1
  local log=$out_root/$name.log seeds=$out_root/$name.seeds
  # A fresh run each time, seeded with fuzz/corpus/<name> plus the previous run's queue; the
  # previous run's findings stay in <name>.prev.
  rm -rf "$seeds" "$out.prev"
  mkdir -p "$seeds"
  if [ -d "fuzz/corpus/$name" ]; then cp fuzz/corpus/"$name"/* "$seeds"/; fi
  if [ -z "$(ls -A "$seeds")" ]; then echo > "$seeds/empty"; fi  # AFL++ needs one seed
  if [ -d "$out/default/queue" ]; then
    find "$out/default/queue" -maxdepth 1 -type f -name 'id:*' -exec sh -c 'for f; do cp "$f" "$0/q-$(basename "$f" | cut -c4-9)"; done' "$seeds" {} +
    mv "$out" "$out.prev"
  fi
  local dict=()
  if [ -f "fuzz/dict/$name.dict" ]; then dict=(-x "fuzz/dict/$name.dict"); fi
  echo "== $name: AFL++ for ${seconds}s (log: $log)"
  local rc=0
  # No UI (the log is a file), no CPU binding (the machine is shared), any core_pattern accepted.
  AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
    afl-fuzz -V "$seconds" -t "$((hang_seconds * 1000))" -m none -i "$seeds" -o "$out" "${dict[@]}" \
    -- "$bin" >"$log" 2>&1 || rc=$?
  local stats=$out/default/fuzzer_stats
  if [ ! -f "$stats" ]; then
    echo "   $name: afl-fuzz did not run (exit $rc); the end of $log:" >&2
    tail -20 "$log" | sed 's/\x1b\[[0-9;]*m//g' >&2
    summary_lines+=("$name: FAILED TO RUN (see $log)")
    crashed=1
    return
  fi
  local crashes hangs
  crashes=$(afl_stat "$stats" saved_crashes)
  hangs=$(afl_stat "$stats" saved_hangs)
  summary_lines+=("$(printf '%-10s %10s execs  %6s/s  cov %s/%s edges (%s)  corpus %s  stability %s  crashes %s  hangs %s' \
    "$name" "$(afl_stat "$stats" execs_done)" "$(afl_stat "$stats" execs_per_sec | cut -d. -f1)" \
    "$(afl_stat "$stats" edges_found)" "$(afl_stat "$stats" total_edges)" "$(afl_stat "$stats" bitmap_cvg)" \
    "$(afl_stat "$stats" corpus_count)" "$(afl_stat "$stats" stability)" "$crashes" "$hangs")")
  if [ "${crashes:-0}" -gt 0 ] || [ "${hangs:-0}" -gt 0 ]; then
    crashed=1
    local f
    while IFS= read -r f; do summary_lines+=("    $f"); done < <(find "$out/default/crashes" "$out/default/hangs" -type f -name 'id:*' | sort)
  fi
}

cmd=${1:-run}
shift || true
case "$cmd" in
  build)
    configure
    selected=$(select_targets "$@")
    mapfile -t targets <<<"$selected"
    build "${targets[@]}"
    ;;
  run)
    configure
    selected=$(select_targets "$@")
    mapfile -t targets <<<"$selected"
    build "${targets[@]}"
    for t in "${targets[@]}"; do
      "run_$engine" "$t"
    done
    echo
    echo "== fuzz summary ($engine, ${seconds}s per target; replay a finding with: make fuzz-replay FUZZ_TARGET=<name> FUZZ_INPUT=<file>)"
    printf '%s\n' "${summary_lines[@]}"
    exit "$crashed"
    ;;
  replay)
    if [ $# -lt 2 ]; then
      echo "usage: $0 replay TARGET FILE..." >&2
      exit 2
    fi
    configure
    name=$1
    shift
    select_targets "$name" >/dev/null
    build "$name"
    sanitizer_env
    # Both libFuzzer and libAFLDriver run each file once when given files.
    exec "$build_dir/fuzz/${name}_fuzz" "$@"
    ;;
  *)
    echo "usage: $0 run|build [TARGET...] | replay TARGET FILE..." >&2
    exit 2
    ;;
esac
