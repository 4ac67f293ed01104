#!/usr/bin/env bash
# Installs what the cross builds (`make check-cross`, scripts/check-cross.sh) need on a
# Debian 12 x86-64 machine, and is quick and safe to run again:
#   - the cross compilers, their C libraries and qemu-user (apt-get);
#   - the libraries CMakeLists.txt finds through pkg-config (jansson, cmocka, zstd, libmd,
#     libssl; the server's libwebsockets is left out), for s390x and arm64, unpacked
#     from Debian's own :s390x/:arm64 packages into $RI_CROSS_ROOT/<arch> (default
#     /opt/ri-cross), the sysroot cmake/toolchain-*.cmake read.
# Why unpacked and not installed with multiarch: libssl-dev and libssl3 are Multi-Arch:
# same, so every architecture must have the very version the host has, and Debian 12's
# security suite (where the host's libssl comes from) has no s390x build; installing
# libssl-dev:s390x would mean downgrading the host's libssl. Unpacking touches nothing
# of the host's.
# Run as root, or as a user with sudo. The host's own tools (wast2json, wat2wasm, jq)
# come from scripts/install-deps.sh.
set -euo pipefail

root=${RI_CROSS_ROOT:-/opt/ri-cross}
archs=(s390x arm64)
packages=(
    gcc-s390x-linux-gnu libc6-dev-s390x-cross     # s390x: compiler and C library
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross   # aarch64
    qemu-user                                     # runs the cross-built programs
)
# the libraries and their run-time parts, for each architecture
libraries=(libjansson-dev libjansson4 libcmocka-dev libcmocka0 libzstd-dev libzstd1 libmd-dev libmd0 libssl-dev libssl3)

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
missing_archs=()
for a in "${archs[@]}"; do
    # .complete names the libraries unpacked: a sysroot made from another list is made again
    if [ "$(cat "$root/$a/.complete" 2>/dev/null)" != "${libraries[*]}" ]; then
        missing_archs+=("$a")
    fi
done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_archs[@]} -eq 0 ]; then
    echo "install-cross-deps: everything is already installed"
    exit 0
fi

updated=0
update() {
    if [ "$updated" -eq 0 ]; then
        "${apt[@]}" update
        updated=1
    fi
}

# apt-get download needs the architectures' package lists.
for a in "${missing_archs[@]}"; do
    if ! dpkg --print-foreign-architectures | grep -qx "$a"; then
        echo "install-cross-deps: adding the foreign architecture $a (package lists only)"
        "${sudo[@]}" dpkg --add-architecture "$a"
        updated=0
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    update
    echo "install-cross-deps: installing ${missing[*]}"
    "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
fi

for a in "${missing_archs[@]}"; do
    update
    echo "install-cross-deps: unpacking ${libraries[*]} ($a) into $root/$a"
    tmp=$(mktemp -d)
    chmod 755 "$tmp" # apt-get download writes as its _apt user
    names=()
    for l in "${libraries[@]}"; do names+=("$l:$a"); done
    (cd "$tmp" && apt-get download "${names[@]}")
    "${sudo[@]}" rm -rf "$root/$a"
    "${sudo[@]}" mkdir -p "$root/$a"
    for deb in "$tmp"/*.deb; do
        "${sudo[@]}" dpkg-deb -x "$deb" "$root/$a"
    done
    rm -rf "$tmp"
    ls "$root/$a"/usr/lib/*/pkgconfig >/dev/null
    echo "${libraries[*]}" | "${sudo[@]}" tee "$root/$a/.complete" >/dev/null
done
echo "install-cross-deps: done"
