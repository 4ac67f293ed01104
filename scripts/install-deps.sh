#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing ri-sandbox needs.
# Only what is missing is installed, so it is quick and safe to run again.
# Run as root, or as a user with sudo.
set -euo pipefail

packages=(
    cmake make gcc pkg-config     # the build
    g++ binutils                  # the install test: a C++ program against the installed library (nm, objdump)
    clang-19 lld-19               # the second compiler CI builds with
    libclang-rt-19-dev            # libFuzzer and the sanitizers' runtimes for clang (make fuzz)
    wasi-libc libclang-rt-19-dev-wasm32  # C test programs built for wasm32-wasi (tests/c)
    wabt                          # wast2json and wat2wasm: spec scripts and test fixtures
    libjansson-dev                # JSON: the spec runner
    libcmocka-dev                 # unit tests
    gnuplot-nox                   # make bench: the chart of ratios
    libzstd-dev libmd-dev         # snapshots (WSNP v2): zstd, SHA-256 (libmd: BSD digests, cheap to load)
    libssl-dev                    # the server: TLS (libssl)
    libwebsockets-dev             # the server
    jq                            # the CLI tests read ri's JSON output
    python3-websockets            # the server's tests: a real WebSocket client (/usr/bin/python3)
    openssl                       # the server's TLS tests make a self-signed certificate (openssl req -x509)
    python3-pytest                # the Python binding's tests (bindings/python/tests)
    python3-pip python3-setuptools  # the Python binding's install test: pip install --no-build-isolation, offline
    curl ca-certificates          # scripts/fetch-interpreters.sh: the interpreters' npm packages
    binaryen nodejs               # make fuzz-diff: random modules (wasm-opt -ttf, wasm-reduce) run against V8
    libcurl4-openssl-dev          # the etcd client of the coordination layer (src/coord): etcd's JSON gateway over HTTP
    etcd-server etcd-client       # the coordination tests start a 3-member etcd cluster (tests/coord)
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: every package is already installed"
else
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
    fi
    echo "install-deps: installing ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The cross builds that `make check` runs (s390x and aarch64 under qemu-user).
bash "$(dirname "$0")/install-cross-deps.sh"

# The language interpreters (WebAssembly builds from npm, pinned and hash-checked) that the
# language tests run; kept outside the source tree (docs/LANGUAGES.md).
bash "$(dirname "$0")/fetch-interpreters.sh"
