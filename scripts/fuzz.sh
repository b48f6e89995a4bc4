#!/usr/bin/env bash
# Coverage-guided fuzzing on stable Rust: builds the targets of fuzz/ with LLVM's sanitizer
# coverage on wasmdp's crates (the flags cargo-fuzz passes, without its nightly-only sanitizer) and
# libFuzzer, then runs each for SECONDS (default 20) on its corpus. New interesting inputs go to fuzz/target/corpus/
# (not committed); a crash stops the run and is saved under fuzz/artifacts/<target>/: add it to
# fuzz/corpus/<target>/ once fixed, so that the corpus replay test keeps it.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      targets: config capture wire hostcalls
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-20}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config capture wire hostcalls)

flags=(
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  --cfg fuzzing
)
# Only wasmdp's crates get the flags (scripts/fuzz-rustc.sh); the rest is the dev build of the root
# workspace, shared with `cargo test`: the same target directory, profile (fuzz/Cargo.toml) and
# dependency versions (the root's Cargo.lock, copied; cargo adds libFuzzer's).
export WASMDP_FUZZ_RUSTFLAGS="${flags[*]}"
export RUSTC_WRAPPER="$root/scripts/fuzz-rustc.sh"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# The `[profile.dev]` section (up to the next section) of a manifest.
dev_profile() { awk '/^\[/ { on = ($0 == "[profile.dev]") } on && NF' "$1"; }
if [ "$(dev_profile "$root/Cargo.toml")" != "$(dev_profile "$root/fuzz/Cargo.toml")" ]; then
  echo "Cargo.toml and fuzz/Cargo.toml differ in [profile.dev]: make them equal, or every dependency is built twice" >&2
  exit 1
fi
cp "$root/Cargo.lock" "$root/fuzz/Cargo.lock"
cargo build --manifest-path "$root/fuzz/Cargo.toml" --bins -q
bin="$CARGO_TARGET_DIR/debug"

for t in "${targets[@]}"; do
  work="$root/fuzz/target/corpus/$t"
  art="$root/fuzz/artifacts/$t"
  mkdir -p "$work" "$art"
  echo "== fuzz $t for ${secs}s"
  "$bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=3072 -max_len=65536 \
    -artifact_prefix="$art/" -print_final_stats=1 "$work" "$root/fuzz/corpus/$t" 2>&1 \
    | grep -E "^(#[0-9]+\s+DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" || true
  if compgen -G "$art/crash-*" >/dev/null || compgen -G "$art/timeout-*" >/dev/null || compgen -G "$art/oom-*" >/dev/null; then
    echo "fuzz $t: failing input(s) saved in $art" >&2
    exit 1
  fi
done
