#!/usr/bin/env bash
# Mutation testing of the packages that judge agents: spec, record, cost and
# loop. Each package is mutated by gremlins (pinned below) and only its own
# tests run against each mutant. Prints one table row a package and fails
# when a package falls under the thresholds, or when a mutant lives in code
# that decides a budget, a cap, a permission, a protection, the judge or an
# exit code and is not listed as equivalent in docs/design.md ("Mutation
# testing").
#
#   scripts/mutation.sh              spec, record and cost in full; loop
#                                    only in its critical code (two parts)
#   scripts/mutation.sh spec cost    only these
#   scripts/mutation.sh loop/budgets one part of loop's critical code
#   scripts/mutation.sh --full loop  every mutant of loop (about an hour)
#
# loop's tests run an engine per test and take minutes, once per mutant:
# mutating all of loop does not fit CI, so CI mutates only the functions
# and files of loop in the critical list below (gremlins v0.5.0 has no
# file filter: the rest of loop is marked unchanged through its --diff, see
# scope_to_critical). loop's tests run with -short there (the 60,000-file
# scale test and the 20,000-file event-queue flood are left out).
#
# MUTATION_WORKERS (default 2) sets gremlins' workers. The logs are in
# .cache/mutation/PACKAGE.log.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

GREMLINS=github.com/go-gremlins/gremlins
GREMLINS_VERSION=v0.5.0
MIN_EFFICACY=85
MIN_COVERAGE=70
workers=${MUTATION_WORKERS:-2}
full=0
if [ "${1:-}" = --full ]; then
  full=1
  shift
fi
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(spec record cost loop)

# Code where no mutant may live: FILE:FUNCTION (FUNCTION * for the whole
# file), each a budget, a cap, a permission, a protection, the judge or an
# exit code.
critical=(
  "spec/judge.go:*"
  "spec/defaults.go:AgentFor"
  "spec/defaults.go:merge"
  "loop/run_agent.go:runAgent"
  "loop/run_agent.go:keepLoopFileEdit"
  "loop/engine.go:checkBudgets"
  "loop/engine.go:outcome"
  "loop/engine.go:finish"
  "loop/protect.go:*"
  "loop/protect_rules.go:*"
  "loop/guard.go:*"
  "loop/judged.go:*"
  "loop/trust.go:keepEdit"
  "cost/loop.go:EstimateLoop"
)
# What CI mutates of loop: its critical code only, in two parts, each
# against the tests that exercise it (a `go test -run` pattern): NAME,
# PATTERN, then the entries of the list above. `--full` mutates all of loop
# against all its tests.
loop_parts=(
  "budgets|^Test(Pin|Engine|APIErrors|RateLimits|EndlessRateLimits|Failover)|loop/run_agent.go:runAgent loop/run_agent.go:keepLoopFileEdit loop/engine.go:checkBudgets loop/engine.go:outcome loop/engine.go:finish"
  "protection|^Test(Protect|Guard|Watch|Hardlink|Renamed|Gitignored|TreeWatch|KeepTestConfig|LoadTrusted|TargetProblems|ReadOnly|EngineProtected|EngineLoopFileEdits|Judged|Crash)|loop/protect.go:* loop/protect_rules.go:* loop/guard.go:* loop/judged.go:* loop/trust.go:keepEdit"
)
# The equivalent mutants left alive, one a line in docs/design.md:
#   - `FILE` `FUNCTION` MUTATOR on `SOURCE LINE`: why
allowed=docs/design.md

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

# scope_to CRITICAL...: make the copy a git repository whose HEAD is the
# project without this code (a function's lines left out, a whole file
# empty), so that `gremlins unleash --diff HEAD`, run from inside the
# package, marks every other mutant as SKIPPED and runs only these. gremlins
# matches the diff's paths against paths relative to the package folder,
# hence diff.relative; diff.context 0 makes each hunk exactly the lines
# added back.
scope_to() {
  local c file fns blob
  local -A per_file=()
  for c in "$@"; do
    file=${c%%:*}
    per_file[$file]+=" ${c#*:}"
  done
  (
    cd "$work"
    rm -rf .git
    git init -q
    git config user.name mutation && git config user.email mutation@localhost
    git config diff.relative true && git config diff.context 0
    git add -A
    for file in "${!per_file[@]}"; do
      fns=${per_file[$file]}
      if [[ " $fns " == *" * "* ]]; then
        blob=$(git hash-object -w /dev/null)
      else
        blob=$(awk -v fns="$fns " '
          /^func / { s = $0; sub(/^func (\([^)]*\) )?/, "", s); sub(/[^A-Za-z0-9_].*/, "", s)
                     if (s != "" && index(" " fns, " " s " ")) skip = 1 }
          !skip { print }
          skip && /^}/ { skip = 0 }' "$file" | git hash-object -w --stdin)
      fi
      git update-index --cacheinfo "100644,$blob,$file"
    done
    git commit -qm "without the code to mutate"
    git add -A
  )
}

# func_at FILE LINE: the top-level function a line of a Go file is in.
func_at() {
  awk -v want="$2" '
    /^func / { s = $0; sub(/^func (\([^)]*\) )?/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); fn = s }
    /^(type|var|const|import) / { fn = "" }
    NR == want { print (fn == "" ? "-" : fn); exit }' "$1"
}

fail=0
rows=()
# mutate PKG NAME SCOPE PATTERN [CRITICAL...]: one gremlins run over PKG,
# only over the CRITICAL entries when some are given, with only the tests
# PATTERN matches when it is not empty; one table row named NAME.
mutate() {
  local pkg=$1 name=$2 scope=$3 pattern=$4
  shift 4
  local log=$logs/${name//\//-}.log start secs killed lived notcov timedout eff cov
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
  if [ $# -gt 0 ]; then
    scope_to "$@"
    args+=(--diff HEAD)
  fi
  start=$(date +%s)
  (cd "$work/$pkg" && GOFLAGS=$goflags "$bin" unleash "${args[@]}" "$work/$pkg") >"$log" 2>&1 || {
    echo "gremlins failed on $name (see $log):"; tail -20 "$log"; exit 1
  }
  secs=$(($(date +%s) - start))
  read -r killed lived notcov timedout < <(awk '
    / KILLED /      { k++ } / LIVED /      { l++ }
    / NOT COVERED / { n++ } / TIMED OUT /  { t++ }
    END { print k+0, l+0, n+0, t+0 }' "$log")
  # As gremlins counts them: efficacy is killed of killed + lived; mutator
  # coverage is killed + lived of killed + lived + not covered.
  eff=$(awk -v k="$killed" -v l="$lived" 'BEGIN { printf "%.1f", (k + l) ? 100 * k / (k + l) : 0 }')
  cov=$(awk -v k="$killed" -v l="$lived" -v n="$notcov" 'BEGIN { printf "%.1f", (k + l + n) ? 100 * (k + l) / (k + l + n) : 0 }')
  rows+=("$(printf '%-16s %-8s %7d %6d %12d %10d %9s%% %9s%% %6ss' "$name" "$scope" "$killed" "$lived" "$notcov" "$timedout" "$eff" "$cov" "$secs")")
  if awk -v e="$eff" -v m="$MIN_EFFICACY" 'BEGIN { exit !(e < m) }'; then
    echo "FAIL $name: test efficacy $eff% is under $MIN_EFFICACY%"; fail=1
  fi
  if awk -v c="$cov" -v m="$MIN_COVERAGE" 'BEGIN { exit !(c < m) }'; then
    echo "FAIL $name: mutator coverage $cov% is under $MIN_COVERAGE%"; fail=1
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
        fail=1
      fi
      break
    done
  done < <(awk '/ LIVED / { split($4, p, ":"); print $2, p[1], p[2] }' "$log")
}

for pkg in "${packages[@]}"; do
  if [[ $pkg == loop || $pkg == loop/* ]] && [ $full = 0 ]; then
    for part in "${loop_parts[@]}"; do
      name=${part%%|*}
      [[ $pkg == loop || $pkg == "loop/$name" ]] || continue
      pattern=${part#*|}
      pattern=${pattern%|*} # the pattern holds | too
      read -r -a entries <<<"${part##*|}"
      mutate loop "loop/$name" critical "$pattern" "${entries[@]}"
    done
  else
    mutate "$pkg" "$pkg" full ""
  fi
done

echo
printf '%-16s %-8s %7s %6s %12s %10s %10s %10s %7s\n' package scope killed lived "not covered" "timed out" efficacy coverage time
printf '%s\n' "${rows[@]}"
echo "(thresholds: efficacy >= $MIN_EFFICACY%, mutator coverage >= $MIN_COVERAGE%; logs in .cache/mutation/)"
exit $fail
