#!/usr/bin/env bash
# Installs the pinned agent CLIs that looprinter's end-to-end tests drive:
#   Claude Code 2.1.328, Codex 0.169.0, Gemini CLI 0.61.0
# from the npm registry into a cache folder, and prints the folder holding
# their programs (pass it to the tests as LOOPRINTER_AGENT_CLIS, or put it on
# PATH).
#
#   LOOPRINTER_AGENT_CLIS_DIR   install folder (default: $LOOPRINTER_AGENT_CLIS, else
#                               <repo>/.cache/agent-clis)
#
# Idempotent: when the pinned versions are already there it installs nothing.
# Only the last line of standard output is the bin folder; progress goes to
# standard error.
set -euo pipefail

CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
GEMINI_VERSION=0.61.0

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${LOOPRINTER_AGENT_CLIS_DIR:-${LOOPRINTER_AGENT_CLIS:-$repo/.cache/agent-clis}}
bin=$dir/bin
mkdir -p "$dir" "$bin"
dir=$(cd "$dir" && pwd)
bin=$dir/bin

log() { echo "install-agent-clis: $*" >&2; }

installed_version() { # package name -> version or empty
	local pj="$dir/node_modules/$1/package.json"
	[ -f "$pj" ] || return 0
	node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}

want=()
[ "$(installed_version @anthropic-ai/claude-code)" = "$CLAUDE_VERSION" ] || want+=("@anthropic-ai/claude-code@$CLAUDE_VERSION")
[ "$(installed_version @openai/codex)" = "$CODEX_VERSION" ] || want+=("@openai/codex@$CODEX_VERSION")
[ "$(installed_version @google/gemini-cli)" = "$GEMINI_VERSION" ] || want+=("@google/gemini-cli@$GEMINI_VERSION")

# Claude Code's real program is a native binary in an optional per-platform
# package; make sure it came along (a failed or skipped optional install
# leaves only a stub).
claude_native() {
	local d
	for d in "$dir"/node_modules/@anthropic-ai/claude-code-linux-*; do
		[ -x "$d/claude" ] && { echo "$d/claude"; return 0; }
	done
	[ -x "$dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ] && { echo "$dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe"; return 0; }
	return 1
}
if [ ${#want[@]} -eq 0 ] && ! claude_native >/dev/null; then
	want+=("@anthropic-ai/claude-code@$CLAUDE_VERSION")
fi

if [ ${#want[@]} -gt 0 ]; then
	log "installing ${want[*]} into $dir"
	[ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
	npm install --prefix "$dir" --save-exact --include=optional --no-audit --no-fund --loglevel=error \
		"@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" "@google/gemini-cli@$GEMINI_VERSION" >&2
else
	log "pinned versions already present in $dir"
fi

# Stable entry points in $bin. Claude: the native binary directly (the npm
# wrapper needs a postinstall step that may not have run).
native=$(claude_native) || { log "Claude Code's native binary is missing (optional package @anthropic-ai/claude-code-linux-x64 not installed)"; exit 1; }
ln -sfn "$native" "$bin/claude"
ln -sfn "$dir/node_modules/@openai/codex/bin/codex.js" "$bin/codex"
gemini_main=$(node -e 'const p=require(process.argv[1]); const b=typeof p.bin==="string"?p.bin:p.bin.gemini; process.stdout.write(b)' "$dir/node_modules/@google/gemini-cli/package.json")
ln -sfn "$dir/node_modules/@google/gemini-cli/$gemini_main" "$bin/gemini"

for tool in claude codex gemini; do
	if ! v=$("$bin/$tool" --version 2>/dev/null </dev/null | head -n1); then
		log "$tool does not run: $bin/$tool --version failed"
		exit 1
	fi
	log "$tool: $v"
done
echo "$bin"
