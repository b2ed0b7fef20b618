// Package safegit holds what every git command of looprinter runs with, so
// that nothing an agent could have written runs with the engine's rights.
// An agent may write the user's ~/.gitconfig (HOME is writable to it) and,
// under some sandboxes, .git/hooks: git would then run the agent's program,
// unconfined, inside the engine's own `git commit` or `git status`.
package safegit

import "strings"

// settings turn off each way git runs a program of the repository's or the
// user's: hooks (core.hooksPath to a folder that holds none), the
// filesystem monitor, and the signing program of signed commits and tags.
var settings = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
}

// Args is args with the settings put first: `git` + Args(args...) runs
// no program an agent could have named.
func Args(args ...string) []string {
	return append(append(make([]string, 0, len(settings)+len(args)), settings...), args...)
}

// IndexBusy says whether git's message is that another git process holds
// the repository's index (index.lock exists): a user's editor refreshing
// its status, or the engine's own update of the index after a commit. It
// lasts milliseconds; the command is worth running again.
func IndexBusy(msg string) bool {
	return strings.Contains(msg, "index.lock") && strings.Contains(msg, "File exists")
}
