#!/usr/bin/env bash
# RUSTC_WRAPPER of scripts/fuzz.sh: adds the sanitizer-coverage flags ($WASMDP_FUZZ_RUSTFLAGS) to
# wasmdp's own crates only. Coverage inside wasmtime, serde or the standard crates would guide
# libFuzzer towards their paths, not ours, and instrumenting them doubled the build (the fuzz build
# was the slowest step of the test command).
set -euo pipefail
rustc="$1"
shift
case " $* " in
*" --crate-name wasmdp "* | *" --crate-name wasmdp_abi "* | *" --crate-name wasmdp_sdk "* | *" --crate-name wasmdp_wire "*)
  # shellcheck disable=SC2086 # the flags are words
  exec "$rustc" "$@" $WASMDP_FUZZ_RUSTFLAGS
  ;;
esac
exec "$rustc" "$@"
