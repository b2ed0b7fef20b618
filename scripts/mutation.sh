#!/usr/bin/env bash
# Mutation testing of the packages that judge agents: spec, record, cost and
# loop. Each package is mutated by gremlins (pinned below) and only its own
# tests run against each mutant. Prints one table row a package and fails
# when a package falls under the thresholds, or when a mutant lives in code
# that decides a budget, a cap, a permission, a protection, the judge or an
# exit code and is not listed as equivalent in docs/design.md ("Mutation
# testing").
#
#   scripts/mutation.sh              all four packages
#   scripts/mutation.sh spec cost    only these
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

# func_at FILE LINE: the top-level function a line of a Go file is in.
func_at() {
  awk -v want="$2" '
    /^func / { s = $0; sub(/^func (\([^)]*\) )?/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); fn = s }
    /^(type|var|const|import) / { fn = "" }
    NR == want { print (fn == "" ? "-" : fn); exit }' "$1"
}

fail=0
rows=()
for pkg in "${packages[@]}"; do
  log=$logs/$pkg.log
  start=$(date +%s)
  (cd "$work" && "$bin" unleash --workers "$workers" --timeout-coefficient 30 "./$pkg") >"$log" 2>&1 || {
    echo "gremlins failed on $pkg (see $log):"; tail -20 "$log"; exit 1
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
  rows+=("$(printf '%-7s %7d %6d %12d %10d %9s%% %9s%% %6ss' "$pkg" "$killed" "$lived" "$notcov" "$timedout" "$eff" "$cov" "$secs")")
  if awk -v e="$eff" -v m="$MIN_EFFICACY" 'BEGIN { exit !(e < m) }'; then
    echo "FAIL $pkg: test efficacy $eff% is under $MIN_EFFICACY%"; fail=1
  fi
  if awk -v c="$cov" -v m="$MIN_COVERAGE" 'BEGIN { exit !(c < m) }'; then
    echo "FAIL $pkg: mutator coverage $cov% is under $MIN_COVERAGE%"; fail=1
  fi
  # Every mutant that lived, with the function it is in.
  while read -r mutator file line; do
    src=$pkg/$file
    fn=$(func_at "$src" "$line")
    code=$(sed -n "${line}p" "$src" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
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
done

echo
printf '%-7s %7s %6s %12s %10s %10s %10s %7s\n' package killed lived "not covered" "timed out" efficacy coverage time
printf '%s\n' "${rows[@]}"
echo "(thresholds: efficacy >= $MIN_EFFICACY%, mutator coverage >= $MIN_COVERAGE%; logs in .cache/mutation/)"
exit $fail
