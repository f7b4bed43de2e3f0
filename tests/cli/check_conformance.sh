#!/bin/sh
# The checks of `quiesce conformance` that tests/cli/CMakeLists.txt registers, one per mode. Each prints
# the command's output, then why it failed. Exit 0 held, 1 failed, 77 skipped (with the reason).
#
# usage: check_conformance.sh QUIESCE sim|filter|cuda-without-driver|bad-backend
quiesce=$1
mode=$2

fail() {
  echo "check_conformance $mode: $*"
  exit 1
}

# Runs quiesce with the arguments given; sets `out` (stdout and stderr) and `status`, and prints the output.
run() {
  out=$("$quiesce" "$@" 2>&1)
  status=$?
  printf '%s\n' "$out"
}

summary_regex='^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'

case "$mode" in
  sim)
    run conformance --backend sim
    [ "$status" -eq 0 ] || fail "expected exit status 0, got $status"
    last=$(printf '%s\n' "$out" | tail -n 1)
    printf '%s\n' "$last" | grep -Eq '^[1-9][0-9]* passed, 0 failed(, [0-9]+ skipped)?$' ||
      fail "the last line is not the summary 'N passed, 0 failed': '$last'"
    for prefix in Sim Injector Validator ValidatorMisuse; do
      printf '%s\n' "$out" | grep -q "^PASS  $prefix/" || fail "no case of the $prefix stacks passed"
    done
    if printf '%s\n' "$out" | grep -Eq '^(PASS|FAIL|SKIP)  (Cuda|ValidatedCuda)/'; then
      fail "--backend sim ran a case of the cuda backend"
    fi
    ;;
  filter)
    run conformance --backend sim --filter '*.DeviceInfoIsStable'
    [ "$status" -eq 0 ] || fail "expected exit status 0, got $status"
    cases=$(printf '%s\n' "$out" | grep -Ec '^(PASS|FAIL|SKIP)  ')
    others=$(printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP)  ' | grep -vc '\.DeviceInfoIsStable ')
    [ "$cases" -gt 0 ] || fail "the filter selected no case"
    [ "$others" -eq 0 ] || fail "$others case(s) ran that the filter does not select"
    printf '%s\n' "$out" | tail -n 1 | grep -q "^$cases passed, 0 failed$" ||
      fail "the summary does not count the $cases case(s) printed"
    run conformance --backend sim --filter 'NoSuchSuite*'
    [ "$status" -eq 2 ] || fail "a filter that selects nothing: expected exit status 2, got $status"
    printf '%s\n' "$out" | grep -q "selects no conformance case" || fail "no message says that nothing was selected"
    ;;
  cuda-without-driver)
    if "$quiesce" info --backend cuda >/dev/null 2>&1; then
      echo "skipped: a CUDA driver is present; this checks quiesce conformance --backend cuda without one"
      exit 77
    fi
    run conformance --backend cuda
    [ "$status" -eq 3 ] || fail "expected exit status 3 (no CUDA driver), got $status"
    printf '%s\n' "$out" | grep -q 'no CUDA driver: .' || fail "no message says 'no CUDA driver: <reason>'"
    if printf '%s\n' "$out" | grep -Eq "$summary_regex"; then fail "it printed a summary without a driver"; fi
    # The filter is judged before the driver: one that selects nothing is the caller's to fix anywhere.
    run conformance --backend cuda --filter 'NoSuchSuite*'
    [ "$status" -eq 2 ] || fail "a filter that selects nothing, without a driver: expected exit status 2, got $status"
    printf '%s\n' "$out" | grep -q "selects no conformance case of the cuda backend" ||
      fail "no message says that nothing was selected"
    run conformance --backend cuda --filter '*.DeviceInfoIsStable'
    [ "$status" -eq 3 ] || fail "a filter that selects cases, without a driver: expected exit status 3, got $status"
    if printf '%s\n' "$out" | grep -Eq '^(PASS|FAIL|SKIP)  '; then fail "it printed a case without a driver"; fi
    ;;
  bad-backend)
    run conformance --backend gpu
    [ "$status" -eq 2 ] || fail "expected exit status 2 (bad usage), got $status"
    printf '%s\n' "$out" | grep -q -- '--backend' || fail "the message does not name the flag --backend"
    printf '%s\n' "$out" | grep -q 'gpu' || fail "the message does not name the value 'gpu'"
    ;;
  *)
    echo "usage: check_conformance.sh QUIESCE sim|filter|cuda-without-driver|bad-backend" >&2
    exit 2
    ;;
esac
echo "check_conformance $mode: held"
