#!/usr/bin/env bash
# The fleet's benchmark (numbers in docs/fleet.md): the time per step through
# an embedded Temporal server against a local run of the same loop, then
# LOOPS short loops (default 100) over three workers: steps per second and
# peak memory of the workers and of the server's process.
set -euo pipefail
cd "$(dirname "$0")/../internal/fleetdev"
export GOTOOLCHAIN=go1.26.10+auto TEMPORAL_VERSION_CHECK_DISABLED=1
LOOPRINTER_FLEET_BENCH=1 LOOPRINTER_FLEET_BENCH_LOOPS="${LOOPS:-100}" \
  go test -count=1 -timeout 60m -run 'TestFleetBench$' -v . | grep -E '^(per step|[0-9]+ ralph|worker|server|--- |ok|FAIL)'
