# Sourced by the af_xdp loop scripts: ONE veth pair in the root namespace, ends `$a` and `$b`
# (named from PREFIX and the script's pid), IPv6 off, up; a temp folder `$tmp`; both removed at
# exit; `port_opts DRIVER` prints a port's driver options for the loop (IFACE to be replaced; af_xdp
# in `$mode`, with `$XDP_OPTS` when set); `loop_config DRIVER LCORE` writes `$tmp/cfg.yaml`, the
# loop itself (io, the two ends paired, 4 bursts sent first). usage: . bench/veth-loop.sh PREFIX
a=$1$$a
b=$1$$b
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
port_opts() {
  if [ "$1" = af_xdp ]; then
    echo "af_xdp: {iface: IFACE, mode: $mode${XDP_OPTS:+, $XDP_OPTS}}"
  else
    echo "af_packet: {iface: IFACE, block_size: 16384, block_count: 256}"
  fi
}
loop_config() {
  local opts
  opts=$(port_opts "$1")
  cat >"$tmp/cfg.yaml" <<YAML
lcores: [$2]
engine: io
topology: paired
ports:
  - {name: a, driver: $1, ${opts/IFACE/$a}, tx_first: 4}
  - {name: b, driver: $1, ${opts/IFACE/$b}, tx_first: 4}
YAML
}
