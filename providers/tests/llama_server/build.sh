#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and a tiny random-weight GGUF model for
# providers/tests/llama_server.rs, on a machine that reaches PyPI and nothing else:
#
#   * llama.cpp's source comes from the `llama-cpp-python` sdist on PyPI (it vendors
#     llama.cpp under vendor/llama.cpp);
#   * cmake and ninja come from PyPI, into a venv of the cache dir;
#   * the model is written by make_model.py with the `gguf` package (PyPI), no download.
#
# Everything lands in $HOOKCHAIN_LLAMA_DIR (default /work/llama-cache), outside the
# git tree: the sdist is ~75 MB and the build tree several hundred. At the end only
# bin/llama-server and tiny.gguf are needed; `--clean` removes the rest.
#
# Usage: providers/tests/llama_server/build.sh [--clean]
# Then:  HOOKCHAIN_LLAMA_SERVER=$DIR/bin/llama-server HOOKCHAIN_LLAMA_MODEL=$DIR/tiny.gguf \
#          cargo test -p hookchain-providers --all-features --test llama_server -- --nocapture
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${HOOKCHAIN_LLAMA_DIR:-/work/llama-cache}"
# Pinned so the transcripts recorded from it can be reproduced; override to try another.
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
jobs="${JOBS:-2}"
mkdir -p "$dir"
cd "$dir"

# A venv of our own: cmake, ninja and gguf from PyPI, the system's Python untouched.
if [ ! -x venv/bin/python ]; then
    python3 -m venv venv
fi
venv/bin/pip install -q cmake ninja gguf numpy

# The sdist only (`--no-binary`), without its dependencies: we want its vendored sources.
# Its build dependencies (scikit-build-core) come as wheels, for pip to read its metadata.
sdist="dl/llama_cpp_python-$version.tar.gz"
if [ ! -f "$sdist" ]; then
    venv/bin/pip download -q --no-deps --no-binary llama-cpp-python -d dl "llama-cpp-python==$version"
fi
src="src/llama_cpp_python-$version/vendor/llama.cpp"
if [ ! -d "$src" ]; then
    mkdir -p src
    tar -xzf "$sdist" -C src
fi

if [ ! -x bin/llama-server ]; then
    # CPU only, static (one binary to keep), no HTTPS (we only talk to loopback), no web UI
    # (its assets would be downloaded from Hugging Face or built with npm).
    PATH="$dir/venv/bin:$PATH" nice -n 19 cmake -S "$src" -B build -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=ON \
        -DLLAMA_CURL=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF
    PATH="$dir/venv/bin:$PATH" nice -n 19 cmake --build build --target llama-server -j "$jobs"
    mkdir -p bin
    cp build/bin/llama-server bin/llama-server
fi

if [ ! -f tiny.gguf ]; then
    # Qwen 2.5's chat template, from llama.cpp's own copies: see make_model.py for why.
    nice -n 19 venv/bin/python "$here/make_model.py" tiny.gguf \
        "$src/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
fi

if [ "${1:-}" = "--clean" ]; then
    rm -rf build src dl
fi

echo "HOOKCHAIN_LLAMA_SERVER=$dir/bin/llama-server"
echo "HOOKCHAIN_LLAMA_MODEL=$dir/tiny.gguf"
