#!/bin/sh
# Bad input to the quiesce command, the way a user gives it: each case exits 2 with a message that names
# what is wrong, and loses nothing. A directory or a device given as a fault plan or a trace; flags of one
# seed mixed with a campaign's, or recording flags without --seed; empty paths; an output that is one of
# the inputs (the timeline or the minimal trace over its own trace, a trace over the fault plan), which
# must leave the input as it was; an output folder that does not exist, refused before the case runs, and
# a campaign's --out where no folder can be made;
# standard output that cannot be written. Also what is accepted: a trace converted onto itself keeps its
# records, and an output named .jsonl is JSON Lines unless told otherwise.
quiesce="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# refused EXPECTED ARGS...: the command exits 2 and prints EXPECTED (a fixed string).
refused() {
  expected="$1"; shift
  "$quiesce" "$@" >"$work/out" 2>&1
  status=$?
  [ "$status" = 2 ] || { tail -n 5 "$work/out"; fail "quiesce $* exited $status, expected 2"; }
  grep -qF -- "$expected" "$work/out" || { cat "$work/out"; fail "quiesce $*: no message '$expected'"; }
  ! grep -q "^operations:" "$work/out" || fail "quiesce $*: the case ran before the input was refused"
}

mkdir "$work/folder"
refused "fault plan '$work/folder' is a directory" run --seed 1 --operations 20 --faults "$work/folder"
refused "fault plan '/dev/zero' is a device" run --seed 1 --operations 20 --faults /dev/zero
printf 'seed 1\nbogus line\n' >"$work/plan"
refused "fault plan '$work/plan', line 2: " run --seed 1 --operations 20 --faults "$work/plan"
grep -q "line 2: line 2" "$work/out" && fail "the plan's line is named twice"

# A plan's words are quoted in its errors: a control sequence among them is shown, never sent.
printf 'seed 1\nrate \033]0;owned\007 1/2\n' >"$work/plan"
refused "\\x1B]0;owned\\x07" run --seed 1 --operations 20 --faults "$work/plan"
grep -q "$(printf '\033')" "$work/out" && fail "an escape character from the plan reached the terminal"

refused "--seeds" run --seed 1 --seeds 1..2
refused "--jobs" run --seed 1 --jobs 2
refused "--seed" run --trace "$work/t.qtrace"
refused "--seed" run --check-determinism
refused "--trace" run --seed 1 --check-determinism --trace "$work/t.qtrace"
refused "--trace" run --seed 1 --encoding jsonl
refused "an empty value names nothing" run --seed 1 --trace ""
refused "an empty value names nothing" run --seed 1 --mutant ""
refused "No such file or directory" run --seed 1 --operations 20 --trace "$work/absent/t.qtrace"
refused "is a directory" run --seed 1 --operations 20 --trace "$work/folder"
printf 'plan default\n' >"$work/plan"
cp "$work/plan" "$work/plan.orig"
refused "is the fault plan file" run --seed 1 --operations 20 --faults "$work/plan" --trace "$work/plan"
echo "a file" >"$work/afile"
refused "cannot keep failing seeds in '$work/afile': it is not a directory" run --seeds 0..1 --operations 20 --out "$work/afile"
refused "is not a directory" run --seeds 0..1 --operations 20 --out "$work/afile/sub"
cmp -s "$work/plan" "$work/plan.orig" || fail "the fault plan was written over"

"$quiesce" run --seed 3 --operations 60 --trace "$work/t.qtrace" >/dev/null || fail "recording seed 3 exited $?"
"$quiesce" run --seed 3 --operations 60 --trace "$work/t.jsonl" >/dev/null || fail "recording seed 3 as .jsonl exited $?"
[ "$(head -c 1 "$work/t.jsonl")" = "{" ] || fail "a --trace named .jsonl is not JSON Lines"
[ "$(head -c 4 "$work/t.qtrace")" = "QTRC" ] || fail "a --trace named .qtrace is not binary"
"$quiesce" run --seed 3 --operations 60 --trace "$work/forced.jsonl" --encoding binary >/dev/null || fail "--encoding binary exited $?"
[ "$(head -c 4 "$work/forced.jsonl")" = "QTRC" ] || fail "--encoding binary did not win over the name"

refused "trace '$work/folder' is a directory" trace print "$work/folder"
cp "$work/t.qtrace" "$work/keep.qtrace"
refused "is the input trace" trace timeline "$work/t.qtrace" -o "$work/t.qtrace"
refused "is the failing trace" shrink "$work/t.qtrace" -o "$work/t.qtrace"
cmp -s "$work/t.qtrace" "$work/keep.qtrace" || fail "the trace was written over"

"$quiesce" trace convert "$work/t.qtrace" "$work/t.qtrace" --to jsonl >/dev/null || fail "converting onto itself exited $?"
[ "$(head -c 1 "$work/t.qtrace")" = "{" ] || fail "the trace converted onto itself is not JSON Lines"
"$quiesce" replay "$work/t.qtrace" >/dev/null || fail "the trace converted onto itself does not replay"
"$quiesce" trace convert "$work/keep.qtrace" "$work/c.jsonl" >/dev/null || fail "convert to .jsonl exited $?"
[ "$(head -c 1 "$work/c.jsonl")" = "{" ] || fail "convert to a .jsonl name without --to is not JSON Lines"
ls -A "$work" | grep -q '^\.' && fail "a temporary file was left behind: $(ls -A "$work" | grep '^\.')"

if [ -w /dev/full ]; then
  "$quiesce" trace print "$work/keep.qtrace" >/dev/full 2>"$work/err"
  status=$?
  [ "$status" = 2 ] && grep -q "cannot write standard output" "$work/err" ||
    { cat "$work/err"; fail "printing into /dev/full exited $status"; }
fi
echo "every bad input refused with exit 2, nothing lost"
