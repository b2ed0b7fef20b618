#!/usr/bin/env bash
# Installs the pinned JavaScript test runners that the script tests of real
# projects run (testdata/script, condition [jsrunners]):
#   jest 30.5.2 with ts-jest 29.4.15, typescript 5.9.3 and @types/jest 30.0.0,
#   vitest 4.1.12, mocha 12.0.3
# from the npm registry into a cache folder, and prints that folder (pass it
# to the tests as LOOPRINTER_JS_RUNNERS). A script test gives its project
# the runners with `jsrunners` (a copy of the folder's node_modules).
#
#   LOOPRINTER_JS_RUNNERS_DIR   install folder (default: $LOOPRINTER_JS_RUNNERS, else
#                               <repo>/.cache/js-runners)
#
# Idempotent: when the pinned versions are already there it installs nothing
# (a lock keeps two runs at once from installing twice). Only the last line
# of standard output is the folder; progress goes to standard error.
set -euo pipefail

JEST_VERSION=30.5.2
TS_JEST_VERSION=29.4.15
TYPESCRIPT_VERSION=5.9.3
TYPES_JEST_VERSION=30.0.0
VITEST_VERSION=4.1.12
MOCHA_VERSION=12.0.3

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${LOOPRINTER_JS_RUNNERS_DIR:-${LOOPRINTER_JS_RUNNERS:-$repo/.cache/js-runners}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

log() { echo "install-js-runners: $*" >&2; }

pins=(
	"jest@$JEST_VERSION"
	"ts-jest@$TS_JEST_VERSION"
	"typescript@$TYPESCRIPT_VERSION"
	"@types/jest@$TYPES_JEST_VERSION"
	"vitest@$VITEST_VERSION"
	"mocha@$MOCHA_VERSION"
)

installed_version() { # package name -> version or empty
	local pj="$dir/node_modules/$1/package.json"
	[ -f "$pj" ] || return 0
	node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}

missing() { # prints the pins not installed
	local p name
	for p in "${pins[@]}"; do
		name=${p%@*}
		[ "$(installed_version "$name")" = "${p##*@}" ] || echo "$p"
	done
}

# One install at a time: a second run waits for the first, then finds the
# pinned versions there and installs nothing.
exec 9>"$dir/.lock"
if command -v flock >/dev/null 2>&1; then
	flock 9
fi

want=$(missing)
if [ -n "$want" ]; then
	log "installing $(echo $want) into $dir"
	echo '{"private":true}' >"$dir/package.json"
	rm -rf "$dir/node_modules" "$dir/package-lock.json"
	npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error "${pins[@]}" >&2
	want=$(missing)
	[ -z "$want" ] || { log "still missing after the install: $(echo $want)"; exit 1; }
else
	log "pinned versions already present in $dir"
fi

for tool in jest vitest mocha tsc; do
	if ! v=$("$dir/node_modules/.bin/$tool" --version 2>/dev/null </dev/null | head -n1); then
		log "$tool does not run: $dir/node_modules/.bin/$tool --version failed"
		exit 1
	fi
	log "$tool: $v"
done
echo "$dir"
