#!/bin/sh
# Builds examples/my_runtime as an external project against the installed quiesce package, then runs its
# campaign: the careful runtime must pass (exit 0) and the planted bug must be caught (exit 1).
# Usage: byo_example_test.sh <quiesce build dir> <quiesce source dir> <work dir> <C++ compiler>
set -u
build=$1
source=$2
work=$3
compiler=$4
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "cmake --install $build failed"; exit 1; }
cmake -S "$source/examples/my_runtime" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_BUILD_TYPE=RelWithDebInfo ||
  { echo "configuring examples/my_runtime against the installed package failed"; exit 1; }
cmake --build "$work/build" || { echo "building examples/my_runtime failed"; exit 1; }
"$work/build/my_runtime_campaign" --seeds 24
careful=$?
"$work/build/my_runtime_campaign" --seeds 24 --bug
planted=$?
if [ "$careful" -ne 0 ]; then echo "the careful runtime failed its campaign (exit $careful)"; exit 1; fi
if [ "$planted" -ne 1 ]; then echo "the planted bug was not caught (exit $planted, expected 1)"; exit 1; fi
echo "the careful runtime passed and the planted bug was caught"
