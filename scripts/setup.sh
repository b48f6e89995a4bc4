#!/usr/bin/env bash
# One-time set-up on a fresh machine (idempotent): the Rust targets and components the build uses,
# and the Debian packages the tests use.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
if [ ${#need_apt[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
