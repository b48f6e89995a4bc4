# Sourced by the vs-testpmd scripts: runs dpdk-testpmd with the given arguments for $secs seconds of
# forwarding (timed from its "forwards packets on" line, so EAL start-up is not counted), stops it
# with SIGINT and prints its Mpps: the accumulated TX packets over the forwarding time.
# Needs $tmp (a scratch folder) and $secs. usage: testpmd_run_mpps EAL-AND-APP-ARGS...
testpmd_run_mpps() {
  local log=$tmp/testpmd.log
  dpdk-testpmd "$@" >"$log" 2>&1 &
  local pid=$!
  until grep -q "forwards packets on" "$log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { echo "dpdk-testpmd exited early:" >&2; tail -5 "$log" >&2; return 1; }
    sleep 0.01
  done
  local t0 t1 tx
  t0=$(date +%s.%N)
  sleep "$secs"
  t1=$(date +%s.%N)
  kill -INT $pid
  wait $pid || true
  tx=$(grep -A2 "Accumulated forward statistics" "$log" | awk '/TX-packets/ {print $2}')
  echo "$tx $t0 $t1" | awk '{printf "%.3f\n", $1 / ($3 - $2) / 1e6}'
}
