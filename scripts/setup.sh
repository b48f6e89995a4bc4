#!/usr/bin/env bash
# One-time set-up on a fresh machine (idempotent): the Rust targets and components the build uses,
# and the Debian packages the tests use.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v ping >/dev/null || need_apt+=(iputils-ping)
command -v arping >/dev/null || need_apt+=(iputils-arping)
command -v tcpdump >/dev/null || need_apt+=(tcpdump)
command -v ethtool >/dev/null || need_apt+=(ethtool)     # offloads of the netns tests' veths
command -v sysctl >/dev/null || need_apt+=(procps)       # the netns tests turn IPv6 off on root-side veths
command -v promtool >/dev/null || need_apt+=(prometheus)   # promtool checks the /metrics output
command -v tshark >/dev/null || need_apt+=(tshark)         # reads the captures of `wasmdp ctl capture`
command -v valgrind >/dev/null || need_apt+=(valgrind)     # the instruction-count guard (bench/instructions.sh --check)
# libpcap compiles capture filters (the `pcap` crate links it: needed to build the host)
[ -e /usr/include/pcap/pcap.h ] || need_apt+=(libpcap-dev)
# The C example policy: clang and wasm-ld (lld); Zig comes from PyPI (below), through pip.
command -v clang >/dev/null || need_apt+=(clang)
command -v wasm-ld >/dev/null || need_apt+=(lld)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
# The AssemblyScript example policy: its compiler comes from npm (scripts/build-plugins.sh).
command -v npm >/dev/null || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
# The Zig example policy: Zig from PyPI, pinned (the language changes between releases).
zig_version=0.17.1
if [ "$(python3 -m ziglang version 2>/dev/null)" != "$zig_version" ]; then
  python3 -m pip install -q "ziglang==$zig_version" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "ziglang==$zig_version"
fi
