#!/bin/sh
# quiesce_bench_summary against the recorded reports in reports/ (medians of a real run of 2026-12-03, and a
# mean that must not be taken for the median): usage check_summary.sh SUMMARY MODE.
set -u
summary=$1
mode=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/reports/*.json "$work"/
fail() { echo "FAIL ($mode): $1"; echo "--- output:"; cat "$work/out"; exit 1; }
expect() { grep -E -q -- "$1" "$work/out" || fail "no line matching: $1"; }
case "$mode" in
  fixture)
    "$summary" "$work" >"$work/out" 2>&1; status=$?
    [ "$status" -eq 0 ] || fail "exit $status, expected 0"
    expect '^trace decode +44\.935 +>= 50 M events/s +NOT MET$'
    expect '^trace replay on the simulator +2\.498 +>= 2 M events/s +met$'
    expect '^campaign, engine workload, 1,000-operation cases +457\.747 +>= 1000 cases/s +NOT MET$'
    expect '^full stack against the bare simulator \(CPU time\) +2\.339 +<= 2\.5 x +met$'
    expect '^switch through the deterministic scheduler \(CPU time\) +20\.700 +<= 50 ns +met$'
    expect '^an hour of simulated kernel time +0\.016 +<= 1000 ms +met$'
    expect '^shrinking a failing 1,000-operation run: operations left +9\.000 +<= 12 ops +met$'
    expect '^11 met, 2 not met, 0 not measured'
    ;;
  strict)
    "$summary" --strict "$work" >"$work/out" 2>&1; status=$?
    [ "$status" -eq 1 ] || fail "exit $status, expected 1 (targets missed under --strict)"
    ;;
  missing)
    rm "$work/sched.json"
    "$summary" --strict "$work" >"$work/out" 2>&1; status=$?
    [ "$status" -eq 1 ] || fail "exit $status, expected 1"
    expect '^switch through the deterministic scheduler \(CPU time\) +- +<= 50 ns +not measured$'
    expect '^10 met, 2 not met, 1 not measured'
    ;;
  malformed)
    head -c 200 "$here/reports/trace.json" >"$work/trace.json"
    "$summary" "$work" >"$work/out" 2>&1; status=$?
    [ "$status" -eq 2 ] || fail "exit $status, expected 2"
    expect 'trace\.json: not JSON'
    ;;
  not-a-report)
    echo '{"benchmarks": 3}' >"$work/stack.json"
    "$summary" "$work" >"$work/out" 2>&1; status=$?
    [ "$status" -eq 2 ] || fail "exit $status, expected 2"
    expect 'stack\.json: no "benchmarks" array'
    ;;
  no-folder)
    "$summary" "$work/absent" >"$work/out" 2>&1; status=$?
    [ "$status" -eq 2 ] || fail "exit $status, expected 2"
    expect 'absent is not a folder'
    ;;
  *)
    echo "check_summary.sh: unknown mode $mode"; exit 2 ;;
esac
echo "ok ($mode)"
