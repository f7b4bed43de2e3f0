#!/usr/bin/env bash
# Builds the portable hardware-in-loop bundle into .hil/ (git-ignored): the CUDA tests, the CUDA conformance
# instance, the CUDA benchmarks, the HIL tests, the quiesce command and the campaign benchmark (when this
# checkout has them), built with -DQUIESCE_PORTABLE=ON (static libstdc++ and libgcc; libcuda is loaded with
# dlopen at run time), plus the few shared third-party libraries this machine has no static archive for,
# and .hil/run.sh, the script the GPU host runs. The GPU host is Ubuntu 24.04 (glibc 2.39); this machine's
# glibc is older, so binaries built here run there.
#
# The bundle is built from a snapshot of the committed HEAD (git archive), never from the working tree, so
# it is exactly one commit (recorded in .hil/COMMIT) and half-edited files of a shared checkout stay out.
#
#   tools/hil-bundle.sh [build-dir]        default build dir: build-hil
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-hil}"
bundle="$root/.hil"
source_snapshot="$build/source"
targets=(cuda_driver_test cuda_device_test quiesce_conformance_cuda cuda_bench cuda_hil_test quiesce
         quiesce_bench_campaign)
commit="$(git -C "$root" rev-parse HEAD)"
mkdir -p "$build" "$source_snapshot"
# A private index for the snapshot: read-tree -m -u rewrites only the files that changed since the last
# bundle, so the rebuild is incremental; the checkout's own index and HEAD are never touched.
export GIT_INDEX_FILE="$build/snapshot.index"
if [ -f "$GIT_INDEX_FILE" ]; then
  git -C "$root" --work-tree="$source_snapshot" update-index -q --refresh || true
  git -C "$root" --work-tree="$source_snapshot" read-tree --reset -u HEAD
else
  git -C "$root" --work-tree="$source_snapshot" read-tree HEAD
  git -C "$root" --work-tree="$source_snapshot" checkout-index -a -f -u
fi
unset GIT_INDEX_FILE

cmake -S "$source_snapshot" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUIESCE_PORTABLE=ON \
  -DQUIESCE_WERROR=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
grep -i "quiesce: " "$build/configure.log" || true
available=()
known_targets="$(ninja -C "$build" -t targets all 2>/dev/null)"
for target in "${targets[@]}"; do
  if grep -q "^$target: phony" <<<"$known_targets"; then
    available+=("$target")
  else
    echo "hil-bundle: target $target is not part of this build; the bundle goes without it"
  fi
done
# Keep going past a target that fails (another module mid-edit): the bundle carries what built.
nice cmake --build "$build" -j"${JOBS:-1}" --target "${available[@]}" -- -k 0 ||
  echo "hil-bundle: some targets failed to build; the bundle carries those that built"

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for target in "${available[@]}"; do
  binary="$(find "$build" -path "$source_snapshot" -prune -o -type f -name "$target" -perm -u+x -print | head -n 1)"
  [ -n "$binary" ] || { echo "hil-bundle: $target did not build; left out"; continue; }
  cp "$binary" "$bundle/bin/"
  strip --strip-debug "$bundle/bin/$target"  # the device run carries at most 64 MiB
  # Shared libraries beyond glibc travel along (libbenchmark has no static archive on Debian).
  ldd "$binary" | awk '/=> \//{print $3}' | while read -r library; do
    case "$(basename "$library")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      *) cp -L -n "$library" "$bundle/lib/" ;;
    esac
  done
done
# tcmalloc, for run.sh to preload into the campaign benchmark as the default (non-portable) build links it.
tcmalloc="$(ldconfig -p | awk '/libtcmalloc_minimal\.so\.4 .*x86-64/{print $NF; exit}')"
[ -n "$tcmalloc" ] && cp -L "$tcmalloc" "$bundle/lib/"
cp "$source_snapshot/tools/hil-run.sh" "$bundle/run.sh"
echo "$commit" >"$bundle/COMMIT"
chmod +x "$bundle/run.sh"
echo "hil-bundle: $(ls "$bundle/bin" | tr '\n' ' ')"
echo "hil-bundle: shared libraries carried: $(ls "$bundle/lib" | tr '\n' ' ')"
du -sh "$bundle"
