#!/usr/bin/env bash
# Fetches the language interpreters that ri runs (docs/LANGUAGES.md): WebAssembly builds
# published on npm, pinned by version, checked by SHA-256 (the package and the .wasm in it).
# Nothing is committed to the repository: they go to a cache folder outside the source tree,
#   $RI_INTERPRETERS_DIR, default ~/.cache/ri/interpreters
# as <language>.wasm (ruby.wasm, lua.wasm, python.wasm, javascript.wasm). Safe to run again: files already
# there are checked, not fetched. Exits non-zero (and leaves nothing half-written) when a
# download or a hash fails.
set -euo pipefail

dir="${RI_INTERPRETERS_DIR:-$HOME/.cache/ri/interpreters}"
registry="${RI_NPM_REGISTRY:-https://registry.npmjs.org}"

# language  package@version  tarball path on the registry  sha256 of the tarball  file in the package  sha256 of the file
interpreters=(
    "ruby @ruby/3.4-wasm-wasi@2.10.1 @ruby/3.4-wasm-wasi/-/3.4-wasm-wasi-2.10.1.tgz
     2e709bd9eddefe1c5d63e9fc0391a35cce4754e936d8a2f24b8582f6d5c2ea88
     package/dist/ruby+stdlib.wasm 4b814fc9d13505ea5b4c1f3bd3a7cc7ccca137f551196b9b21f0a7caf9cc5878"
    "lua wasmoon@1.16.0 wasmoon/-/wasmoon-1.16.0.tgz
     7a07cb6d39af10911fabd50740833477b18b47b6f03148f15218edf474c8af56
     package/dist/glue.wasm 95f3f19ddb740125883bc41d5ec670cd0828e7b58c8bdad385323cbff497b55c"
    "python @micropython/micropython-webassembly-pyscript@1.27.0 @micropython/micropython-webassembly-pyscript/-/micropython-webassembly-pyscript-1.27.0.tgz
     303919763c8ebfe5923b9da66226c20dce44ad72b604b225fb39338ea15367af
     package/micropython.wasm 06338c955b03c5700aa0069015d3e392d76836ef8e2ce25bedbe59b88ccd373c"
    "javascript quickjs-wasi@3.6.2 quickjs-wasi/-/quickjs-wasi-3.6.2.tgz
     f1f4349f19a2d849e33ea0ae9bec2e7062b8839f4eceb17c9051ddbaa2720982
     package/quickjs.wasm d4c9375f2b1ca4dc95f72c8aa2982a7a9951ac8011490d79c6582df732b4bbd9"
)

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

mkdir -p "$dir"
for entry in "${interpreters[@]}"; do
    read -r lang package tarball tar_sha file file_sha <<<"$(echo $entry)"
    dest="$dir/$lang.wasm"
    if [ -f "$dest" ] && [ "$(sha256_of "$dest")" = "$file_sha" ]; then
        echo "fetch-interpreters: $lang ($package): $dest (checked)"
        continue
    fi
    tmp="$(mktemp -d "$dir/.fetch.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    echo "fetch-interpreters: $lang ($package): $registry/$tarball"
    curl -fsSL --retry 3 -o "$tmp/package.tgz" "$registry/$tarball"
    got="$(sha256_of "$tmp/package.tgz")"
    if [ "$got" != "$tar_sha" ]; then
        echo "fetch-interpreters: $lang ($package): the package's SHA-256 is $got, expected $tar_sha" >&2
        exit 1
    fi
    tar -xzf "$tmp/package.tgz" -C "$tmp" "$file"
    got="$(sha256_of "$tmp/$file")"
    if [ "$got" != "$file_sha" ]; then
        echo "fetch-interpreters: $lang ($package): $file's SHA-256 is $got, expected $file_sha" >&2
        exit 1
    fi
    sync "$tmp/$file"
    mv "$tmp/$file" "$dest.tmp" && mv -f "$dest.tmp" "$dest" # (the same file system: a rename)
    rm -rf "$tmp"
    trap - EXIT
    echo "fetch-interpreters: $lang ($package): $dest"
done
