#!/usr/bin/env bash
# Installs a built tree into a temporary prefix, moves it (the installed files find each
# other relative to themselves), and builds and runs small C and C++ programs against it the
# ways a user would: pkg-config (shared and static) and CMake's find_package(ri).
#   tests/install/test_install.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
here=$src/tests/install
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
check() { # NAME COMMAND...: passes when COMMAND succeeds
    local name=$1; shift
    local out
    if out=$("$@" 2>&1); then ok "$name"; else bad "$name" "$(printf '%s' "$out" | tail -n 5)"; fi
}

cmake --install "$build" --prefix "$tmp/first" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
mv "$tmp/first" "$tmp/p"
p=$tmp/p
pc=$(find "$p" -name ri.pc | head -n 1)
libdir=$(dirname "$(dirname "$pc")")

for f in bin/ri include/ri/ri.h include/ri/api.h include/ri/version.h include/ri/engine.h include/ri/sandbox.h include/ri/files.h \
         include/ri/snapshot.h include/ri/store.h share/man/man1/ri.1 share/doc/ri_sandbox/LICENSE; do
    if [ -e "$p/$f" ]; then ok "installed $f"; else bad "installed $f" "missing"; fi
done
for f in libri.a libri.so libri.so.0 cmake/ri/riConfig.cmake cmake/ri/riConfigVersion.cmake; do
    if [ -e "$libdir/$f" ]; then ok "installed lib/$f"; else bad "installed lib/$f" "missing"; fi
done
check "installed ri --version" bash -c "'$p/bin/ri' --version | grep -q '^ri [0-9]'"
# `ri serve` loads its module from LIBDIR/ri, relative to the (moved) binary; run commands do not.
if [ -e "$build/ri-serve.so" ]; then
    check "installed ri serve --help (its module found)" bash -c "'$p/bin/ri' serve --help | grep -q 'usage: ri serve'"
    check "installed ri runs without the server's libraries" bash -c "! ldd '$p/bin/ri' | grep -Eq 'libwebsockets|libssl|libcurl|libcrypto'"
fi

# Only ri_ names leave the shared library.
others=$(nm -D --defined-only "$libdir/libri.so" | awk '{print $3}' | grep -v '^ri_' | head -n 5)
if [ -z "$others" ]; then ok "libri.so exports only ri_ names"; else bad "libri.so exports only ri_ names" "$others"; fi
soname=$(objdump -p "$libdir/libri.so" | awk '/SONAME/ {print $2}')
if [ "$soname" = libri.so.0 ]; then ok "soname libri.so.0"; else bad "soname libri.so.0" "$soname"; fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
run() { # NAME BINARY: runs it and expects "= 42"
    local out
    if out=$("$2" 2>&1) && printf '%s' "$out" | grep -q '= 42$'; then ok "$1"; else bad "$1" "$out"; fi
}
# pkg-config, shared
check "pkg-config: C, shared, compile" bash -c "gcc -std=c11 -Wall -Wextra -Werror -o '$tmp/c_shared' '$here/consumer.c' \$(pkg-config --cflags --libs ri) -Wl,-rpath,'$libdir'"
run "pkg-config: C, shared, run" "$tmp/c_shared"
check "pkg-config: C links libri.so.0" bash -c "ldd '$tmp/c_shared' | grep -q 'libri.so.0 => $libdir'"
# pkg-config, static: the archive plus the libraries pkg-config --static names
check "pkg-config: C, static, compile" bash -c "gcc -std=c11 -Wall -Wextra -Werror -o '$tmp/c_static' '$here/consumer.c' \$(pkg-config --cflags ri) \$(pkg-config --static --libs ri | sed 's/-lri\\b/-l:libri.a/')"
run "pkg-config: C, static, run" "$tmp/c_static"
check "pkg-config: C static needs no libri.so" bash -c "! ldd '$tmp/c_static' | grep -q libri"
# pkg-config, C++
check "pkg-config: C++, compile" bash -c "g++ -std=c++17 -Wall -Wextra -Werror -o '$tmp/cxx' '$here/consumer.cpp' \$(pkg-config --cflags --libs ri) -Wl,-rpath,'$libdir'"
run "pkg-config: C++, run" "$tmp/cxx"
# The guide's embedding example, as the guide builds it.
if wat2wasm "$src/examples/embed.wat" -o "$tmp/embed.wasm" &&
    gcc -std=c11 -Wall -Wextra -Werror "$src/examples/embed.c" $(pkg-config --cflags --libs ri) -Wl,-rpath,"$libdir" -o "$tmp/embed" &&
    "$tmp/embed" "$tmp/embed.wasm" >"$tmp/embed.out" 2>&1 &&
    grep -q '^sandbox-0 spin failed: GAS_EXHAUSTED' "$tmp/embed.out" &&
    grep -q '^snapshot: [0-9]* bytes, restored into sandbox-1$' "$tmp/embed.out" &&
    grep -q '^sandbox-1 step -> 3 (gas 13)$' "$tmp/embed.out" &&
    grep -q '^sandbox-2 step -> 4 (gas 13)$' "$tmp/embed.out" &&
    [ "$(tail -n 1 "$tmp/embed.out")" = "sandbox-0 step -> 3 (gas 13)" ]; then
    ok "examples/embed.c builds with pkg-config and runs as the guide shows"
else
    bad "examples/embed.c builds with pkg-config and runs as the guide shows" "$(cat "$tmp/embed.out" 2>/dev/null | tail -n 5)"
fi

# every public header alone, as C and as C++
for h in "$p"/include/ri/*.h; do
    name=ri/$(basename "$h")
    check "header $name alone (C)" bash -c "printf '#include <$name>\nint main(void){return 0;}\n' | gcc -std=c11 -Wall -Wextra -Werror -I'$p/include' -x c - -o /dev/null"
    check "header $name alone (C++)" bash -c "printf '#include <$name>\nint main(){return 0;}\n' | g++ -std=c++17 -Wall -Wextra -Werror -I'$p/include' -x c++ - -o /dev/null"
done

# CMake: find_package(ri)
mkdir -p "$tmp/cm"
cp "$here/consumer.c" "$here/consumer.cpp" "$tmp/cm/"
cp "$here/CMakeLists.txt.in" "$tmp/cm/CMakeLists.txt"
if cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_RPATH="$libdir" >"$tmp/cm.log" 2>&1 &&
    cmake --build "$tmp/cm/build" >>"$tmp/cm.log" 2>&1; then
    ok "cmake: find_package(ri) and build"
    run "cmake: ri::ri (C)" "$tmp/cm/build/consumer_shared"
    run "cmake: ri::ri_static (C)" "$tmp/cm/build/consumer_static"
    run "cmake: ri::ri (C++)" "$tmp/cm/build/consumer_cxx"
else
    bad "cmake: find_package(ri) and build" "$(tail -n 15 "$tmp/cm.log")"
fi

# A packager's configure: no tests, no benchmarks: neither cmocka nor wabt is looked for.
if cmake -S "$src" -B "$tmp/pkgbuild" -DRI_BUILD_TESTS=OFF -DRI_BUILD_BENCH=OFF >"$tmp/pkg.log" 2>&1 &&
    ! grep -q '^CMOCKA_FOUND\|^WAST2JSON:\|^WAT2WASM:' "$tmp/pkgbuild/CMakeCache.txt" &&
    grep -q '^RI_WERROR:BOOL=OFF' "$tmp/pkgbuild/CMakeCache.txt"; then
    ok "configure without tests needs neither cmocka nor wabt, no -Werror"
else
    bad "configure without tests needs neither cmocka nor wabt, no -Werror" "$(tail -n 5 "$tmp/pkg.log")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
