#!/usr/bin/env bash
# Two network namespaces, each joined by a veth pair to the root namespace, where wasmdp forwards
# between the two root-side ends with af_packet or af_xdp ports (io engine, paired). Pings from one
# namespace to the other through wasmdp, prints wasmdp's statistics, and tears everything down on
# exit. Needs root.
#
# usage: examples/veth/run.sh [PINGS=5] [DRIVER=af_packet|af_xdp]
set -euo pipefail
pings=${1:-5}
driver=${2:-af_packet}
case "$driver" in af_packet | af_xdp) ;; *) echo "DRIVER: af_packet or af_xdp, not $driver" >&2; exit 2 ;; esac
cd "$(dirname "$0")/../.."
cargo build --release -q -p wasmdp
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
tag=wdpex$$
tag=${tag:0:11}
nsa=${tag}a
nsb=${tag}b
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  ip link del "${tag}a" 2>/dev/null || true
  ip link del "${tag}b" 2>/dev/null || true
  ip netns del "$nsa" 2>/dev/null || true
  ip netns del "$nsb" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

side() { # name host
  ip netns add "$tag$1"
  ip link add "$tag$1" type veth peer name "$tag${1}n"
  ip link set "$tag${1}n" netns "$tag$1"
  ip -n "$tag$1" addr add "10.77.200.$2/24" dev "$tag${1}n"
  ip -n "$tag$1" link set "$tag${1}n" up
  sysctl -q -w "net.ipv6.conf.$tag$1.disable_ipv6=1" || true
  ip link set "$tag$1" up
}
side a 1
side b 2

cat >"$tmp/config.yaml" <<YAML
engine: io
topology: paired
ports:
  - {name: a, driver: $driver, $driver: {iface: ${tag}a}}
  - {name: b, driver: $driver, $driver: {iface: ${tag}b}}
YAML
echo "--- config"
cat "$tmp/config.yaml"
"$wasmdp" run "$tmp/config.yaml" --stats-period 0 --no-reload --stats-json "$tmp/stats.json" &
pid=$!
sleep 1
echo "--- ping 10.77.200.2 from namespace $nsa, through wasmdp"
ip netns exec "$nsa" ping -c "$pings" -W 1 10.77.200.2
kill -INT "$pid"
wait "$pid"
pid=""
echo "--- wasmdp --stats-json"
python3 -m json.tool "$tmp/stats.json" | head -60
