# Sourced by the vs-testpmd scripts: runs dpdk-testpmd with the given arguments for $secs seconds of
# forwarding (timed from its "forwards packets on" line, so EAL start-up is not counted), stops it
# with SIGINT and prints its Mpps: the accumulated TX packets over the forwarding time. That time
# ends when testpmd stops its cores, not at the SIGINT: testpmd notices the signal only at the end
# of its 1 s stats sleep, and these sleeps start with the forwarding, so it forwarded nearly 1 s
# more than $secs (3 s timed to the SIGINT read 42 Mpps where 31.6 were forwarded per second, +33%).
# It ends when "Telling cores to stop" reaches the log (flushed with the statistics right after the
# cores stopped; polled every 10 ms).
# TESTPMD_COUNT=handled counts the accumulated RX packets less TX-dropped instead: the packets sent
# or dropped by an RX callback (an rte_bpf filter's drops never reach TX, yet are its work).
# Needs $tmp (a scratch folder) and $secs. usage: testpmd_run_mpps EAL-AND-APP-ARGS...
testpmd_run_mpps() {
  local log=$tmp/testpmd.log
  dpdk-testpmd "$@" >"$log" 2>&1 &
  local pid=$!
  until grep -q "forwards packets on" "$log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { echo "dpdk-testpmd exited early:" >&2; tail -5 "$log" >&2; return 1; }
    sleep 0.01
  done
  local t0 t1 tx n=0
  t0=$(date +%s.%N)
  sleep "$secs"
  kill -INT $pid
  until grep -q "Telling cores to stop" "$log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
    n=$((n + 1))
    # A SIGINT was once seen lost (testpmd forwarding on for minutes): sent again every 2 s.
    [ $((n % 200)) != 0 ] || kill -INT $pid
    [ $n -lt 3000 ] || { kill -KILL $pid; echo "dpdk-testpmd did not stop in 30 s" >&2; return 1; }
  done
  t1=$(date +%s.%N)
  wait $pid || true
  if [ "${TESTPMD_COUNT:-tx}" = handled ]; then
    tx=$(grep -A2 "Accumulated forward statistics" "$log" | awk '/RX-packets/ {rx = $2} /TX-packets/ {print rx - $4}')
  else
    tx=$(grep -A2 "Accumulated forward statistics" "$log" | awk '/TX-packets/ {print $2}')
  fi
  echo "$tx $t0 $t1" | awk '{printf "%.3f\n", $1 / ($3 - $2) / 1e6}'
}
