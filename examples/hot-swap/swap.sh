#!/usr/bin/env bash
# Hot-swap under traffic, scripted: runs wasmdp on a copy of a config, rewrites the file N times
# (alternating between the VLAN tagger and the QinQ tagger on port gen0, as an editor would: write a
# new file, rename it over the old one), then stops it and prints the reload figures of its JSON
# report: applied, rejected, the longest file-event-to-all-workers-switched time, and the longest gap
# between two loops of a worker during a reload.
#
# usage: examples/hot-swap/swap.sh [N=20] [INTERVAL_S=0.3]
set -euo pipefail
n=${1:-20}
interval=${2:-0.3}
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
scripts/build-plugins.sh >/dev/null
cargo build --release -q -p wasmdp
bin="${CARGO_TARGET_DIR:-target}/release/wasmdp"
plugins="$root/plugins/target/wasm32-unknown-unknown/release"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lcore=$(( $(nproc) - 1 ))

write() { # mode
  cat >"$tmp/next.yaml" <<YAML
lcores: [$lcore]
ports:
  - name: gen0
    driver: null
    policy: {plugin: $plugins/vlan_tagger.wasm, params: {mode: $1, vlan: 100, vlan_outer: 200}}
  - {name: gen1, driver: null, engine: macswap}
YAML
  mv "$tmp/next.yaml" "$tmp/config.yaml"
}

write vlan
RUST_LOG=warn "$bin" run "$tmp/config.yaml" --stats-period 0 --stats-json "$tmp/stats.json" >/dev/null &
pid=$!
sleep 1
for i in $(seq "$n"); do
  if (( i % 2 )); then write qinq; else write vlan; fi
  sleep "$interval"
done
kill -INT $pid
wait $pid
python3 - "$tmp/stats.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j["reloads"]
print(f"reloads applied {r['applied']}, rejected {r['rejected']}, generation {r['generation']}")
print(f"longest file event -> all workers switched: {r['max_ms']:.3f} ms (last {r['last_ms']:.3f} ms)")
print(f"longest gap between two loops of a worker during a reload: {r['max_gap_us']} us")
t = j["totals"]
print(f"packets: rx {t['rx_packets']}, tx {t['tx_packets']}, dropped {t['dropped']}, in flight {t['in_flight']}; "
      f"{j['mpps']:.1f} Mpps; leaked buffers {j['leaked_buffers']}")
PY
