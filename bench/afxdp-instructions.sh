#!/usr/bin/env bash
# User-space instructions per forwarded packet on the af_xdp veth loop, under valgrind's callgrind
# (counted only inside `wasmdp::lcore::run`, as bench/instructions.sh does; the kernel's work is
# not counted): two af_xdp ports on the two ends of ONE veth pair (root namespace), io forwarding,
# packets seeded by tx_first and looping between the ends, one lcore, XDP in MODE, copy mode.
# Prints instructions per forwarded packet, and the same on af_packet for comparison.
# Needs root (veth, XDP) and valgrind. XDP_OPTS adds af_xdp options (e.g. XDP_OPTS="complete_checksums: off").
#
# usage: bench/afxdp-instructions.sh [SECONDS=2] [MODE=native] [WASMDP=target/release/wasmdp]
set -euo pipefail
secs=${1:-2}
mode=${2:-native}
cd "$(dirname "$0")/.."
wasmdp=${3:-}
if [ -z "$wasmdp" ]; then
  cargo build --release -q -p wasmdp
  wasmdp="$PWD/${CARGO_TARGET_DIR:-target}"/release/wasmdp
fi
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
. bench/veth-loop.sh wdpi
measure() {
  local driver=$1
  loop_config "$driver" $(($(nproc) - 1))
  RUST_LOG=warn valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="${CG_OUT:-$tmp/cg}.$driver" \
    --toggle-collect='wasmdp::lcore::run' "$wasmdp" run "$tmp/cfg.yaml" --duration "$secs" --stats-period 0 \
    --stats-json "$tmp/run.json" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  python3 - "${CG_OUT:-$tmp/cg}.$driver" "$tmp/run.json" "$driver" <<'PY'
import json, sys
ir = 0
for line in open(sys.argv[1]):
    if line.startswith('summary:') or line.startswith('totals:'):
        ir = int(line.split()[1])
t = json.load(open(sys.argv[2]))['totals']
print('%-10s %10.2f instructions per forwarded packet (%d packets)' % (sys.argv[3], ir / max(t['tx_packets'], 1), t['tx_packets']))
PY
}
measure af_xdp
measure af_packet
