#!/usr/bin/env bash
# Build and run the dataplane on config.yaml (set-up included). Extra arguments go to `wasmdp run`,
# e.g. scripts/run.sh --duration 10.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build-plugins.sh >/dev/null
cargo build --release -q -p wasmdp
exec "${CARGO_TARGET_DIR:-target}"/release/wasmdp run config.yaml "$@"
