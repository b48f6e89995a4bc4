#!/usr/bin/env bash
# wasmdp vs DPDK's testpmd on AF_PACKET: two ports on the two ends of ONE veth pair (root namespace),
# io forwarding, packets seeded by tx_first (wasmdp: `tx_first: 4` per port; testpmd: --tx-first)
# and looping between the ends, one forwarding core. Runs both alternately ROUNDS times and prints
# each side's median Mpps (min-max) and the ratio wasmdp/testpmd. Needs root (veth, AF_PACKET).
#
# wasmdp's RX ring uses 16 KiB blocks here: a TPACKET_V3 block reaches user space when full or after
# the 1 ms retire timeout, so with the default 1 MiB blocks the 256 looping packets would move once
# per millisecond (0.256 Mpps).
#
# usage: bench/vs-testpmd-afpacket.sh [SECONDS=4] [ROUNDS=3]
set -euo pipefail
secs=${1:-4}
rounds=${2:-3}
cd "$(dirname "$0")/.."
. bench/testpmd.sh
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd missing (apt-get install dpdk-dev)" >&2; exit 1; }
cargo build --release -q -p wasmdp
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
fwd=$(($(nproc) - 1))
a=wdpbench$$a
b=wdpbench$$b
a=${a:0:15}
b=${b:0:15}
tmp=$(mktemp -d)
cleanup() { ip link del "$a" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
ip link add "$a" type veth peer name "$b"
for i in "$a" "$b"; do
  sysctl -q -w "net.ipv6.conf.$i.disable_ipv6=1" || true
  ip link set "$i" up
done

testpmd_mpps() {
  testpmd_run_mpps -l 0,$fwd --no-huge -m 1024 --no-pci --log-level=error \
    --vdev=net_af_packet0,iface=$a --vdev=net_af_packet1,iface=$b -- \
    --forward-mode=io --tx-first --nb-cores=1 -a --stats-period 100
}

wasmdp_mpps() {
  cat >"$tmp/cfg.yaml" <<YAML
lcores: [$fwd]
engine: io
topology: paired
ports:
  - {name: a, driver: af_packet, af_packet: {iface: $a, block_size: 16384, block_count: 256}, tx_first: 4}
  - {name: b, driver: af_packet, af_packet: {iface: $b, block_size: 16384, block_count: 256}, tx_first: 4}
YAML
  RUST_LOG=warn $wasmdp run "$tmp/cfg.yaml" --duration "$secs" --stats-period 0 --no-reload \
    --stats-json "$tmp/s.json" >/dev/null
  python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['mpps'])" "$tmp/s.json"
}

w=()
t=()
for r in $(seq "$rounds"); do
  w+=("$(wasmdp_mpps)")
  t+=("$(testpmd_mpps)")
  echo "round $r: wasmdp ${w[-1]} Mpps, testpmd ${t[-1]} Mpps" >&2
done
python3 - "${w[*]}" "${t[*]}" <<'PY'
import statistics, sys
w = [float(x) for x in sys.argv[1].split()]
t = [float(x) for x in sys.argv[2].split()]
fmt = lambda v: "%.3f (%.3f-%.3f)" % (statistics.median(v), min(v), max(v))
print("af_packet io, one veth pair, 1 core: median (min-max) Mpps")
print("  wasmdp : " + fmt(w))
print("  testpmd: " + fmt(t))
print("  ratio wasmdp/testpmd: %.2f" % (statistics.median(w) / statistics.median(t)))
PY
