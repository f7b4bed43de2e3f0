#!/bin/sh
# Unsigned flags of the quiesce command read plain decimal only: a sign, a hexadecimal prefix, a fraction,
# an empty value or a number past the flag's type exits 2 naming the flag and the text (CLI11 alone would
# take "-1" as 2^64 - 1 and clamp 2^64 to it); a leading zero is decimal ("007" is seven, not octal), and
# the largest seed still runs.
quiesce="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# refused FLAG TEXT EXPECTED ARGS...: the command exits 2 and its message names FLAG, TEXT and EXPECTED.
refused() {
  flag="$1"; text="$2"; expected="$3"; shift 3
  "$quiesce" "$@" "$flag" "$text" >"$work/out" 2>&1
  status=$?
  [ "$status" = 2 ] || { cat "$work/out"; fail "$* $flag '$text' exited $status, expected 2"; }
  grep -qF -- "$flag: '$text' $expected" "$work/out" || { cat "$work/out"; fail "$* $flag '$text': no message naming it"; }
}
for text in -1 +5 0x10 1e3 1.5 " 5" ""; do
  refused --seed "$text" "is not an unsigned decimal integer" run
done
refused --seed 18446744073709551616 "is above 18446744073709551615" run
refused --seed -1 "is not an unsigned decimal integer" hil
refused --differential-runs -1 "is not an unsigned decimal integer" hil
refused --operations 4294967296 "is above 4294967295" campaign --seeds 0..1
refused --jobs -2 "is not an unsigned decimal integer" campaign --seeds 0..1
refused --seeds-max 0x40 "is not an unsigned decimal integer" mutants

digest() { "$quiesce" run --seed "$1" --operations 40 --faults none | sed -n 's/^digest: //p'; }
seven="$(digest 7)"
[ -n "$seven" ] || fail "quiesce run --seed 7 printed no digest"
[ "$(digest 007)" = "$seven" ] || fail "--seed 007 is not seed 7"
"$quiesce" run --seed 18446744073709551615 --operations 40 >"$work/max" 2>&1 ||
  { tail -n 5 "$work/max"; fail "the largest seed did not run"; }
grep -q "^seed = 18446744073709551615$" "$work/max" || fail "the largest seed is not the one that ran"
echo "every bad number refused, leading zeros decimal, the largest seed runs"
