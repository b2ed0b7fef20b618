#!/usr/bin/env bash
# Engine benchmarks (the numbers are in docs/design.md, "The cost of an
# iteration"):
#   - the engine's own time and CPU per build iteration with a no-op agent,
#     in an empty folder and in generated checkouts of 10,000 and 100,000
#     files (writing the 100,000 files takes a minute or more);
#   - status NAME, logs -n 20 and cost on a loop with 10,000 iterations of
#     records (target: under 20 ms each);
#   - peak RSS while an agent floods 1 GiB of output (target: < 50 MB).
# Every benchmark writes only in its own temporary folders (its loop
# folders, and LOOPRINTER_STATE_DIR for the registry and engine folders).
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./loop -run '^$' -bench BuildIteration -benchtime 100x -count 1 -timeout 60m
go test ./internal/cli -run '^$' -bench 'ReadsAt10000Iterations' -benchtime 20x
go test ./internal/cli -run '^$' -bench FloodPeakRSS -benchtime 1x
