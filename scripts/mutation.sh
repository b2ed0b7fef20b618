#!/usr/bin/env bash
# Mutation testing of the packages that judge agents: spec, record, cost,
# guard, judge, loop and tells (its scanners of a run's context); and of those that draw the sandbox's boundary:
# netpolicy, netproxy and sandbox (its view, its rules and the apply's
# special bits). Each package is mutated by gremlins (pinned below)
# and only its own tests run against each mutant. Prints one table row a
# package (or part) and fails when one falls under the thresholds, or when
# a mutant lives in code that decides a budget, a cap, a permission, a
# protection, the judge or an exit code and is not listed as equivalent in
# docs/design.md ("Mutation testing"). An entry of the critical list that
# names a file or function that does not exist fails it before anything
# runs (exit 2).
#
#   scripts/mutation.sh              what changed since the last full
#                                    measurement (CI; see below)
#   scripts/mutation.sh spec cost    only these
#   scripts/mutation.sh loop/budgets one part of a package's critical code
#   scripts/mutation.sh --full       the full measurement: spec, record,
#                                    cost, netpolicy and netproxy in full;
#                                    guard, judge, loop, sandbox and tells
#                                    in their critical parts; records the
#                                    base
#   scripts/mutation.sh --all loop   every mutant of loop (about an hour)
#   scripts/mutation.sh --critical   CI: only the critical entries that
#                                    changed since each package's base,
#                                    each mutated whole (the rest of a
#                                    package's changed lines by hand)
#
# guard, judge, loop, sandbox and tells are mutated in parts: only the functions and files
# of the critical list below (gremlins v0.5.0 has no file filter: the rest
# of the package is marked unchanged through its --diff, see scope_to).
# loop's tests run an engine per test and take minutes, once per mutant,
# and run with -short there (the 60,000-file scale test and the 20,000-file
# event-queue flood are left out). guard's and judge's tests take seconds,
# but the rest of those packages is pinned by loop's engine tests, which
# gremlins cannot run against another package's mutants. sandbox's full
# suite runs bubblewrap and takes about a minute: each of its parts runs
# only the unit tests of its own files (seconds a mutant).
#
# The packages of the boundary (netpolicy, netproxy, sandbox) are held to
# higher thresholds (MIN_EFFICACY_BOUNDARY, MIN_COVERAGE_BOUNDARY).
#
# Diff mode (the default): scripts/mutation-base holds, a line a package,
# the commit of the package's last full measurement (--full writes it when
# the package passes and its files are committed). Only the lines of the
# package that changed since that commit are mutated, and every entry of
# the critical list whose code changed (or that joined the list since) is
# mutated whole; for a package in parts, only such critical entries. A
# package falls back to its full measurement, saying why, when no base is
# recorded, the base is not in this clone (a shallow clone is deepened by a
# fetch of that one commit first), or its tests lost lines since (a weaker
# test could let a mutant of unchanged code live). The same thresholds hold over the
# mutants run; see "Thresholds" in docs/design.md for a diff with few
# mutants.
#
# MUTATION_WORKERS (default 2) sets gremlins' workers. The logs are in
# .cache/mutation/PACKAGE.log (PACKAGE-PART.log for a part).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

GREMLINS=github.com/go-gremlins/gremlins
GREMLINS_VERSION=v0.5.0
MIN_EFFICACY=85
MIN_COVERAGE=70
# The packages that draw the sandbox's boundary: what an agent's run sees
# and reaches.
BOUNDARY_PACKAGES="netpolicy netproxy sandbox"
MIN_EFFICACY_BOUNDARY=90
MIN_COVERAGE_BOUNDARY=85
workers=${MUTATION_WORKERS:-2}
full=0 all=0 critical_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --full) full=1 ;;
    --critical) critical_only=1 ;;
    --all) full=1 all=1 ;;
    *) break ;;
  esac
  shift
done
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(spec record cost guard judge loop tells netpolicy netproxy sandbox)
base_file=scripts/mutation-base

# Code where no mutant may live: FILE:FUNCTION (FUNCTION * for the whole
# file), each a budget, a cap, a permission, a protection, the judge or an
# exit code.
critical=(
  "spec/judge.go:*"
  "spec/agent_for.go:AgentFor"
  "spec/agent_for.go:merge"
  "guard/protect.go:*"
  "guard/protect_rules.go:*"
  "guard/protect_ecosystems.go:*"
  "guard/protect_config.go:*"
  "guard/snapshot.go:*"
  "guard/guard.go:Snapshot"
  "guard/guard.go:Check"
  "guard/guard.go:RestoreSaved"
  "judge/gates.go:CannotRun"
  "judge/gates.go:SaveTestBase"
  "judge/gates.go:Ratchet"
  "judge/cleanroom.go:JudgeCleanRoom"
  "judge/cleanroom.go:holdoutCounts"
  "judge/cleanroom.go:holdoutSignal"
  "judge/holdout.go:*"
  # The clean room's and the holdout's own accounting of the Go tests that
  # ran: the engine's test main, the wrapper, the claims and the reports.
  "judge/goaccount.go:*"
  "judge/goframing.go:forgedGo"
  "judge/goframing.go:goTestNames"
  "loop/run_agent.go:runAgent"
  "loop/run_agent.go:keepLoopFileEdit"
  "loop/engine.go:checkBudgets"
  "loop/engine.go:outcome"
  "loop/engine.go:finish"
  "loop/judged.go:*"
  "loop/trust.go:keepEdit"
  "cost/loop.go:EstimateLoop"
  # tells: what reads the run's context, patches a test framework or exits
  # early in the agent's code, and the aliases it resolves (part
  # tells/context).
  "tells/tells.go:LibraryOnly"
  "tells/gocontext.go:*"
  "tells/pycontext.go:*"
  "tells/jscontext.go:*"
  "tells/aliases.go:*"
  # netproxy and sandbox: in CI since their first full measurement
  # recorded a base (scripts/mutation-base); CI mutates what changed since.
  "netproxy/allow.go:*"
  "netproxy/proxy.go:refusal"
  "netproxy/proxy.go:dial"
  "netpolicy/netpolicy.go:backends"
  "netpolicy/netpolicy.go:Allow"
  "netpolicy/netpolicy.go:Masks"
  "sandbox/manifest.go:DropServiceEnv"
  "sandbox/manifest.go:IsServiceEnv"
  "sandbox/manifest.go:BuildManifest"
  "sandbox/manifest.go:expandHome"
  "sandbox/manifest.go:covers"
  "sandbox/manifest.go:tidy"
  "sandbox/manifest.go:Paths"
  "sandbox/manifest.go:toolchainRoot"
  "sandbox/manifest.go:installRoot"
  "sandbox/manifest.go:linkTargets"
  "sandbox/view_bwrap.go:*"
  "sandbox/landlock.go:grant"
  "sandbox/network.go:maskArgs"
  "sandbox/special.go:*"
  "sandbox/landlock_rules_linux.go:unixFilter"
  "sandbox/unixfilter_linux.go:filterArches"
  "sandbox/unixfilter_linux.go:unixSocketProgram"
  "sandbox/unixfilter_linux.go:label"
  "sandbox/unixfilter_linux.go:jumpIf"
  "sandbox/unixfilter_linux.go:jumpTo"
  "sandbox/unixfilter_linux.go:resolve"
)
# The packages mutated in their critical code only, in parts, each against
# the tests that exercise it (a `go test -run` pattern; empty: all of the
# package's tests): PACKAGE/NAME, PATTERN, then entries of the list above.
# tells/context: all of tells' tests (seconds). judge/accounting: the
# clean room's accounting, against its own tests (judge's whole suite
# takes a minute a mutant).
# guard and judge: their tests are seconds, but only the critical code is
# held to the thresholds (the watch and the list of changes, the checks'
# runner and the audit are pinned by loop's engine tests, which gremlins
# cannot run against another package's mutants). loop: its tests take
# minutes. `--all PACKAGE` mutates all of it against all its tests.
parts=(
  "guard/protection||guard/protect.go:* guard/protect_rules.go:* guard/protect_ecosystems.go:* guard/protect_config.go:* guard/snapshot.go:* guard/guard.go:Snapshot guard/guard.go:Check guard/guard.go:RestoreSaved"
  "judge/verdict||judge/gates.go:CannotRun judge/gates.go:SaveTestBase judge/gates.go:Ratchet judge/cleanroom.go:JudgeCleanRoom judge/cleanroom.go:holdoutCounts judge/cleanroom.go:holdoutSignal judge/holdout.go:*"
  "judge/accounting|^Test(CleanRoomGoAccounting|GoAccountSource|CleanRoomRefusesForgedGo|PinGoAccount)|judge/goaccount.go:* judge/goframing.go:forgedGo judge/goframing.go:goTestNames"
  "loop/budgets|^Test(Pin|Engine|APIErrors|RateLimits|EndlessRateLimits|Failover)|loop/run_agent.go:runAgent loop/run_agent.go:keepLoopFileEdit loop/engine.go:checkBudgets loop/engine.go:outcome loop/engine.go:finish"
  "loop/judged|^Test(Judged|EngineProtected|EngineLoopFileEdits|Crash|Watch|Hardlink|Renamed|Gitignored|LoadTrusted|TargetProblems|ReadOnly)|loop/judged.go:* loop/trust.go:keepEdit"
  "sandbox/view|^Test(BuildManifest|ToolchainRoot|DropServiceEnv|BwrapArgsBuildTheView|InstallRoot|PinView)|sandbox/manifest.go:DropServiceEnv sandbox/manifest.go:IsServiceEnv sandbox/manifest.go:BuildManifest sandbox/manifest.go:expandHome sandbox/manifest.go:covers sandbox/manifest.go:tidy sandbox/manifest.go:Paths sandbox/manifest.go:toolchainRoot sandbox/manifest.go:installRoot sandbox/manifest.go:linkTargets sandbox/view_bwrap.go:*"
  "sandbox/rules|^Test(GrantSplit|PinRules|StripInPlace|PinSpecial|UnixSocketProgram|UnixFilterNeeded|UnixFilterRefusesUnixSockets)|sandbox/landlock.go:grant sandbox/network.go:maskArgs sandbox/special.go:* sandbox/landlock_rules_linux.go:unixFilter sandbox/unixfilter_linux.go:filterArches sandbox/unixfilter_linux.go:unixSocketProgram sandbox/unixfilter_linux.go:label sandbox/unixfilter_linux.go:jumpIf sandbox/unixfilter_linux.go:jumpTo sandbox/unixfilter_linux.go:resolve"
  "tells/context||tells/tells.go:LibraryOnly tells/gocontext.go:* tells/pycontext.go:* tells/jscontext.go:* tells/aliases.go:*"
)
# The equivalent mutants left alive, one a line in docs/design.md:
#   - `FILE` `FUNCTION` MUTATOR on `SOURCE LINE`: why
allowed=docs/design.md

# strip_funcs "FN ...": Go source on stdin without these top-level
# functions (a function runs from its `func` line to the next `}` at the
# line's start, as gofmt writes it).
strip_funcs() {
  awk -v fns="$1 " '
    /^func / { s = $0; sub(/^func (\([^)]*\) )?/, "", s); sub(/[^A-Za-z0-9_].*/, "", s)
               if (s != "" && index(" " fns, " " s " ")) skip = 1 }
    !skip { print }
    skip && /^}/ { skip = 0 }'
}

# func_text FN: the text of top-level function FN of the Go source on
# stdin.
func_text() {
  awk -v fn="$1" '
    /^func / { s = $0; sub(/^func (\([^)]*\) )?/, "", s); sub(/[^A-Za-z0-9_].*/, "", s)
               if (s == fn) on = 1 }
    on { print }
    on && /^}/ { on = 0 }'
}

# copy_repo: make the copy a git repository of its own files (diff.relative
# and diff.context 0: see scope_to), everything staged.
copy_repo() {
  rm -rf "$work/.git"
  git -C "$work" init -q
  git -C "$work" config user.name mutation && git -C "$work" config user.email mutation@localhost
  git -C "$work" config diff.relative true && git -C "$work" config diff.context 0
  git -C "$work" add -A
}

# without_entries CRITICAL...: in the copy's index, every file of these
# entries without their code (a function's lines left out, a whole file
# empty), starting from what the index holds.
without_entries() {
  local c file blob
  local -A per_file=()
  for c in "$@"; do
    file=${c%%:*}
    per_file[$file]+=" ${c#*:}"
  done
  for file in "${!per_file[@]}"; do
    if [[ " ${per_file[$file]} " == *" * "* ]]; then
      blob=$(git -C "$work" hash-object -w /dev/null)
    else
      blob=$( (git -C "$work" cat-file blob ":$file" 2>/dev/null || true) | strip_funcs "${per_file[$file]}" |
        git -C "$work" hash-object -w --stdin)
    fi
    git -C "$work" update-index --add --cacheinfo "100644,$blob,$file"
  done
}

# scope_to CRITICAL...: make the copy a git repository whose HEAD is the
# project without this code, so that `gremlins unleash --diff HEAD`, run
# from inside the package, marks every other mutant as SKIPPED and runs
# only these. gremlins matches the diff's paths against paths relative to
# the package folder, hence diff.relative; diff.context 0 makes each hunk
# exactly the lines added back.
scope_to() {
  copy_repo
  without_entries "$@"
  git -C "$work" commit -qm "without the code to mutate"
  git -C "$work" add -A
}

# scope_diff PKG BASE [CRITICAL...]: the same with HEAD holding PKG's Go
# files (not its tests) as they were at BASE, and without the CRITICAL
# entries: the diff adds back what changed since BASE, and these entries
# whole.
scope_diff() {
  local pkg=$1 base=$2 f blob
  shift 2
  copy_repo
  git -C "$work" ls-files -- "$pkg/*.go" ":(exclude)$pkg/*_test.go" | while read -r f; do
    if git -C "$root" cat-file -e "$base:$f" 2>/dev/null; then
      blob=$(git -C "$root" cat-file blob "$base:$f" | git -C "$work" hash-object -w --stdin)
      git -C "$work" update-index --cacheinfo "100644,$blob,$f"
    else
      git -C "$work" rm -q --cached -- "$f" # new since BASE: all of it is added
    fi
  done
  [ $# -eq 0 ] || without_entries "$@"
  git -C "$work" commit -qm "$pkg as at $base"
  git -C "$work" add -A
}

# added_lines PKG: how many lines of PKG's Go code (not its tests) the
# copy's diff adds, which gremlins mutates. gremlins reads an empty diff as
# "everything changed": nothing added must not reach it.
added_lines() {
  (cd "$work/$1" && git diff --merge-base HEAD --numstat -- '*.go' ':!*_test.go') |
    awk '{ n += $1 } END { print n + 0 }'
}

# base_of PKG: sets base to the commit of PKG's last full measurement,
# when this clone has it (a shallow clone fetches that commit alone);
# otherwise base is empty and why says why.
base_of() {
  local c
  base="" why=""
  c=$(awk -v p="$1" '!/^#/ && $1 == p { print $2 }' "$base_file" 2>/dev/null || true)
  if [ -z "$c" ]; then
    why="no full measurement of $1 is recorded in $base_file"
    return 0
  fi
  if ! git cat-file -e "$c^{commit}" 2>/dev/null; then
    if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
      timeout 120 git fetch -q --no-tags --depth=1 origin "$c" >/dev/null 2>&1 || true
    fi
    if ! git cat-file -e "$c^{commit}" 2>/dev/null; then
      why="its base ${c:0:12} is not in this clone (shallow, or history rewritten)"
      return 0
    fi
  fi
  base=$c
}

# tests_lost PKG BASE: the test files of PKG that lost lines since BASE.
tests_lost() {
  git diff --numstat "$2" -- "$1/*_test.go" | awk '$2 > 0 { printf " %s", $3 }'
}

# changed_entries BASE CRITICAL...: the entries whose code differs from
# BASE's, or that were not in BASE's critical list.
changed_entries() {
  local base=$1 c file fn old_list
  shift
  old_list=$(git show "$base:scripts/mutation.sh" 2>/dev/null || true)
  for c in "$@"; do
    file=${c%%:*} fn=${c#*:}
    if ! grep -qF "\"$c\"" <<<"$old_list"; then
      echo "$c"
    elif [ "$fn" = "*" ]; then
      git diff --quiet "$base" -- "$file" 2>/dev/null || echo "$c"
    elif [ "$(git show "$base:$file" 2>/dev/null | func_text "$fn")" != "$(func_text "$fn" <"$file")" ]; then
      echo "$c"
    fi
  done
}

# func_at FILE LINE: the top-level function a line of a Go file is in.
func_at() {
  awk -v want="$2" '
    /^func / { s = $0; sub(/^func (\([^)]*\) )?/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); fn = s }
    /^(type|var|const|import) / { fn = "" }
    NR == want { print (fn == "" ? "-" : fn); exit }' "$1"
}

# thresholds PKG: sets min_eff and min_cov, PKG's thresholds.
thresholds() {
  min_eff=$MIN_EFFICACY min_cov=$MIN_COVERAGE
  if [[ " $BOUNDARY_PACKAGES " == *" $1 "* ]]; then
    min_eff=$MIN_EFFICACY_BOUNDARY min_cov=$MIN_COVERAGE_BOUNDARY
  fi
}

fail=0
rows=()
declare -A pkg_fail=()
# pct N: N%, or - when there is no percentage.
pct() { if [ "$1" = - ]; then echo -; else echo "$1%"; fi; }
# mutate PKG NAME SCOPE PATTERN BASE [CRITICAL...]: one gremlins run over
# PKG, with only the tests PATTERN matches when it is not empty; one table
# row named NAME. Without BASE: all of PKG, or only the CRITICAL entries
# when some are given. With BASE (diff mode): what changed in PKG since
# BASE, and the CRITICAL entries whole.
mutate() {
  local pkg=$1 name=$2 scope=$3 pattern=$4 base=$5
  shift 5
  local log=$logs/${name//\//-}.log start secs killed lived notcov timedout eff cov min_eff min_cov
  thresholds "$pkg"
  # A mutant that makes the tests hang costs the timeout: the coefficient
  # times the tests' time under coverage. 10 leaves room for a loaded
  # machine; loop's tests take minutes, so 4 there.
  local args=(--workers "$workers" --timeout-coefficient 10) goflags=${GOFLAGS:-}
  if [ "$pkg" = loop ]; then
    # -short leaves out its 60,000-file scale test and its 20,000-file
    # event-queue flood.
    args=(--workers "$workers" --timeout-coefficient 4)
    goflags="$goflags -short"
  fi
  [ -z "$pattern" ] || goflags="$goflags -run=$pattern"
  rm -rf "$work/.git"
  if [ -n "$base" ]; then
    scope_diff "$pkg" "$base" "$@"
    args+=(--diff HEAD)
  elif [ $# -gt 0 ]; then
    scope_to "$@"
    args+=(--diff HEAD)
  fi
  start=$(date +%s)
  if [ -n "$base" ] && [ "$(added_lines "$pkg")" = 0 ]; then
    # Nothing of its code changed: no mutant to run (and an empty diff
    # would make gremlins mutate everything).
    echo "$name: no code changed since ${base:0:12}; no mutant to run" >"$log"
  else
    (cd "$work/$pkg" && GOFLAGS=$goflags "$bin" unleash "${args[@]}" "$work/$pkg") >"$log" 2>&1 || {
      echo "gremlins failed on $name (see $log):"; tail -20 "$log"; exit 1
    }
    # A signal makes gremlins stop after the mutants under way, print no
    # report and exit 0: it measured part of the code, and a full run would
    # record a base it did not earn.
    if grep -q "Shutting down gracefully" "$log"; then
      echo "gremlins was stopped before its last mutant on $name (see $log)"; exit 1
    fi
  fi
  secs=$(($(date +%s) - start))
  read -r killed lived notcov timedout < <(awk '
    / KILLED /      { k++ } / LIVED /      { l++ }
    / NOT COVERED / { n++ } / TIMED OUT /  { t++ }
    END { print k+0, l+0, n+0, t+0 }' "$log")
  # As gremlins counts them: efficacy is killed of killed + lived; mutator
  # coverage is killed + lived of killed + lived + not covered. With no
  # mutant to count a percentage is "-": a full run with none is broken and
  # fails; a diff with none has nothing to judge and passes.
  eff=$(awk -v k="$killed" -v l="$lived" 'BEGIN { if (k + l) printf "%.1f", 100 * k / (k + l); else print "-" }')
  cov=$(awk -v k="$killed" -v l="$lived" -v n="$notcov" 'BEGIN { if (k + l + n) printf "%.1f", 100 * (k + l) / (k + l + n); else print "-" }')
  rows+=("$(printf '%-16s %-9s %7d %6d %12d %10d %10s %10s %6ss' "$name" "$scope" "$killed" "$lived" "$notcov" "$timedout" "$(pct "$eff")" "$(pct "$cov")" "$secs")")
  local failed=0
  # A diff (a package's changed lines, or the changed entries of a loop
  # part) is judged as one; a full run or a whole part as the other.
  if [ -z "$base" ] && [ "$scope" != changed ]; then
    if [ "$eff" = - ] || awk -v e="$eff" -v m="$min_eff" 'BEGIN { exit !(e < m) }'; then
      echo "FAIL $name: test efficacy $eff% is under $min_eff%"; failed=1
    fi
    if [ "$cov" = - ] || awk -v c="$cov" -v m="$min_cov" 'BEGIN { exit !(c < m) }'; then
      echo "FAIL $name: mutator coverage $cov% is under $min_cov%"; failed=1
    fi
  else
    # A diff holds few mutants: a percentage is met, or missed by one
    # mutant alone (under 7 mutants a single one that lives puts efficacy
    # under 85%; in a full run it is one among hundreds). Critical code
    # keeps its own rule below: no mutant lives there at all.
    if [ "$eff" != - ] && [ "$lived" -gt 1 ] && awk -v e="$eff" -v m="$min_eff" 'BEGIN { exit !(e < m) }'; then
      echo "FAIL $name: test efficacy $eff% of the changed code is under $min_eff% ($lived mutants lived)"; failed=1
    fi
    if [ "$cov" != - ] && [ "$notcov" -gt 1 ] && awk -v c="$cov" -v m="$min_cov" 'BEGIN { exit !(c < m) }'; then
      echo "FAIL $name: mutator coverage $cov% of the changed code is under $min_cov% ($notcov mutants not covered)"; failed=1
    fi
  fi
  # Every mutant that lived, with the function it is in, read from the
  # copy that was mutated (the project's files may have changed since).
  local mutator file line src fn code c cf
  while read -r mutator file line; do
    src=$pkg/$file
    fn=$(func_at "$work/$src" "$line")
    code=$(sed -n "${line}p" "$work/$src" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
    for c in "${critical[@]}"; do
      [ "${c%%:*}" = "$src" ] || continue
      cf=${c#*:}
      [ "$cf" = "*" ] || [ "$cf" = "$fn" ] || continue
      if ! grep -qF -- "- \`$src\` \`$fn\` $mutator on \`$code\`" "$allowed"; then
        echo "FAIL $src:$line ($fn): a $mutator mutant lived in code that must be pinned: $code"
        failed=1
      fi
      break
    done
  done < <(awk '/ LIVED / { split($4, p, ":"); print $2, p[1], p[2] }' "$log")
  if [ $failed = 1 ]; then
    fail=1 pkg_fail[$pkg]=1
  fi
}

# has_parts PKG: whether PKG is mutated in parts (its critical code only).
has_parts() {
  local part
  for part in "${parts[@]}"; do
    [[ ${part%%|*} == "$1"/* ]] && return 0
  done
  return 1
}

# Every entry must name code that exists: an entry left behind by a move or
# a rename would otherwise mutate nothing, and its part pass on no mutant.
missing=()
for c in "${critical[@]}"; do
  file=${c%%:*} fn=${c#*:}
  if [ ! -f "$file" ]; then
    missing+=("$c: no file $file")
  elif [ "$fn" != "*" ] && [ -z "$(func_text "$fn" <"$file")" ]; then
    missing+=("$c: no top-level function $fn in $file")
  fi
done
for part in "${parts[@]}"; do
  read -r -a entries <<<"${part##*|}"
  for c in "${entries[@]}"; do
    [[ " ${critical[*]} " == *" $c "* ]] || missing+=("${part%%|*}: $c is not in the critical list")
  done
done
for pkg in "${packages[@]}"; do
  p=${pkg%%/*}
  if [ ! -d "$p" ]; then
    missing+=("$pkg: no package folder $p")
  elif [ "$pkg" != "$p" ] && ! [[ " ${parts[*]%%|*} " == *" $pkg "* ]]; then
    missing+=("$pkg: no such part (parts: ${parts[*]%%|*})")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "scripts/mutation.sh: its critical list names code that does not exist (moved or renamed? update the list):" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 2
fi

bin=$root/.cache/bin/gremlins
if ! go version -m "$bin" 2>/dev/null | grep -q "mod[[:space:]]*$GREMLINS[[:space:]]*$GREMLINS_VERSION"; then
  echo "installing gremlins $GREMLINS_VERSION into .cache/bin"
  GOBIN=$root/.cache/bin go install "$GREMLINS/cmd/gremlins@$GREMLINS_VERSION"
fi

# gremlins copies the whole module folder once per worker: mutate a copy of
# the project's own files (tracked and new, not ignored), not .cache or .git.
work=$(mktemp -d "${TMPDIR:-/tmp}/looprinter-mutation-XXXXXX")
trap 'rm -rf "$work"' EXIT
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -f "$f" ] && printf '%s\0' "$f"
done | xargs -0 cp --parents -t "$work"

logs=$root/.cache/mutation
mkdir -p "$logs"

started=$(date +%s)
for pkg in "${packages[@]}"; do
  base="" why=""
  if [ $full = 0 ]; then
    base_of "${pkg%%/*}"
    if [ -n "$base" ]; then
      lost=$(tests_lost "${pkg%%/*}" "$base")
      if [ -n "$lost" ]; then
        echo "$pkg: its tests lost lines since ${base:0:12} ($lost ); its full measurement runs"
        base=""
      else
        echo "$pkg: what changed since ${base:0:12}, its last full measurement ($base_file)"
      fi
    else
      echo "$pkg: $why; its full measurement runs instead"
    fi
  fi
  p=${pkg%%/*}
  if has_parts "$p" && [ $all = 0 ]; then
    for part in "${parts[@]}"; do
      name=${part%%|*}
      [[ $name == "$p"/* ]] || continue
      [[ $pkg == "$p" || $pkg == "$name" ]] || continue
      pattern=${part#*|}
      pattern=${pattern%|*} # the pattern holds | too
      read -r -a entries <<<"${part##*|}"
      if [ -z "$base" ]; then
        mutate "$p" "$name" critical "$pattern" "" "${entries[@]}"
        continue
      fi
      mapfile -t changed < <(changed_entries "$base" "${entries[@]}")
      if [ ${#changed[@]} = 0 ]; then
        echo "$name: none of its critical code changed since ${base:0:12}"
        rows+=("$(printf '%-16s %-9s %7d %6d %12d %10d %10s %10s %6ss' "$name" changed 0 0 0 0 - - 0)")
        continue
      fi
      echo "$name: changed since ${base:0:12}: ${changed[*]}"
      mutate "$p" "$name" changed "$pattern" "" "${changed[@]}"
    done
  elif [ $critical_only = 1 ]; then
    # --critical: only the package's critical entries that changed since
    # its base (all of them without one), each mutated whole.
    entries=()
    for c in "${critical[@]}"; do
      [[ $c == "$pkg"/* ]] && entries+=("$c")
    done
    changed=("${entries[@]}")
    [ -z "$base" ] || [ ${#entries[@]} = 0 ] || mapfile -t changed < <(changed_entries "$base" "${entries[@]}")
    if [ ${#changed[@]} = 0 ]; then
      echo "$pkg: none of its critical code changed since ${base:0:12} (--critical: the rest is measured by hand)"
      rows+=("$(printf '%-16s %-9s %7d %6d %12d %10d %10s %10s %6ss' "$pkg" changed 0 0 0 0 - - 0)")
      continue
    fi
    echo "$pkg: critical code, mutated whole: ${changed[*]} (--critical: the rest is measured by hand)"
    mutate "$pkg" "$pkg" changed "" "" "${changed[@]}"
  elif [ -n "$base" ]; then
    entries=()
    for c in "${critical[@]}"; do
      [[ $c == "$pkg"/* ]] && entries+=("$c")
    done
    changed=()
    [ ${#entries[@]} = 0 ] || mapfile -t changed < <(changed_entries "$base" "${entries[@]}")
    [ ${#changed[@]} = 0 ] || echo "$pkg: critical code changed since ${base:0:12}, mutated whole: ${changed[*]}"
    mutate "$pkg" "$pkg" diff "" "$base" "${changed[@]}"
  else
    mutate "$pkg" "$pkg" full "" ""
  fi
done

# A full measurement that passed is the base of the next diffs, when what
# it measured is a commit (the package's files all committed).
if [ $full = 1 ]; then
  head=$(git rev-parse HEAD)
  for pkg in "${packages[@]}"; do
    p=${pkg%%/*}
    if [ "$pkg" != "$p" ]; then
      echo "$base_file: $pkg is a part of $p; only a run of all of $p is recorded"
    elif [ -n "${pkg_fail[$p]:-}" ]; then
      echo "$base_file: $p failed; its base stays"
    elif [ -n "$(git status --porcelain -- "$p")" ]; then
      echo "$base_file: $p has uncommitted changes; its base stays (commit, then run --full again)"
    else
      {
        grep -v "^$p " "$base_file" 2>/dev/null || true
        echo "$p $head"
      } >"$base_file.new"
      mv "$base_file.new" "$base_file"
      echo "$base_file: $p measured in full at ${head:0:12} ($(date -u +%Y-%m-%d)); commit $base_file"
    fi
  done
fi

echo
printf '%-16s %-9s %7s %6s %12s %10s %10s %10s %7s\n' package scope killed lived "not covered" "timed out" efficacy coverage time
printf '%s\n' "${rows[@]}"
echo "(thresholds: efficacy >= $MIN_EFFICACY%, mutator coverage >= $MIN_COVERAGE%; $BOUNDARY_PACKAGES: $MIN_EFFICACY_BOUNDARY%, $MIN_COVERAGE_BOUNDARY%; in a diff, or missed by one mutant alone; logs in .cache/mutation/; $(($(date +%s) - started)) s in all)"
exit $fail
