#!/usr/bin/env bash
# The project's test command: installs the pinned agent CLIs (once, into
# .cache/agent-clis) for the end-to-end tests and the pinned JavaScript test
# runners (once, into .cache/js-runners) for the script tests of real
# projects, then runs every Go test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's time is printed to stderr as it ends ("test.sh: PHASE Ns"),
# so that a slow CI run says where its time went.
phase_name="" phase_start=$SECONDS
phase() {
  [ -z "$phase_name" ] || echo "test.sh: $phase_name $((SECONDS - phase_start))s" >&2
  phase_name=${1:-} phase_start=$SECONDS
}
trap 'phase' EXIT
phase install
export LOOPRINTER_AGENT_CLIS="${LOOPRINTER_AGENT_CLIS:-$PWD/.cache/agent-clis}"
if [ -x scripts/install-agent-clis.sh ]; then
  scripts/install-agent-clis.sh
fi
export LOOPRINTER_JS_RUNNERS="${LOOPRINTER_JS_RUNNERS:-$PWD/.cache/js-runners}"
if [ -x scripts/install-js-runners.sh ]; then
  scripts/install-js-runners.sh
fi
phase vet
go vet ./...
# macOS and Windows are built, not tested, here (no machine of the project
# runs them): each must at least compile and vet (vet builds, tests too).
GOOS=darwin GOARCH=arm64 go vet ./...
GOOS=darwin GOARCH=amd64 go build ./...
GOOS=windows GOARCH=amd64 go vet ./...
# go.mod and go.sum are kept tidy: fail when `go mod tidy` would change them.
if ! tidy_diff=$(go mod tidy -diff 2>&1); then
  echo "go mod tidy would change go.mod/go.sum (run it and commit the result):"
  echo "$tidy_diff"
  exit 1
fi
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
phase "go test"
go test -count=1 -timeout 30m ./... "$@"
# The attacks on the trust boundary that run as nobody too (one a line, so
# that adding one is a line of its own).
nobody_scripts=(
  attack_home
  demo_state_in_home
  attack_home_late
  attack_capabilities
  attack_crash_kills_confined
  attack_crash_daemon_landlock
  attack_setsid_daemon
  attack_channels
  attack_git_config
  attack_folder_recreated
  attack_test_aware
  attack_check_confined
  attack_check_gate_state
  attack_state_hidden
  attack_git_hooks_landlock
  audit_fresh_home
  happy_path
  attack_network
  attack_dependency_shim
  secret_scan_unlayered
  land_clean_room
  land_whole_tree
  parallel_hostile
  best_of
  attack_forge_issue
  attack_forge_token_unused
  attack_forge_replay_restart
  forge_e2e
  attack_tells_go_context
  attack_tells_go_initexit
  attack_tells_python
  attack_tells_js
  attack_pyshadow_stdlib
  attack_js_assert_patch
  attack_pyshadow_bypass
  attack_pyshadow_holdout
  attack_pyshadow_pythonpath
  attack_secret_encoded
  tells_controls
  attack_setuid_apply
  attack_dependency_shim_landlock
  attack_holdout_other_loop
  attack_other_loop_unlisted
  attack_other_loop_unlisted_landlock
  attack_other_loop_nested_landlock
  attack_checks_network_allow
  attack_host_services
  attack_host_services_landlock
  attack_view_landlock
  attack_check_cache
  checks_warm
  attack_go_init_forger
  attack_strength_embed
  best_of_special_case
  parallel_transcripts_hidden
  parallel_apply_crash
  attack_best_of_judged_view
  attack_best_of_review
  attack_best_of_review_judged_view
  best_of_review
  inline_tests_rust
  attack_tells_assigned_alias
  attack_doctest_expected
  attack_test_fixture_python
  attack_pyshadow_installed
  attack_pyshadow_nosite
  attack_run_box
)
# The fleet's server-backed tests (an embedded Temporal server, workers as
# processes, git remotes on disk) live in their own module, internal/fleetdev:
# the server needs Go 1.26.10 (the go command fetches it) and takes minutes
# to compile the first time. LOOPRINTER_SKIP_FLEET_SERVER_TESTS=1 skips them.
# They run beside the sandbox's tests as nobody (both wait on processes
# much of their time); their output is printed when they end.
fleet_pid="" fleet_log=""
if [ -z "${LOOPRINTER_SKIP_FLEET_SERVER_TESTS:-}" ]; then
  fleet_log=$(mktemp "${TMPDIR:-/tmp}/looprinter-fleetdev.XXXXXX")
  (
    SECONDS=0
    cd internal/fleetdev
    export GOTOOLCHAIN=go1.26.10+auto TEMPORAL_VERSION_CHECK_DISABLED=1
    go vet ./...
    if ! tidy_diff=$(go mod tidy -diff 2>&1); then
      echo "go mod tidy would change internal/fleetdev/go.mod/go.sum:"; echo "$tidy_diff"; exit 1
    fi
    go test -count=1 -timeout 30m ./...
    echo "test.sh: fleetdev (beside nobody) ${SECONDS}s" >&2
  ) >"$fleet_log" 2>&1 &
  fleet_pid=$!
fi
cleanup() {
  [ -z "${nr:-}" ] || rm -rf "$nr"
  if [ -n "$fleet_pid" ] && kill -0 "$fleet_pid" 2>/dev/null; then
    pkill -TERM -P "$fleet_pid" 2>/dev/null || true
    kill "$fleet_pid" 2>/dev/null || true
  fi
  [ -z "$fleet_log" ] || rm -f "$fleet_log"
  phase
}
trap cleanup EXIT
# The sandbox as an ordinary user too (user namespaces, no root): when the
# tests run as root (CI), its tests run again as nobody.
phase nobody
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
  nr=$(mktemp -d "${TMPDIR:-/tmp}/looprinter-nonroot.XXXXXX")
  chmod 755 "$nr"
  mkdir "$nr/home" && chown 65534:65534 "$nr/home"
  go test -c -o "$nr/sandbox.test" ./sandbox
  chmod 755 "$nr/sandbox.test"
  # The tests read their golden files from testdata/ in the folder they run in.
  cp -r sandbox/testdata "$nr/home/" && chown -R 65534:65534 "$nr/home/testdata"
  (cd "$nr/home" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nr/home" TMPDIR="$nr/home" CI="${CI:-}" ../sandbox.test -test.count=1)
  # The attacks on the trust boundary, with the real binary, as nobody too:
  # the script tests read testdata/script from two folders up.
  go test -c -o "$nr/cli.test" ./internal/cli
  chmod 755 "$nr/cli.test"
  mkdir -p "$nr/home/internal/cli" "$nr/home/testdata"
  cp -r testdata/script "$nr/home/testdata/" && chown -R 65534:65534 "$nr/home"
  # nobody's Go build cache starts empty, and no check box writes the
  # user's cache: each Go script's warm-up would compile the standard
  # library's test dependencies again. A developer's machine has a warm
  # cache; one go vet and go test of a small module, as nobody, warm it
  # once (the scripts that test cold caches set a cache of their own).
  if command -v go >/dev/null 2>&1; then
    w="$nr/home/go-warm"
    mkdir -p "$w"
    printf 'module example.com/warm\n\ngo 1.22\n' > "$w/go.mod"
    printf 'package warm\n\nimport (\n\t"fmt"\n\t"os"\n\t"strconv"\n\t"strings"\n)\n\nfunc F() string { return fmt.Sprint(strconv.Itoa(len(os.Args)), strings.ToUpper("x")) }\n' > "$w/warm.go"
    printf 'package warm\n\nimport "testing"\n\nfunc TestF(t *testing.T) {\n\tif F() == "" {\n\t\tt.Fatal("empty")\n\t}\n}\n' > "$w/warm_test.go"
    chown -R 65534:65534 "$w"
    (cd "$w" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nr/home" GOCACHE="$nr/home/.gocache" GOPATH="$nr/home/go" GOTOOLCHAIN=local GOFLAGS=-mod=mod PATH="$PATH" \
      sh -c 'go vet ./... && go test -count=1 ./... >/dev/null') || echo "test.sh: warming nobody's Go build cache failed; its Go scripts start cold" >&2
  fi
  (cd "$nr/home/internal/cli" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nr/home" TMPDIR="$nr/home" GOCACHE="$nr/home/.gocache" GOPATH="$nr/home/go" CI="${CI:-}" \
    ../../../cli.test -test.count=1 -test.run "TestScript/($(IFS='|'; echo "${nobody_scripts[*]}"))\$")
fi
phase fleetdev
if [ -n "$fleet_pid" ]; then
  fleet_rc=0
  wait "$fleet_pid" || fleet_rc=$?
  fleet_pid=""
  cat "$fleet_log"
  if [ "$fleet_rc" != 0 ]; then
    echo "test.sh: the fleet's server-backed tests failed (exit $fleet_rc)" >&2
    exit "$fleet_rc"
  fi
fi
