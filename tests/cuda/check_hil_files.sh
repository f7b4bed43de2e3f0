#!/bin/sh
# quiesce hil and quiesce calibrate refuse bad files as bad input (exit 2) before they look for a driver or
# touch a GPU: a --cost-profile that is a directory, missing or malformed (named with its line), and a
# --calibrate or -o path that is a directory or in a folder that does not exist. Every case exits before
# any GPU work, so this runs the same with or without a driver.
quiesce="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect_bad_input TEXT ARGS...: the command exits 2 and its error names TEXT.
expect_bad_input() {
  text="$1"
  shift
  "$quiesce" "$@" >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -eq 2 ] || { cat "$work/out" "$work/err"; fail "quiesce $* exited $status, not 2"; }
  grep -qF -- "$text" "$work/err" || { cat "$work/err"; fail "quiesce $* did not say '$text'"; }
  echo "ok: quiesce $* -> 2: $(head -n 1 "$work/err")"
}

printf 'launch_latency_ns = 10\nallocation_ns = 18446744073709551615\n' >"$work/huge.txt"
printf 'launch_latency_ns = 10\nbogus = 1\n' >"$work/bogus.txt"
mkdir "$work/folder"

expect_bad_input "$work/folder" hil --cost-profile "$work/folder"
expect_bad_input "$work/missing.txt" hil --cost-profile "$work/missing.txt"
expect_bad_input "line 2" hil --cost-profile "$work/huge.txt"
expect_bad_input "allocation_ns" hil --cost-profile "$work/huge.txt"
expect_bad_input "$work/bogus.txt" hil --cost-profile "$work/bogus.txt"
expect_bad_input "is a directory" hil --calibrate "$work/folder"
expect_bad_input "No such file or directory" hil --calibrate "$work/nosuch/profile.txt"
expect_bad_input "line 2" hil --calibrate "$work/folder" --cost-profile "$work/bogus.txt"
expect_bad_input "is a directory" calibrate -o "$work/folder"
expect_bad_input "No such file or directory" calibrate -o "$work/nosuch/profile.txt"
[ ! -e "$work/nosuch" ] || fail "a refused path was created"
echo "every bad file was refused with exit 2"
