#!/usr/bin/env bash
# Builds the WebAssembly policy plugins of plugins/ (a Cargo workspace of its own) for
# wasm32-unknown-unknown, release profile, and lists the modules with their sizes. Idempotent; works
# from any directory. Extra arguments go to cargo build, e.g. scripts/build-plugins.sh -p acl.
#
# Modules: plugins/target/wasm32-unknown-unknown/release/<crate name with - as _>.wasm, and the
# ACL example in C, Zig and AssemblyScript: acl_c.wasm, acl_zig.wasm, acl_as.wasm.
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

# The same policy in C and in Zig, on the files generated from the ABI crate (sdk/c/wasmdp.h,
# sdk/zig/wasmdp.zig; scripts/setup.sh installs clang, wasm-ld and Zig). -O2 for C, ReleaseFast for
# Zig: what each language's authors ship; BENCHMARKS.md compares them with the Rust acl.
clang --target=wasm32 -O2 -std=c11 -Wall -Wextra -Werror -ffreestanding -nostdlib \
  -Wl,--no-entry -Wl,--strip-all -I "$root/sdk/c" -o "$out/acl_c.wasm" "$root/plugins/c-acl/acl.c"
python3 -m ziglang build-exe -target wasm32-freestanding -fno-entry -rdynamic -O ReleaseFast -fstrip \
  --stack 65536 --cache-dir "$root/plugins/target/zig-cache" --global-cache-dir "$root/plugins/target/zig-cache" \
  --dep wasmdp -Mroot="$root/plugins/zig-acl/acl.zig" -Mwasmdp="$root/sdk/zig/wasmdp.zig" \
  -femit-bin="$out/acl_zig.wasm"
# And in AssemblyScript, with the stub runtime (no garbage collector; the policy allocates nothing),
# its compiler pinned and kept under plugins/target.
asc_dir="$root/plugins/target/assemblyscript"
asc_version=0.28.20
if [ "$(cat "$asc_dir/version" 2>/dev/null)" != "$asc_version" ]; then
  npm install --prefix "$asc_dir" --no-audit --no-fund --silent "assemblyscript@$asc_version" >/dev/null
  echo "$asc_version" >"$asc_dir/version"
fi
"$asc_dir/node_modules/.bin/asc" "$root/plugins/as-acl/acl.ts" --runtime stub -O3 --noAssert --use abort= \
  -o "$out/acl_as.wasm"

echo "plugins built in $out:"
shopt -s nullglob
for wasm in "$out"/*.wasm; do
  printf '  %-24s %8d bytes\n' "$(basename "$wasm")" "$(wc -c <"$wasm")"
done
