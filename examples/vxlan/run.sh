#!/usr/bin/env bash
# wasmdp as a VXLAN tunnel endpoint facing the Linux kernel's own VXLAN device.
#
#   netns <tag>h: <tag>hn 10.78.200.1/24 --veth-- <tag>h [wasmdp port lan]   engine vxlan_encap
#                                                                 |  paired
#   netns <tag>u: <tag>un 10.77.200.2/24 --veth-- <tag>u [wasmdp port under] engine vxlan_decap
#                 vx0 10.78.200.2/24 (kernel VXLAN, VNI 42, remote 10.77.200.3 = wasmdp)
#
# The host in <tag>h pings the kernel's vx0 across the tunnel; wasmdp encapsulates the host's frames
# towards the kernel and decapsulates the kernel's. Prints the counters of both ends and tears
# everything down on exit. Needs root.
#
# usage: examples/vxlan/run.sh [PINGS=5] [4|6]   (6: IPv6 underlay)
set -euo pipefail
pings=${1:-5}
family=${2:-4}
cd "$(dirname "$0")/../.."
cargo build --release -q -p wasmdp
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
tag=wdpvx$$
tag=${tag:0:11}
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  for s in h u; do
    ip link del "$tag$s" 2>/dev/null || true
    ip netns del "$tag$s" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$family" = 6 ]; then
  kernel=2001:db8:77::2 wasmdp_ip=2001:db8:77::3 plen=64 nodad=nodad
else
  kernel=10.77.200.2 wasmdp_ip=10.77.200.3 plen=24 nodad=
fi
under_mac=02:00:00:00:77:03
kernel_mac=02:00:00:00:77:02

side() { # name address/len [nodad]
  ip netns add "$tag$1"
  ip link add "$tag$1" type veth peer name "$tag${1}n"
  ip link set "$tag${1}n" netns "$tag$1"
  ip -n "$tag$1" addr add "$2" dev "$tag${1}n" $3
  ip -n "$tag$1" link set "$tag${1}n" up
  sysctl -q -w "net.ipv6.conf.$tag$1.disable_ipv6=1" || true
  ip link set "$tag$1" up
}
side h 10.78.200.1/24 ""
side u "$kernel/$plen" "$nodad"
# The kernel's end: its underlay MAC, wasmdp's underlay address as a static neighbour (wasmdp does
# not answer ARP or neighbour solicitation on the underlay), and the VXLAN device.
ip -n "${tag}u" link set "${tag}un" address "$kernel_mac"
ip -n "${tag}u" neigh add "$wasmdp_ip" lladdr "$under_mac" dev "${tag}un"
ip -n "${tag}u" link add vx0 type vxlan id 42 local "$kernel" remote "$wasmdp_ip" dstport 4789 dev "${tag}un"
ip -n "${tag}u" addr add 10.78.200.2/24 dev vx0
ip -n "${tag}u" link set vx0 up

cat >"$tmp/config.yaml" <<YAML
topology: paired
ports:
  # What the host sends is encapsulated in the tunnel of the port it leaves by (under).
  - {name: lan, driver: af_packet, engine: vxlan_encap, af_packet: {iface: ${tag}h}}
  # What arrives from the kernel is decapsulated when it is for our end, port and VNI.
  - name: under
    driver: af_packet
    engine: vxlan_decap
    mac: '$under_mac'         # outer source MAC
    peer_mac: '$kernel_mac'   # outer destination MAC: the next hop on the underlay
    af_packet: {iface: ${tag}u}
    vxlan: {vni: 42, local_ip: '$wasmdp_ip', remote_ip: '$kernel', dst_port: 4789}
    tunnel_others: drop       # the kernel's IPv6 chatter on the underlay: counted as tunnel drops
YAML
echo "--- config"
cat "$tmp/config.yaml"
"$wasmdp" run "$tmp/config.yaml" --stats-period 0 --no-reload --stats-json "$tmp/stats.json" &
pid=$!
sleep 1
echo "--- ping 10.78.200.2 (the kernel's vx0) from namespace ${tag}h, through the tunnel"
ip netns exec "${tag}h" ping -c "$pings" -W 1 10.78.200.2
kill -INT "$pid"
wait "$pid"
pid=""
echo "--- wasmdp: per port"
python3 - "$tmp/stats.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["ports"]:
    keys = ("rx_packets", "tx_packets", "encapsulated", "decapsulated", "tunnel_passed")
    print(p["name"], {k: p[k] for k in keys}, "dropped:", {k: v for k, v in p["dropped_by_reason"].items() if v})
PY
echo "--- the kernel's vx0"
ip -n "${tag}u" -s link show vx0
