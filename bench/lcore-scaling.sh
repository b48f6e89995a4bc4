#!/usr/bin/env bash
# Two lcores against one, wall clock: two null ports of two queues each (four streams: p0 q0/q1 ->
# p1, p1 q0/q1 -> p0), 64 B, burst 32, on the last core alone and then on the last two, alternately
# ROUNDS times per mode. Prints per mode each side's median Mpps (min-max), the ratio of the medians
# and the median (min-max) of the per-round ratios. The streams share no counter line (each has its
# own) and each lcore has its own pool cache, so the ideal is 2.0; on a VM where rates swing between
# identical runs, read the per-round spread before the ratio. Each round also runs two separate
# processes of one lcore each, one per core, at once: their summed rate over one lcore's is what the
# machine itself allows two cores (a VM's vCPUs may share a physical core), sharing nothing of ours.
#
# usage: bench/lcore-scaling.sh [SECONDS=2] [ROUNDS=7] [MODES="io macswap"]
set -euo pipefail
secs=${1:-2}
rounds=${2:-7}
modes=${3:-"io macswap"}
cd "$(dirname "$0")/.."
[ "$(nproc)" -ge 2 ] || { echo "needs two cores" >&2; exit 1; }
cargo build --release -q -p wasmdp --features native-examples
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
last=$(($(nproc) - 1))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in $modes; do
  for n in 1 2 other; do
    case $n in 1) lcores="[$last]" ;; 2) lcores="[$((last - 1)), $last]" ;; other) lcores="[$((last - 1))]" ;; esac
    cat >"$tmp/$m-$n.yaml" <<YAML
lcores: $lcores
burst: 32
engine: $m
control: {socket: null}
ports:
  - {name: p0, driver: null, queues: 2, frame: {size: 64}}
  - {name: p1, driver: null, queues: 2, frame: {size: 64}}
YAML
  done
done
mpps() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['mpps'])" "$1"; }
for ((r = 1; r <= rounds; r++)); do
  for m in $modes; do
    for n in 1 2; do
      RUST_LOG=warn "$wasmdp" run "$tmp/$m-$n.yaml" --no-reload --duration "$secs" --stats-period 0 \
        --stats-json "$tmp/out.json" >/dev/null
      echo "$r $m $n $(mpps "$tmp/out.json")"
    done
    # Two processes at once, one on each core.
    RUST_LOG=warn "$wasmdp" run "$tmp/$m-other.yaml" --no-reload --duration "$secs" --stats-period 0 \
      --stats-json "$tmp/other.json" >/dev/null &
    RUST_LOG=warn "$wasmdp" run "$tmp/$m-1.yaml" --no-reload --duration "$secs" --stats-period 0 \
      --stats-json "$tmp/out.json" >/dev/null
    wait $!
    echo "$r $m procs $(python3 -c "import json,sys; print(sum(json.load(open(f))['mpps'] for f in sys.argv[1:]))" "$tmp/other.json" "$tmp/out.json")"
  done
done >"$tmp/runs"
echo "two null ports x 2 queues (4 streams), 64 B, burst 32; ${secs}s x $rounds rounds, Mpps median (min-max)"
python3 - "$tmp/runs" $modes <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
mpps = {(r, m, n): float(v) for r, m, n, v in runs}
for m in sys.argv[2:]:
    one = [v for (r, mm, n), v in mpps.items() if mm == m and n == '1']
    two = [v for (r, mm, n), v in mpps.items() if mm == m and n == '2']
    ratios = [mpps[(r, m, '2')] / mpps[(r, m, '1')] for r in sorted({r for r, mm, _ in mpps if mm == m})]
    med = statistics.median
    procs = [mpps[(r, m, 'procs')] / mpps[(r, m, '1')] for r in sorted({r for r, mm, _ in mpps if mm == m})]
    print('%-8s 1 lcore %6.1f (%.1f-%.1f)  2 lcores %6.1f (%.1f-%.1f)  ratio of medians %.2fx  per round %.2fx (%.2f-%.2f)'
          % (m, med(one), min(one), max(one), med(two), min(two), max(two), med(two) / med(one), med(ratios), min(ratios), max(ratios)))
    print('%-8s two processes of 1 lcore (the machine): per round %.2fx (%.2f-%.2f)' % ('', med(procs), min(procs), max(procs)))
PY
