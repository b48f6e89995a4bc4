#!/usr/bin/env bash
# Side by side with DPDK's testpmd on null ports: same engine, frame size and burst, one forwarding
# core, two ports paired (two streams), run alternately ROUNDS times; prints each side's median Mpps
# with min and max, and the ratio wasmdp/testpmd.
#
# usage: bench/vs-testpmd.sh [SECONDS=3] [ROUNDS=3] [MODES="io macswap"] [SIZES="64 512"]
# NULL_COPY=1 gives testpmd's null ports their `copy` option, so that its RX writes each packet's
# bytes as wasmdp's null RX does (by default net_null only sets the lengths).
# Needs root only to install Debian's dpdk-dev package when dpdk-testpmd is missing.
set -euo pipefail
secs=${1:-3}
rounds=${2:-3}
modes=${3:-"io macswap"}
sizes=${4:-"64 512"}
burst=32
null_opts=""
[ "${NULL_COPY:-0}" = 1 ] && null_opts=",copy=1"
cd "$(dirname "$0")/.."
. bench/testpmd.sh

if ! command -v dpdk-testpmd >/dev/null; then
  echo "installing Debian's dpdk-dev package (dpdk-testpmd, dpdk-test)..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpdk-dev >/dev/null
fi
cargo build --release -q -p wasmdp --features native-examples
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
ncores=$(nproc)
fwd=$((ncores - 1))   # forwarding core; testpmd's main lcore is 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

testpmd_mpps() { # mode size
  testpmd_run_mpps -l 0,$fwd --no-huge -m 1024 --no-pci --log-level=error \
    --vdev=net_null0,size=$2$null_opts --vdev=net_null1,size=$2$null_opts -- \
    --forward-mode=$1 --nb-cores=1 --burst=$burst -a --stats-period 100
}

wasmdp_mpps() { # mode size
  cat >"$tmp/cfg.yaml" <<YAML
lcores: [$fwd]
burst: $burst
engine: $1
ports:
  - {name: p0, driver: null, frame: {size: $2}}
  - {name: p1, driver: null, frame: {size: $2}}
YAML
  RUST_LOG=warn $wasmdp run "$tmp/cfg.yaml" --duration "$secs" --stats-period 0 --stats-json "$tmp/s.json" >/dev/null
  python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['mpps'])" "$tmp/s.json"
}

stats() { # values... -> "median min max"
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "%.2f %.2f %.2f", v[int((NR+1)/2)], v[1], v[NR]}'
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "null ports x2 paired${null_opts:+ (testpmd null$null_opts)}, 1 forwarding core ($fwd), burst $burst, ${secs}s x $rounds rounds, alternating"
printf '%-8s %5s | %-22s | %-22s | %s\n' mode size "testpmd Mpps med(min-max)" "wasmdp Mpps med(min-max)" "ratio"
for mode in $modes; do
  for size in $sizes; do
    t=(); w=(); r=()
    for _ in $(seq "$rounds"); do
      a=$(testpmd_mpps "$mode" "$size"); b=$(wasmdp_mpps "$mode" "$size")
      t+=("$a"); w+=("$b"); r+=("$(echo "$b $a" | awk '{printf "%.3f", $1/$2}')")
    done
    read -r tm tmin tmax <<<"$(stats "${t[@]}")"
    read -r wm wmin wmax <<<"$(stats "${w[@]}")"
    read -r rm rmin rmax <<<"$(stats "${r[@]}")"
    printf '%-8s %5s | %6s (%6s-%6s)  | %6s (%6s-%6s)  | %sx (%s-%s)\n' "$mode" "$size" "$tm" "$tmin" "$tmax" "$wm" "$wmin" "$wmax" "$rm" "$rmin" "$rmax"
  done
done
