#!/usr/bin/env bash
# The peer of wasmdp's per-packet plugins in DPDK: rte_bpf programs (eBPF, JIT-compiled, sandboxed by
# DPDK's verifier) loaded with testpmd's `bpf-load rx P 0 JM prog.o` as RX callbacks on both ports of
# an io-forwarding testpmd, doing the per-packet work of the plugins: bench/bpf/macswap.c
# (wasm_macswap), dnat.c (dnat 198.18.0.0/24 -> 10.9.9.9, checking data_len before each header),
# acl.c (acl deny_udp_dst_port: 9 drops every frame; acl_pass, port 53, none). Both ports are
# net_pcap replaying in a loop (infinite_rx) the template frame that wasmdp's null ports generate,
# captured from wasmdp itself so both sides see the same bytes; TX frees (net_pcap without tx).
#
# 1. check: each program once over a pcap of the template and variants (VLAN tags, TCP, UDP checksum
#    0, options, fragments, non-IPv4, cut frames) into a TX pcap, compared frame by frame with
#    bench/bpf/check.py's reference (checksums computed again in full); and, with tshark, the IPv4,
#    UDP and TCP checksums of dnat's output validated. Any difference stops the script.
# 2. instructions per packet under valgrind's callgrind: the instructions of testpmd's forwarding
#    lcore thread (the JIT code runs in it, called from the ethdev RX callback) over the packets
#    handled, RX less TX-dropped (sent, or dropped by the program): bench/testpmd.sh's
#    testpmd_callgrind_ipp, which says how the thread is found (TESTPMD_TOGGLE there too).
# 3. Mpps: ROUNDS rounds of SECONDS seconds per program, in turn, as median (min-max) of the
#    packets handled per second (bench/testpmd.sh with TESTPMD_COUNT=handled), and interleaved with
#    each testpmd run, wasmdp doing the same work: two null ports of the same 64 B template, the
#    example plugin on both (wasm_macswap, dnat, acl denying port 9 / 53), one worker on the same
#    core, burst 32, packets handled (transmitted or dropped by the plugin) per second. Runs of the
#    two side by side in time share the machine's state, so their ratio is steadier than either.
# Prints: program, instructions/packet, cost over io (its instructions less io's), Mpps of both and
# the ratio wasmdp / testpmd of the medians.
#
# usage: bench/vs-rte-bpf.sh [SECONDS=3] [ROUNDS=3] [PROGRAMS="io macswap dnat acl acl_pass"]
#   CG_SECONDS=3   forwarding seconds under callgrind per program (CALLGRIND=0 skips the counts)
#   WASMDP=PATH    a built wasmdp to capture the template with, instead of `cargo build --release`
# Needs dpdk-testpmd with librte_bpf (Debian 12: dpdk-dev, DPDK 22.11), clang (-target bpf), python3,
# valgrind; tshark optional. Root only to install the missing ones (apt-get: dpdk-dev clang llvm
# valgrind). EAL without hugepages (--no-huge -m 1024) and without PCI; cores 0 and the last.
set -euo pipefail
secs=${1:-3}
rounds=${2:-3}
programs=${3:-"io macswap dnat acl acl_pass"}
cg_secs=${CG_SECONDS:-3}
callgrind=${CALLGRIND:-1}
burst=32
cd "$(dirname "$0")/.."
. bench/testpmd.sh

need=()
command -v dpdk-testpmd >/dev/null || need+=(dpdk-dev)
command -v clang >/dev/null || need+=(clang llvm)
[ "$callgrind" = 1 ] && ! command -v valgrind >/dev/null && need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ -z "${WASMDP:-}" ]; then
  cargo build --release -q -p wasmdp --features native-examples
  WASMDP="${CARGO_TARGET_DIR:-target}"/release/wasmdp
fi
fwd=$(($(nproc) - 1))   # forwarding core; testpmd's main lcore is 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The template: wasmdp's null port forwarding to a pcap port for 10 ms (about 100k frames, a few MB),
# the first frame kept.
cat >"$tmp/capture.yaml" <<YAML
lcores: [$fwd]
burst: $burst
engine: io
control: {socket: null}
ports:
  - {name: gen, driver: null, frame: {size: 64}}
  - {name: cap, driver: pcap, pcap: {tx: capture.pcap}}
YAML
RUST_LOG=warn timeout 60 "$WASMDP" run "$tmp/capture.yaml" --duration 0.01 --stats-period 0 >/dev/null
python3 bench/bpf/check.py template "$tmp/capture.pcap" "$tmp/template.pcap"
rm -f "$tmp/capture.pcap"
python3 bench/bpf/check.py frames "$tmp/template.pcap" "$tmp/check.pcap"

# The programs: acl twice, denying port 9 (every template frame) and 53 (none).
cflags=(-O2 -Wall -Werror -target bpf -D__x86_64__ -D_RTE_BYTEORDER_X86_H_ -I/usr/include/x86_64-linux-gnu
  -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk)
clang "${cflags[@]}" -c bench/bpf/macswap.c -o "$tmp/macswap.o"
clang "${cflags[@]}" -c bench/bpf/dnat.c -o "$tmp/dnat.o"
clang "${cflags[@]}" -DDENY_PORT=9 -c bench/bpf/acl.c -o "$tmp/acl.o"
clang "${cflags[@]}" -DDENY_PORT=53 -c bench/bpf/acl.c -o "$tmp/acl_pass.o"
for p in macswap dnat acl acl_pass; do
  printf 'bpf-load rx 0 0 JM %s\nbpf-load rx 1 0 JM %s\n' "$tmp/$p.o" "$tmp/$p.o" >"$tmp/$p.cmd"
done

eal=(-l "0,$fwd" --no-huge -m 1024 --no-pci --log-level=error)
app=(--forward-mode=io --nb-cores=1 --burst=$burst --stats-period 100)
loop_ports=(--vdev="net_pcap0,rx_pcap=$tmp/template.pcap,infinite_rx=1"
  --vdev="net_pcap1,rx_pcap=$tmp/template.pcap,infinite_rx=1")
load() { # program -> testpmd's option loading it (none for io)
  [ "$1" = io ] || echo "--cmdline-file=$tmp/$1.cmd"
}
loaded() { # log: both bpf-load commands answered 0:Success (else the run was plain io)
  [ "$(grep -c '^0:Success' "$1")" = 2 ] || { echo "bpf-load failed:" >&2; grep -A1 'bpf\|BPF' "$1" >&2; exit 1; }
}

# 1. The check: port 0 replays the check frames once, port 1 writes what it is given to a pcap
# (--no-flush-rx: else testpmd drains the RX queues before forwarding, the frames with them).
echo "check (bench/bpf/check.py, frame by frame):"
for p in $programs; do
  [ "$p" = io ] && continue
  secs=1 testpmd_run_mpps "${eal[@]}" --vdev="net_pcap0,rx_pcap=$tmp/check.pcap" \
    --vdev="net_pcap1,tx_pcap=$tmp/out-$p.pcap" -- "${app[@]}" --no-flush-rx "$(load $p)" >/dev/null
  loaded "$tmp/testpmd.log"
  python3 bench/bpf/check.py verify "$p" "$tmp/check.pcap" "$tmp/out-$p.pcap" | sed 's/^/  /'
  if [ "$p" = dnat ] && command -v tshark >/dev/null; then
    ck=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE)
    bad=$(tshark -r "$tmp/out-$p.pcap" "${ck[@]}" -Y 'ip.checksum.status == "Bad" || udp.checksum.status == "Bad" || tcp.checksum.status == "Bad"' 2>/dev/null | wc -l)
    good=$(tshark -r "$tmp/out-$p.pcap" "${ck[@]}" -Y 'ip.dst == 10.9.9.9 && ip.checksum.status == "Good" && (udp.checksum.status == "Good" || tcp.checksum.status == "Good")' 2>/dev/null | wc -l)
    echo "  dnat: tshark: $good frames to 10.9.9.9 with good IPv4 and UDP/TCP checksums, $bad with a bad one"
    [ "$bad" = 0 ] || exit 1
  fi
done

# 2. Instructions per packet handled, in the forwarding lcore thread.
declare -A ipp
callgrind_ipp() { # program
  testpmd_callgrind_ipp "$tmp/cg-$1.out" "$tmp/cg-$1.log" "${eal[@]}" "${loop_ports[@]}" -- "${app[@]}" $(load "$1")
  [ "$1" = io ] || loaded "$tmp/cg-$1.log"
}
if [ "$callgrind" = 1 ]; then
  for p in $programs; do
    callgrind_ipp "$p" >"$tmp/ipp"
    read -r i ir n <"$tmp/ipp"
    ipp[$p]=$i
    echo "callgrind $p: $ir instructions in the forwarding thread / $n packets handled = $i" >&2
  done
fi

# 3. Mpps, the programs in turn in each round, wasmdp and testpmd one after the other.
stats() { # values... -> "median min max"
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "%.2f %.2f %.2f", v[int((NR+1)/2)], v[1], v[NR]}'
}
plugins=${PLUGINS:-plugins/target/wasm32-unknown-unknown/release}
[ -f "$plugins/acl.wasm" ] || scripts/build-plugins.sh >/dev/null
plugins=$(realpath "$plugins")   # the configs are in $tmp: paths in them resolve from there
wasmdp_policy() { # program -> the policy of both ports (none for io)
  local pol="on_failure: fail_closed, limits: {deadline_us: 1000000}"
  case $1 in
    io) ;;
    macswap) echo ", policy: {plugin: $plugins/wasm_macswap.wasm, $pol}" ;;
    dnat) echo ", policy: {plugin: $plugins/dnat.wasm, params: {match: 198.18.0.0/24, to: 10.9.9.9}, $pol}" ;;
    acl) echo ", policy: {plugin: $plugins/acl.wasm, params: {deny_udp_dst_port: 9}, $pol}" ;;
    acl_pass) echo ", policy: {plugin: $plugins/acl.wasm, params: {deny_udp_dst_port: 53}, $pol}" ;;
  esac
}
wasmdp_mpps() { # program -> packets handled per second (transmitted or dropped by the plugin)
  local pol
  pol=$(wasmdp_policy "$1")
  cat >"$tmp/w-$1.yaml" <<YAML
lcores: [$fwd]
burst: $burst
engine: io
control: {socket: null}
ports:
  - {name: a, driver: null, frame: {size: 64}$pol}
  - {name: b, driver: null, frame: {size: 64}$pol}
YAML
  RUST_LOG=warn "$WASMDP" run "$tmp/w-$1.yaml" --no-reload --duration "$secs" --stats-period 0 \
    --stats-json "$tmp/w-$1.json" >/dev/null || { echo "wasmdp run failed for $1" >&2; exit 1; }
  python3 - "$tmp/w-$1.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["streams"]
handled = sum(x["tx_packets"] + x["dropped"] for x in s)
print("%.3f" % (handled / j["duration_s"] / 1e6))
PY
}
declare -A mpps wmpps
for _ in $(seq "$rounds"); do
  for p in $programs; do
    wmpps[$p]="${wmpps[$p]:-} $(wasmdp_mpps "$p")"
    m=$(TESTPMD_COUNT=handled testpmd_run_mpps "${eal[@]}" "${loop_ports[@]}" -- "${app[@]}" $(load "$p"))
    [ "$p" = io ] || loaded "$tmp/testpmd.log"
    mpps[$p]="${mpps[$p]:-} $m"
  done
done

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); DPDK $(pkg-config --modversion libdpdk 2>/dev/null || echo '?'); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "testpmd io, net_pcap x2 replaying wasmdp's template (infinite_rx, TX frees), rte_bpf JIT on both RX queues (JM; each program checks data_len before each header), 1 forwarding core ($fwd), burst $burst; $([ "$callgrind" = 1 ] && echo "callgrind ${cg_secs}s" || echo "no callgrind"); Mpps ${secs}s x $rounds rounds"
printf '%-10s | %12s | %12s | %-22s | %-22s | %s\n' program instr/pkt "over io" "testpmd Mpps med (min-max)" \
  "wasmdp Mpps med (min-max)" "wasmdp/testpmd"
for p in $programs; do
  read -r mm mmin mmax <<<"$(stats ${mpps[$p]})"
  read -r wm wmin wmax <<<"$(stats ${wmpps[$p]})"
  i=${ipp[$p]:--}
  over=-
  [ -n "${ipp[io]:-}" ] && [ "$i" != - ] && over=$(echo "$i ${ipp[io]}" | awk '{printf "%+.2f", $1 - $2}')
  ratio=$(echo "$wm $mm" | awk '{printf "%.2fx", $1 / $2}')
  printf '%-10s | %12s | %12s | %6s (%s-%s) | %6s (%s-%s) | %s\n' "$p" "$i" "$over" "$mm" "$mmin" "$mmax" \
    "$wm" "$wmin" "$wmax" "$ratio"
done
