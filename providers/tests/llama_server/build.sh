#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and a tiny GGUF model of seeded random weights for
# providers/tests/llama_server.rs, on a machine that reaches PyPI and nothing else:
#
#   * llama.cpp's source is the one vendored in PyPI's `llama-cpp-python` sdist
#     (vendor/llama.cpp; 0.3.36 vendors llama.cpp 0c1e57098bba, 2026-10-01);
#   * cmake and ninja come from PyPI, into a venv of the cache dir;
#   * the model is written by make_model.py with PyPI's `gguf` package: no download.
#
# Everything lands in $HOOKCHAIN_LLAMA_DIR (default: target/llama-server of the repository,
# which git ignores): the sdist is ~75 MB, the build tree a few hundred. What the test needs
# is bin/llama-server (~15 MB, static) and tiny.gguf (~0.5 MB); `--clean` removes the rest.
# The build takes ~10 minutes on 2 cores (only the llama-server target, CPU only).
#
# Usage: providers/tests/llama_server/build.sh [--clean]
# It prints the two variables the test reads; run the test with them (see its module doc).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
dir="${HOOKCHAIN_LLAMA_DIR:-$repo/target/llama-server}"
# Pinned: the transcripts under providers/tests/transcripts/llamacpp/ came from this one.
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
jobs="${JOBS:-2}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
cd "$dir"

src="src/llama_cpp_python-$version/vendor/llama.cpp"
# Sources only when something is left to build (after --clean they are gone).
if [ ! -x bin/llama-server ] || [ ! -f tiny.gguf ]; then
    # A venv of our own: cmake, ninja and gguf from PyPI, the system's Python untouched.
    [ -x venv/bin/python ] || python3 -m venv venv
    venv/bin/pip install -q cmake ninja gguf numpy

    # The sdist (`--no-binary`), without its dependencies: we want its vendored sources. Its
    # build backend (scikit-build-core) comes as a wheel, for pip to read its metadata.
    sdist="dl/llama_cpp_python-$version.tar.gz"
    if [ ! -f "$sdist" ]; then
        venv/bin/pip download -q --no-deps --no-binary llama-cpp-python -d dl \
            "llama-cpp-python==$version"
    fi
    if [ ! -d "$src" ]; then
        mkdir -p src
        tar -xzf "$sdist" -C src
    fi
fi

if [ ! -x bin/llama-server ]; then
    # CPU only, static (one file to keep), no HTTPS (the test talks to loopback), no web UI
    # (its assets would be downloaded from Hugging Face or built with npm). LLAMA_CURL is
    # gone from this llama.cpp (a warning if on); off for older ones.
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
    # Qwen 3's chat template, from llama.cpp's own copies: see make_model.py for why.
    nice -n 19 venv/bin/python "$here/make_model.py" tiny.gguf.part \
        "$src/models/templates/Qwen-Qwen3-0.6B.jinja"
    mv tiny.gguf.part tiny.gguf
fi

if [ "${1:-}" = "--clean" ]; then
    rm -rf build src dl venv
fi

echo "HOOKCHAIN_LLAMA_SERVER=$dir/bin/llama-server"
echo "HOOKCHAIN_LLAMA_MODEL=$dir/tiny.gguf"
