#!/usr/bin/env bash
# The script the GPU host runs from the repository root (copied into .hil/run.sh by tools/hil-bundle.sh).
# Every step logs under $OUT (at most 8 files come back): env.txt, tests.log, conformance.log,
# sanitizer.log, bench.json, bench.txt, hil.log, cost_profile.txt. A failing step does not stop the others.
set -u
out="${OUT:-/tmp/hil-out}"
mkdir -p "$out"
hil="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$hil/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin="$hil/bin"
step() { echo "=== $* ($(date -u +%H:%M:%S))"; }

{
  step environment
  date -u; uname -a; grep PRETTY_NAME /etc/os-release; ldd --version | head -1
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|CPU max MHz|L3 cache):'
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nvidia-smi | head -15
  ls "$bin"; ls "$hil/lib"
  [ -x "$bin/quiesce" ] && "$bin/quiesce" info
} >"$out/env.txt" 2>&1

{
  for test in cuda_driver_test cuda_device_test; do
    [ -x "$bin/$test" ] || { echo "missing $test"; continue; }
    step "$test"
    "$bin/$test" --gtest_color=no; echo "exit status $?"
  done
} >"$out/tests.log" 2>&1

{
  step quiesce_conformance_cuda
  "$bin/quiesce_conformance_cuda" --gtest_color=no; echo "exit status $?"
  # The same cases from the quiesce command (a bundle built before it had the subcommand skips this).
  if [ -x "$bin/quiesce" ] && "$bin/quiesce" --help 2>&1 | grep -Eq '^ +conformance( |$)'; then
    step "quiesce conformance --backend cuda"
    "$bin/quiesce" conformance --backend cuda --failures-only; echo "exit status $?"
  fi
} >"$out/conformance.log" 2>&1

{
  sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)"
  if [ -n "$sanitizer" ]; then
    # DeviceFaults.* are left out: their driver errors (an OOM, invalid launches, the illegal address) are
    # deliberate, and memcheck counts API errors too.
    step "compute-sanitizer memcheck: cuda_device_test without DeviceFaults.*"
    "$sanitizer" --tool memcheck --error-exitcode 9 "$bin/cuda_device_test" --gtest_color=no \
      --gtest_filter='-DeviceFaults.*'; echo "exit status $?"
    if [ -x "$bin/cuda_hil_test" ]; then
      step "compute-sanitizer memcheck: the differential runs on the GPU"
      "$sanitizer" --tool memcheck --error-exitcode 9 "$bin/cuda_hil_test" --gtest_color=no \
        --gtest_filter='DifferentialGpu.*'; echo "exit status $?"
    fi
  else
    echo "compute-sanitizer is not on this machine"
  fi
} >"$out/sanitizer.log" 2>&1

{
  step cuda_bench
  # The benchmarks set their own repetitions (5 or 10, at least 0.5 s each) and report aggregates only.
  [ -x "$bin/cuda_bench" ] && "$bin/cuda_bench" --benchmark_out="$out/bench.json" --benchmark_out_format=json
  echo "exit status $?"
  python3 - "$out/bench.json" <<'PY'
import json, re, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if "Interleaved" in b["run_name"] and "rounds" not in b:
        print(f"{b['run_name']}: {b.get('error_message', 'no figures')}")
        continue
    if b["run_name"].startswith("BM_SubmitInterleaved/"):
        n = b["run_name"].split("/")[1]
        print(f"batch {n}, interleaved in one loop ({b['rounds']:.0f} rounds of 16 batches per path): host ns per launch "
              f"raw {b['raw_ns_per_launch']:.0f}, Device::submit {b['device_ns_per_launch']:.0f}, "
              f"Engine::submit (WhenNeeded) {b['engine_ns_per_launch']:.0f}; Device/raw {b['device_over_raw']:.3f} "
              f"(median of rounds {b['device_over_raw_median']:.3f}), Engine/raw {b['engine_over_raw']:.3f} "
              f"(median of rounds {b['engine_over_raw_median']:.3f})")
        continue
    if "KernelsInterleaved" in b["run_name"]:
        kind = "empty" if "Empty" in b["run_name"] else "64-byte fill"
        print(f"1000 {kind} kernels through cuda::Device, eager and graph alternated ({b['rounds']:.0f} rounds): "
              f"eager {b['eager_us']:.0f} us, graph {b['graph_us']:.0f} us, speed-up {b['speedup']:.2f}x "
              f"(median of rounds {b['speedup_median']:.2f}x)")
        continue
    if b.get("aggregate_name") != "median":
        continue
    name = re.sub(r"/(min_time|repeats|real_time)[^/]*", "", b["run_name"])
    rows[name] = b["real_time"]  # ns (the benchmarks' default unit)
def t(name):
    return rows.get(name)
for n in (1, 64):
    d, e = t(f"BM_DeviceSubmit/{n}"), t(f"BM_EngineSubmit/{n}")
    do, eo = t(f"BM_DeviceSubmitOnDemand/{n}"), t(f"BM_EngineSubmitOnDemand/{n}")
    r, rr, rw = t(f"BM_RawLaunch/{n}"), t(f"BM_RawLaunchAndRecord/{n}"), t(f"BM_RawLaunchAndWriteValue/{n}")
    if d and r and rr and rw:
        print(f"batch {n}: host ns per launch (median): Device::submit {d/n:.0f}, Engine::submit {e/n:.0f}, "
              f"raw launch {r/n:.0f}, raw launch+cuEventRecord {rr/n:.0f}, raw launch+cuStreamWriteValue64 {rw/n:.0f}")
        print(f"batch {n}: Device::submit / raw {d/r:.3f}, / (raw+record) {d/rr:.3f}; Engine::submit / raw {e/r:.3f}; "
              f"per-batch signal: record {rr-r:.0f} ns, write-value {rw-r:.0f} ns")
    if do and eo:
        print(f"batch {n}, on-demand completion: Device::submit {do/n:.0f} ns/launch ({do/r:.3f}x raw), "
              f"Engine::submit {eo/n:.0f} ns/launch ({eo/r:.3f}x raw)")
    w, wo = t(f"BM_EngineSubmitWhenNeeded/{n}"), t(f"BM_EngineSubmitWhenNeededOnDemand/{n}")
    if w and wo and r:
        print(f"batch {n}, Engine::submit with SubmitProgress::WhenNeeded: per-batch {w/n:.0f} ns/launch "
              f"({w/r:.3f}x raw), on-demand {wo/n:.0f} ns/launch ({wo/r:.3f}x raw)")
for kernel in ("", "Empty"):
    for prefix in ("", "Raw"):
        e, g = t(f"BM_{prefix}EagerThousand{kernel}Kernels"), t(f"BM_{prefix}GraphThousand{kernel}Kernels")
        if e and g:
            print(f"1000 {'empty' if kernel else '64-byte fill'} kernels "
                  f"{'raw driver' if prefix else 'through cuda::Device'}: eager {e/1000:.0f} us, "
                  f"graph {g/1000:.0f} us (medians of 10), graph speed-up {e/g:.2f}x")
PY
  # The campaign benchmark on this host's CPU (one thread, no GPU): cases per second of the simulator-side
  # campaign (bench/campaign_bench.cc), beside the figures of the 2-core build machine.
  # The bundle is built with the C library's malloc; the default build links tcmalloc, which the bundle
  # carries to preload for a second run.
  for allocator in system tcmalloc; do
    [ -x "$bin/quiesce_bench_campaign" ] || break
    preload=""
    if [ "$allocator" = tcmalloc ]; then
      preload="$hil/lib/libtcmalloc_minimal.so.4"
      [ -f "$preload" ] || { echo "no tcmalloc in the bundle"; break; }
    fi
    step "quiesce_bench_campaign, one thread of this host's CPU, $allocator malloc"
    LD_PRELOAD="$preload" "$bin/quiesce_bench_campaign" --benchmark_filter=CampaignCase --benchmark_min_time=2 \
      --benchmark_color=false --benchmark_repetitions=3
    echo "exit status $?"
  done
} >"$out/bench.txt" 2>&1

{
  if [ -x "$bin/quiesce" ]; then
    subcommands="$("$bin/quiesce" --help 2>&1)"
    if grep -Eq '^ +hil( |$)' <<<"$subcommands"; then
      step "quiesce hil (calibrates, then the prediction report with that profile)"
      timeout 300 "$bin/quiesce" hil --differential-runs 20 --calibrate "$out/cost_profile.txt"; echo "exit status $?"
    fi
    if grep -Eq '^ +calibrate( |$)' <<<"$subcommands" && [ ! -s "$out/cost_profile.txt" ]; then
      step "quiesce calibrate"; "$bin/quiesce" calibrate --output "$out/cost_profile.txt"; echo "exit status $?"
    fi
  fi
  if [ -x "$bin/cuda_hil_test" ]; then
    step "cuda_hil_test: differential, calibration, hil_command end to end"
    QUIESCE_CALIBRATE_OUT=/tmp/cost_profile_test.txt timeout 240 "$bin/cuda_hil_test" --gtest_color=no
    echo "exit status $?"
  fi
} >"$out/hil.log" 2>&1
tail -n 3 "$out/tests.log" "$out/conformance.log" "$out/sanitizer.log"; cat "$out/bench.txt" | tail -n 32
