#!/usr/bin/env bash
# Instructions per packet, wasmdp and DPDK's testpmd side by side, under valgrind's callgrind (the
# stable measure here: counts repeat within 0.05%, wall-clock rates swing up to 3x). The same work
# on both: two null ports paired (testpmd's net_null with `copy=1`, so that its RX writes each
# packet's bytes as wasmdp's null RX writes its template), 64-byte frames, burst 32, one forwarding
# core; for each forwarding mode, the packets' instructions in the forwarding loop: wasmdp's worker
# loop (bench/instructions.sh --paths) and testpmd's forwarding thread (bench/testpmd.sh's
# testpmd_callgrind_ipp). Prints per mode both counts, each engine's cost over its own io, and the
# ratio testpmd / wasmdp (above 1: wasmdp does the packet in fewer instructions).
#
# usage: bench/vs-testpmd-instructions.sh [SECONDS=3] [MODES="io macswap"]
# Needs valgrind, and dpdk-testpmd (installed from Debian's dpdk-dev when missing: root).
set -euo pipefail
secs=${1:-3}
modes=${2:-"io macswap"}
cg_secs=$secs
burst=32
cd "$(dirname "$0")/.."
. bench/testpmd.sh
need=()
command -v dpdk-testpmd >/dev/null || need+=(dpdk-dev)
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
[[ " $modes " == *" io "* ]] || modes="io $modes"   # the costs over io need io
fwd=$(($(nproc) - 1))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A ours theirs
while read -r path ipp; do ours[$path]=$ipp; done < <(bench/instructions.sh --paths "$modes" "$secs")
for m in $modes; do
  read -r ipp ir n < <(testpmd_callgrind_ipp "$tmp/cg-$m.out" "$tmp/cg-$m.log" -l "0,$fwd" --no-huge -m 1024 \
    --no-pci --log-level=error --vdev=net_null0,size=64,copy=1 --vdev=net_null1,size=64,copy=1 -- \
    --forward-mode="$m" --nb-cores=1 --burst=$burst --stats-period 100)
  theirs[$m]=$ipp
  echo "testpmd $m: $ir instructions in the forwarding thread / $n packets = $ipp" >&2
done

echo "instructions per packet (callgrind), two null ports, 64 B, burst $burst, one core; testpmd net_null copy=1"
printf '%-10s %10s %10s %14s %14s %8s\n' mode testpmd wasmdp "testpmd - io" "wasmdp - io" ratio
for m in $modes; do
  python3 - "$m" "${theirs[$m]}" "${ours[$m]}" "${theirs[io]}" "${ours[io]}" <<'PY'
import sys
m, t, w, tio, wio = sys.argv[1], *map(float, sys.argv[2:])
over = lambda a, b: '' if m == 'io' else '%.1f' % (a - b)
print('%-10s %10.1f %10.1f %14s %14s %7.2fx' % (m, t, w, over(t, tio), over(w, wio), t / w))
PY
done
