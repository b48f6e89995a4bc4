#!/usr/bin/env bash
# wasmdp af_xdp (the pool as the UMEM, and with `umem: queue`, the copying driver) vs wasmdp
# af_packet vs DPDK testpmd's net_af_xdp (and net_af_packet) on the same
# loop: two ports on the two ends of ONE veth pair (root namespace), io forwarding, packets seeded
# by tx_first (wasmdp `tx_first: 4` per port; testpmd --tx-first) and looping between the ends,
# one forwarding core. Runs every side once per round, alternating, ROUNDS times, and prints each
# side's median Mpps (min-max), the ratios, and the process's user and system CPU seconds per
# second (where the time goes: in our code or in the kernel's socket and veth paths).
# Needs root (veth, XDP). AF_XDP runs in copy mode (veth has no zero copy), XDP in MODE (native,
# generic).
#
# usage: bench/vs-testpmd-afxdp.sh [SECONDS=4] [ROUNDS=3] [MODE=native]
set -euo pipefail
secs=${1:-4}
rounds=${2:-3}
mode=${3:-native}
cd "$(dirname "$0")/.."
cargo build --release -q -p wasmdp --features native-examples
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
fwd=$(($(nproc) - 1))
. bench/veth-loop.sh wdpx
have_testpmd_xdp=0
if command -v dpdk-testpmd >/dev/null && ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so >/dev/null 2>&1; then
  have_testpmd_xdp=1
fi

# Every side is measured the same way, from outside: after WARMUP seconds of running, the packets
# the two veth ends received (/sys/class/net/*/statistics/rx_packets) and the process's user and
# system CPU time (/proc/PID/stat) are read at the start and end of a SECONDS window. (Timing
# testpmd from its own counters overstates it: it keeps forwarding while it handles SIGINT.)
warmup=1.5
rx_total() { echo $(($(cat /sys/class/net/$a/statistics/rx_packets) + $(cat /sys/class/net/$b/statistics/rx_packets))); }
cpu_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

# Starts "$@" in the background, measures the window, stops it; prints "MPPS USER_PER_S SYS_PER_S".
measure() {
  "$@" >"$tmp/out" 2>&1 &
  local pid=$! hz
  hz=$(getconf CLK_TCK)
  sleep "$warmup"
  if ! kill -0 $pid 2>/dev/null; then
    echo "fail 0 0"
    tail -3 "$tmp/out" >&2
    return
  fi
  local p0 c0 t0 p1 c1 t1
  p0=$(rx_total); c0=$(cpu_ticks $pid); t0=$(date +%s.%N)
  sleep "$secs"
  p1=$(rx_total); c1=$(cpu_ticks $pid); t1=$(date +%s.%N)
  kill -INT $pid
  wait $pid || true
  echo "$p0 $p1 $c0 $c1 $t0 $t1 $hz" |
    awk '{t = $8 - $7; printf "%.3f %.2f %.2f\n", ($2 - $1) / t / 1e6, ($5 - $3) / $9 / t, ($6 - $4) / $9 / t}'
}

wasmdp_run() {
  loop_config "$1" "$fwd"
  RUST_LOG=warn exec $wasmdp run "$tmp/cfg.yaml" --stats-period 0 --no-reload
}

# The copying driver: a UMEM per queue.
wasmdp_queue_run() {
  XDP_OPTS="${XDP_OPTS:+$XDP_OPTS, }umem: queue" wasmdp_run af_xdp
}

testpmd_run() {
  local vdev
  if [ "$1" = af_xdp ]; then
    vdev=(--vdev=net_af_xdp0,iface=$a,start_queue=0,queue_count=1 --vdev=net_af_xdp1,iface=$b,start_queue=0,queue_count=1)
  else
    vdev=(--vdev=net_af_packet0,iface=$a --vdev=net_af_packet1,iface=$b)
  fi
  exec dpdk-testpmd -l 0,$fwd --no-huge -m 1024 --no-pci --log-level=error "${vdev[@]}" -- \
    --forward-mode=io --tx-first --nb-cores=1 -a --stats-period 100
}

sides=("wasmdp af_xdp:wasmdp_run af_xdp" "wasmdp af_xdp queue:wasmdp_queue_run" "wasmdp af_packet:wasmdp_run af_packet")
if [ $have_testpmd_xdp = 1 ]; then
  sides+=("testpmd net_af_xdp:testpmd_run af_xdp" "testpmd net_af_packet:testpmd_run af_packet")
else
  echo "testpmd or its net_af_xdp driver missing (apt-get install dpdk-dev librte-net-af-xdp23): wasmdp only" >&2
fi
for r in $(seq "$rounds"); do
  for side in "${sides[@]}"; do
    name=${side%%:*}
    line=$(measure ${side#*:})
    echo "$name|$line" >>"$tmp/results"
    echo "round $r: $name: $line (Mpps user/s sys/s)" >&2
  done
done
python3 - "$tmp/results" "$mode" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, vals = line.strip().split("|")
    m, u, s = vals.split()
    if m != "fail":
        rows.setdefault(name, []).append((float(m), float(u), float(s)))
med = lambda v: statistics.median(v)
print(f"io on one veth pair, 1 forwarding core, XDP {sys.argv[2]} mode (copy): median (min-max) Mpps; CPU s per s")
for name, v in rows.items():
    m = [x[0] for x in v]
    print("  %-22s %.3f (%.3f-%.3f)  user %.2f  sys %.2f" % (name, med(m), min(m), max(m), med([x[1] for x in v]), med([x[2] for x in v])))
base = rows.get("wasmdp af_xdp")
for other in ["wasmdp af_xdp queue", "wasmdp af_packet", "testpmd net_af_xdp", "testpmd net_af_packet"]:
    if base and other in rows:
        print("  ratio wasmdp af_xdp / %s: %.2f" % (other, med([x[0] for x in base]) / med([x[0] for x in rows[other]])))
PY
