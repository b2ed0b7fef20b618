#!/bin/sh
# Objective gate: exits 0 only when every test of the module passes.
# The tests themselves are protected in loop.yaml, so passing them means fixing the code.
set -e
cd "$(dirname "$0")/.."
go vet ./...
go test -count=1 ./...
