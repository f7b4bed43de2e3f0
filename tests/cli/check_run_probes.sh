#!/bin/sh
# quiesce run, the default campaign, reports the probes of its workload: the probe the workload cannot reach
# (for the engine, "cancellation won"; for the raw workload, the engine-only one) is named as outside the
# workload and never as never reached, and it is not counted among the probes.
quiesce="$1"
workload="$2"
out="$("$quiesce" run --seeds 0..19 --jobs 2 --operations 300 --workload "$workload")" || { echo "$out"; echo "quiesce run exited $?"; exit 1; }
echo "$out"
case "$workload" in
  engine) foreign="cancellation won" ;;
  raw) foreign="submit left its completions to a later call" ;;
esac
if echo "$out" | grep -q "never reached: $foreign"; then echo "FAIL: '$foreign' is reported as never reached"; exit 1; fi
echo "$out" | grep -q "^  not a probe of the $workload workload: $foreign" || { echo "FAIL: '$foreign' is not named as outside the $workload workload"; exit 1; }
echo "$out" | grep -Eq "^coverage probes reached: [0-9]+ of 18$" || { echo "FAIL: the report does not count the 18 probes of the workload"; exit 1; }
