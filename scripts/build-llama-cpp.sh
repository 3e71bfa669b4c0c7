#!/usr/bin/env bash
# Builds llama.cpp's llama-bench and llama-server from the exact source node-llama-cpp ships
# (node_modules/node-llama-cpp/llama/gitRelease.bundle), into a cache outside the repository.
# About 7 minutes on 2 cores. Usage: scripts/build-llama-cpp.sh [cache-dir]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:-${CLEANROOM_LLAMA_CPP_DIR:-$HOME/.cache/cleanroom/llama.cpp}}
bundle="$repo/node_modules/node-llama-cpp/llama/gitRelease.bundle"
tag=$(node -p "require('$repo/node_modules/node-llama-cpp/llama/llama.cpp.info.json').tag")
[ -f "$bundle" ] || { echo "missing $bundle: run npm install first" >&2; exit 1; }
if [ -x "$cache/build/bin/llama-bench" ] && [ -x "$cache/build/bin/llama-server" ] && [ "$(cat "$cache/.tag" 2>/dev/null)" = "$tag" ]; then
    echo "$cache/build/bin (llama.cpp $tag, cached)"
    exit 0
fi
rm -rf "$cache/src"
mkdir -p "$cache"
git clone --quiet "$bundle" "$cache/src"
git -C "$cache/src" checkout --quiet "$tag" 2>/dev/null || true
cmake -S "$cache/src" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON >/dev/null
cmake --build "$cache/build" --target llama-bench llama-server -j "$(nproc)" >/dev/null
echo "$tag" > "$cache/.tag"
echo "$cache/build/bin (llama.cpp $tag)"
