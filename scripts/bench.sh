#!/usr/bin/env bash
# Engine benchmarks: per-iteration overhead (measured in docs/design.md) and peak
# RSS while an agent floods 1 GiB of output (target: < 50 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./loop -run '^$' -bench BuildIteration -benchtime 500x -count 3
go test ./internal/cli -run '^$' -bench FloodPeakRSS -benchtime 1x
