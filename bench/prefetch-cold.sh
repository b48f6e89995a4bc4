#!/usr/bin/env bash
# The metadata prefetch of the tunnel engines where it can matter: VXLAN encapsulation and
# decapsulation with INFLIGHT packets circling through four ring ports, so that each buffer comes
# back to an engine only after INFLIGHT others (its metadata lines long gone from L1/L2), as buffers
# do when a NIC's RX ring is refilled from a large pool. Runs with `prefetch_flow_meta` true and false
# alternately, ROUNDS times; prints each side's median Mpps (min-max) and the median of the
# per-round ratios (prefetch on / off).
#
#   a --vxlan_encap--> b ==ring==> c --vxlan_decap--> d ==ring==> a    (one lcore, both streams)
#
# usage: bench/prefetch-cold.sh [SECONDS=2] [ROUNDS=7] [INFLIGHT=8192]
set -euo pipefail
secs=${1:-2}
rounds=${2:-7}
inflight=${3:-8192}
cd "$(dirname "$0")/.."
cargo build --release -q -p wasmdp --features native-examples
wasmdp="${CARGO_TARGET_DIR:-target}"/release/wasmdp
lcore=$(($(nproc) - 1))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ring=$((inflight * 2))
for pf in true false; do
  cat >"$tmp/$pf.yaml" <<YAML
lcores: [$lcore]
burst: 32
pool: {size: $((inflight * 2 + 4096)), cache_size: 256}
prefetch_flow_meta: $pf
streams:
  - {rx: a, tx: b}
  - {rx: c, tx: d}
ports:
  - {name: a, driver: ring, ring: {peer: d, size: $ring}, engine: vxlan_encap}
  - {name: b, driver: ring, ring: {peer: c, size: $ring}, vxlan: {vni: 42, local_ip: 192.0.2.1, remote_ip: 192.0.2.2}}
  - {name: c, driver: ring, ring: {peer: b, size: $ring}, engine: vxlan_decap, vxlan: {vni: 42, local_ip: 192.0.2.2}}
  - {name: d, driver: ring, ring: {peer: a, size: $ring}, tx_first: $((inflight / 32))}
YAML
done
for r in $(seq "$rounds"); do
  for pf in true false; do
    RUST_LOG=error "$wasmdp" run "$tmp/$pf.yaml" --duration "$secs" --stats-period 0 --no-reload \
      --stats-json "$tmp/$pf-$r.json" >/dev/null
  done
done
python3 - "$tmp" "$rounds" "$inflight" <<'PY'
import json, statistics, sys
tmp, rounds, inflight = sys.argv[1], int(sys.argv[2]), sys.argv[3]
get = lambda pf, r: json.load(open(f"{tmp}/{pf}-{r}.json"))
runs = {pf: [get(pf, r) for r in range(1, rounds + 1)] for pf in ("true", "false")}
for pf, js in runs.items():
    assert all(j["totals"]["dropped"] == 0 for j in js), "drops in a run"
mpps = {pf: [j["mpps"] for j in js] for pf, js in runs.items()}
line = lambda v: f"{statistics.median(v):7.2f} ({min(v):.2f}-{max(v):.2f})"
print(f"{inflight} packets in flight, {rounds} rounds; Mpps (both streams) median (min-max)")
print(f"  prefetch on : {line(mpps['true'])}")
print(f"  prefetch off: {line(mpps['false'])}")
ratios = [a / b for a, b in zip(mpps["true"], mpps["false"])]
print(f"  on/off per round: median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
PY
