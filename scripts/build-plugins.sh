#!/usr/bin/env bash
# Builds the WebAssembly policy plugins of plugins/ (a Cargo workspace of its own) for
# wasm32-unknown-unknown, release profile, and lists the modules with their sizes. Idempotent; works
# from any directory. Extra arguments go to cargo build, e.g. scripts/build-plugins.sh -p acl.
#
# Modules: plugins/target/wasm32-unknown-unknown/release/<crate name with - as _>.wasm
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target=wasm32-unknown-unknown

# rustup's toolchains need the target's std (a toolchain without rustup must bring it itself).
if command -v rustup >/dev/null && ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  rustup target add "$target" >/dev/null 2>&1 || rustup target add "$target"
fi

cargo build --manifest-path "$root/plugins/Cargo.toml" --target-dir "$root/plugins/target" --target "$target" --release "$@"

# The examples the host also builds natively (`plugin: native:NAME`) are `rlib`s as well, and cargo
# does not apply the release profile's LTO to a crate built as both: their modules come out several
# times larger and slower (wasm_macswap: 6.8 KB and 455 instructions per packet instead of 1.2 KB and
# 377). Built again as `cdylib` alone, they are what a plugin author's crate would be.
for toml in "$root"/plugins/*/Cargo.toml; do
  grep -q '^crate-type = .*"rlib"' "$toml" || continue
  cargo rustc -q --manifest-path "$toml" --target-dir "$root/plugins/target" --target "$target" --release --crate-type cdylib
done

out="$root/plugins/target/$target/release"
echo "plugins built in $out:"
shopt -s nullglob
for wasm in "$out"/*.wasm; do
  printf '  %-24s %8d bytes\n' "$(basename "$wasm")" "$(wc -c <"$wasm")"
done
