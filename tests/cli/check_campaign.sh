#!/bin/sh
# quiesce campaign and quiesce merge, the way a user runs them: a seed range writes summary.json (a case a
# line) and junit.xml; two GoogleTest shards cover the range exactly once and acknowledge the protocol's
# status file; their merge is the unsharded report byte for byte; merge refuses an
# incomplete set, a file that is not a report, an edited or truncated report and its own input as output; a
# campaign checks its output folder and the size of its range before the first case; a bad seed range exits
# 2 naming the flag; a campaign
# against a planted bug (--mutant, in the raw workload's runtime or in the reference engine) exits 1 with
# each failing seed shrunk to a minimal trace in its folder, and so does quiesce run, whose later failing
# seeds get the command that reruns them.
quiesce="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
flags="--seeds 0..19 --jobs 2 --operations 200 --workload engine"

# shellcheck disable=SC2086
out="$("$quiesce" campaign $flags --out "$work/whole")" || { echo "$out"; fail "the campaign exited $?"; }
echo "$out" | tail -n 3
echo "$out" | grep -q "^campaign engine default: 20 cases, 0 failed$" || fail "no summary line for 20 cases"
echo "$out" | grep -Eq "^coverage probes reached: [0-9]+ of 18$" || fail "no probe report"
[ -s "$work/whole/summary.json" ] && [ -s "$work/whole/junit.xml" ] || fail "summary.json or junit.xml is missing"
[ "$(grep -c '^    {"seed":[0-9]*,"passed":true,' "$work/whole/summary.json")" = 20 ] ||
  fail "summary.json does not hold the 20 passing cases a line each"
grep -q '<testsuites name="quiesce" tests="20" failures="0">' "$work/whole/junit.xml" || fail "junit.xml does not count 20 cases"

for index in 0 1; do
  # shellcheck disable=SC2086
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$index GTEST_SHARD_STATUS_FILE="$work/status-$index" \
    "$quiesce" campaign $flags --out "$work/shards" >/dev/null || fail "shard $index exited $?"
  [ -e "$work/status-$index" ] || fail "shard $index did not create GTEST_SHARD_STATUS_FILE"
done
first="$work/shards/summary-shard-0-of-2.json"
second="$work/shards/summary-shard-1-of-2.json"
seeds_of() { sed -n 's/^    {"seed":\([0-9]*\),.*/\1/p' "$@" | sort -n | tr '\n' ' '; }
[ "$(seeds_of "$first" "$second")" = "$(seq 0 19 | tr '\n' ' ')" ] || fail "the shards do not cover 0..19 exactly once"
[ "$(seeds_of "$first")" = "0 2 4 6 8 10 12 14 16 18 " ] || fail "shard 0 of 2 does not hold the even seeds"

out="$("$quiesce" merge "$second" "$first" -o "$work/merged.json")" || { echo "$out"; fail "merge exited $?"; }
# A complete set of shards is the whole campaign again: the merged file is the unsharded one, byte for byte.
cmp -s "$work/whole/summary.json" "$work/merged.json" ||
  { diff "$work/whole/summary.json" "$work/merged.json" | head; fail "the merged report differs from the unsharded one"; }
echo "$out" | grep -q "^campaign engine default: 20 cases, 0 failed$" || fail "merge printed no summary line"

"$quiesce" merge "$first" -o "$work/gap.json" >"$work/gap.out" 2>&1
status=$?
[ "$status" = 2 ] || fail "merging one shard of two exited $status, expected 2"
grep -q "cover 10 of the campaign's 20 seeds" "$work/gap.out" || { cat "$work/gap.out"; fail "no message about the missing seeds"; }
echo "not json" >"$work/bad.json"
"$quiesce" merge "$work/bad.json" -o "$work/x.json" >"$work/bad.out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "bad.json is not JSON" "$work/bad.out" || { cat "$work/bad.out"; fail "a file that is not JSON: exit $status"; }

# Bad input to merge is refused with exit 2 and a sentence naming the file and the field or case, never a
# crash: a report without shards, a directory, an edited case, a truncated file, reversed seeds.
refused() {  # refused NAME EXPECTED-TEXT COMMAND...: the command exits 2 and says EXPECTED-TEXT
  name="$1" expected="$2"
  shift 2
  "$@" >"$work/$name.out" 2>&1
  status=$?
  [ "$status" = 2 ] && grep -qF -- "$expected" "$work/$name.out" ||
    { cat "$work/$name.out"; fail "$name: exit $status, expected 2 and '$expected'"; }
  grep -q "json.exception" "$work/$name.out" && fail "$name: the message is raw nlohmann exception text"
  return 0
}
edited() {  # edited NAME SED-SCRIPT: the unsharded summary.json, edited
  sed "$2" "$work/whole/summary.json" >"$work/$1.json"
}
edited no-shards '/^  "shards": \[$/,/^  \],$/c\"shards": [],'
refused no-shards "no-shards.json: the report names no shard" "$quiesce" merge "$work/no-shards.json" -o "$work/m.json"
refused directory "is a directory" "$quiesce" merge "$work/whole" -o "$work/m.json"
edited no-digest 's/^\(    {"seed":3,.*\),"digest":[0-9]*/\1/'
refused no-digest "no-digest.json: case for seed 3: field 'digest' is missing" \
  "$quiesce" merge "$work/no-digest.json" -o "$work/m.json"
edited negative 's/^    {"seed":3,\(.*\)"operations":[0-9]*/    {"seed":3,\1"operations":-1/'
refused negative "case for seed 3: field 'operations' is -1, not an unsigned integer" \
  "$quiesce" merge "$work/negative.json" -o "$work/m.json"
edited flipped 's/^    {"seed":3,"passed":true/    {"seed":3,"passed":false/'
refused flipped "case for seed 3: field 'passed' is false but the case lists 0 failures" \
  "$quiesce" merge "$work/flipped.json" -o "$work/m.json"
edited cases-total 's/^  "cases_total": 20,/  "cases_total": 21,/'
refused cases-total "field 'cases_total' is 21 but the report holds 20 cases" \
  "$quiesce" merge "$work/cases-total.json" -o "$work/m.json"
edited reversed '/^  "seeds": {/,/^  },/{s/"first": 0/"first": 30/;s/"last": 19/"last": 3/;}'
refused reversed "the seed range 30..3 ends before it starts" "$quiesce" merge "$work/reversed.json" -o "$work/m.json"
edited foreign 's/^    {"seed":3,/    {"seed":25,/'
refused foreign "case for seed 25: the seed is outside the report's range 0..19" \
  "$quiesce" merge "$work/foreign.json" -o "$work/m.json"
edited repeated-key 's/^\(    {"seed":3,"passed":true\)/\1,"passed":false/'
refused repeated-key "repeated-key.json names the key 'passed' twice in one object" \
  "$quiesce" merge "$work/repeated-key.json" -o "$work/m.json"
head -c 500 "$work/whole/summary.json" >"$work/truncated.json"
refused truncated "truncated.json is not JSON: it ends before the JSON document does (after byte 500)" \
  "$quiesce" merge "$work/truncated.json" -o "$work/m.json"
# Merging a report onto itself (a complete one, which would merge) is refused before anything is written.
cp "$work/whole/summary.json" "$work/self.json"
refused self "is one of the reports to merge" "$quiesce" merge "$work/self.json" -o "$work/self.json"
cmp -s "$work/whole/summary.json" "$work/self.json" || fail "merge wrote over its own input"

# A campaign checks its output before the first case: a report path that is a directory, a folder that takes
# no file (/proc) or that cannot be made exit 2 at once, and leave no report behind.
mkdir -p "$work/blocked/junit.xml"
refused blocked-junit "cannot write report '$work/blocked/junit.xml': it is a directory" \
  "$quiesce" campaign --seeds 0..3 --operations 20 --out "$work/blocked"
[ -e "$work/blocked/summary.json" ] && fail "a campaign that could not write junit.xml left a summary.json"
grep -q "cases" "$work/blocked-junit.out" && fail "the campaign ran cases before it found it could not write junit.xml"
refused read-only "cannot write report '/proc/summary.json'" "$quiesce" campaign --seeds 0..999 --out /proc
grep -q "cases" "$work/read-only.out" && fail "the campaign ran cases before it found /proc takes no file"
touch "$work/plain-file"
refused under-a-file "cannot create the output folder $work/plain-file/out" \
  "$quiesce" campaign --seeds 0..3 --out "$work/plain-file/out"
# A range above the maximum per invocation is refused before a seed list or a result exists; the address
# space limit makes a regression fail fast instead of exhausting the machine.
refused huge-campaign "above the maximum of 100000000 for one invocation: shard a larger range with GTEST_TOTAL" \
  sh -c 'ulimit -v 4000000; exec "$@"' sh "$quiesce" campaign --seeds 0..1000000000 --out "$work/huge"
refused huge-run "gives this run 2^64 seeds, above the maximum" \
  sh -c 'ulimit -v 4000000; exec "$@"' sh "$quiesce" run --seeds 0..18446744073709551615 --out "$work/huge"
refused many-shards "GTEST_TOTAL_SHARDS 2000000 is above the maximum of 1000000" \
  env GTEST_TOTAL_SHARDS=2000000 GTEST_SHARD_INDEX=0 "$quiesce" campaign --seeds 0..3 --out "$work/x"

"$quiesce" campaign --seeds 9..3 --out "$work/bad" >"$work/range.out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q -- "--seeds" "$work/range.out" || { cat "$work/range.out"; fail "a backwards seed range: exit $status"; }
# A campaign against a planted bug: it fails, and each failing seed (up to ten) is recorded and shrunk into
# the output folder, with the command that replays it in the console, summary.json and junit.xml.
"$quiesce" campaign --seeds 0..11 --jobs 2 --operations 300 --workload raw --mutant free-while-pinned \
  --out "$work/mutant" >"$work/mutant.out" 2>&1
status=$?
[ "$status" = 1 ] || { tail -n 20 "$work/mutant.out"; fail "the campaign against a planted bug exited $status, expected 1"; }
line="$(grep '^seed 0: violation caller.release-while-pinned; shrank [0-9]* calls to [0-9]* ' "$work/mutant.out")" ||
  { tail -n 20 "$work/mutant.out"; fail "seed 0 was not shrunk to its release-while-pinned violation"; }
echo "$line"
calls="$(echo "$line" | sed 's/.* calls to \([0-9]*\) .*/\1/')"
[ "$calls" -le 12 ] || fail "seed 0 shrank to $calls calls, more than 12"
minimal="$work/mutant/seed-0.min.qtrace"
[ -s "$minimal" ] && [ -s "$work/mutant/seed-0.qtrace" ] || fail "seed 0's traces are not in the output folder"
echo "$line" | grep -q "quiesce replay $minimal\$" || fail "the console does not give the command that replays seed 0"
"$quiesce" replay "$minimal" | grep -q "^faithful" || fail "seed 0's minimal trace does not replay faithfully"
"$quiesce" trace print "$minimal" | grep -q "violation caller.release-while-pinned" || fail "seed 0's minimal trace does not hold the violation"
grep -q "^    {\"seed\":0,\"passed\":false,.*\"replay\":\"quiesce replay $minimal\"}" "$work/mutant/summary.json" ||
  fail "summary.json does not give seed 0's replay command"
grep -q "replay: quiesce replay $minimal" "$work/mutant/junit.xml" || fail "junit.xml does not give seed 0's replay command"
"$quiesce" campaign --seeds 0..1 --workload raw --mutant no-such-bug --out "$work/x" >"$work/x.out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "'no-such-bug' is not a raw-workload mutant; those are: free-while-pinned" "$work/x.out" ||
  { cat "$work/x.out"; fail "an unknown --mutant: exit $status"; }
"$quiesce" campaign --seeds 0..1 --mutant free-while-pinned --out "$work/x" >"$work/x.out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "add --workload raw" "$work/x.out" || { cat "$work/x.out"; fail "--mutant without --workload raw: exit $status"; }
# A bug planted in the reference engine goes the same way on the engine workload: the failing seed's trace
# holds the calls the mutated engine made, and shrinks to the violation they broke.
"$quiesce" campaign --seeds 0..3 --jobs 2 --operations 300 --mutant engine-release-before-fence \
  --out "$work/engine-mutant" >"$work/engine-mutant.out" 2>&1
status=$?
[ "$status" = 1 ] || { tail -n 20 "$work/engine-mutant.out"; fail "the campaign against an engine bug exited $status, expected 1"; }
line="$(grep '^seed 0: violation caller\.[a-z-]*; shrank [0-9]* calls to [0-9]* ' "$work/engine-mutant.out")" ||
  { tail -n 20 "$work/engine-mutant.out"; fail "seed 0 of the engine mutant was not shrunk to a violation"; }
echo "$line"
calls="$(echo "$line" | sed 's/.* calls to \([0-9]*\) .*/\1/')"
[ "$calls" -le 12 ] || fail "seed 0 of the engine mutant shrank to $calls calls, more than 12"
"$quiesce" replay "$work/engine-mutant/seed-0.min.qtrace" | grep -q "^faithful" ||
  fail "seed 0's minimal trace of the engine mutant does not replay faithfully"
"$quiesce" campaign --seeds 0..1 --workload raw --mutant engine-release-before-fence --out "$work/x" >"$work/x.out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "plants its bug in the reference engine: use --workload engine" "$work/x.out" ||
  { cat "$work/x.out"; fail "an engine mutant with --workload raw: exit $status"; }
"$quiesce" campaign --seeds 0..1 --mutant no-such-bug --out "$work/x" >"$work/x.out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "'no-such-bug' is not an engine mutant; those are: engine-lose-deferred-error" "$work/x.out" ||
  { cat "$work/x.out"; fail "an unknown engine --mutant: exit $status"; }
# The default campaign, quiesce run, does the same with its failing seeds: the first ten shrunk into --out,
# the others given the quiesce run command that reruns them, which fails the same way.
"$quiesce" run --seeds 0..11 --jobs 2 --operations 300 --workload raw --mutant free-while-pinned \
  --out "$work/run" >"$work/run.out" 2>&1
status=$?
[ "$status" = 1 ] || { tail -n 20 "$work/run.out"; fail "quiesce run against a planted bug exited $status, expected 1"; }
[ "$(grep -c '^seed [0-9]*: violation caller.release-while-pinned; shrank ' "$work/run.out")" = 10 ] ||
  { tail -n 20 "$work/run.out"; fail "quiesce run did not shrink its first ten failing seeds"; }
[ -s "$work/run/seed-9.min.qtrace" ] || fail "quiesce run did not write seed 9's minimal trace into --out"
rerun="$(sed -n 's/^replay seed 11: //p' "$work/run.out")"
[ "$rerun" = "quiesce run --seed 11 --faults default --workload raw --operations 300 --mutant free-while-pinned" ] ||
  { tail -n 5 "$work/run.out"; fail "no rerun command for seed 11 past the ten shrunk"; }
# shellcheck disable=SC2086
"$quiesce" ${rerun#quiesce } >"$work/rerun.out" 2>&1
status=$?
[ "$status" = 1 ] && grep -q "^failed: R1: " "$work/rerun.out" || { tail -n 5 "$work/rerun.out"; fail "the rerun of seed 11 exited $status"; }
echo "campaign, shards, merge and shrunk failing seeds: every check passed"
