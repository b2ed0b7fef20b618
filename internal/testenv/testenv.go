// Package testenv keeps the tests of every package off the user's own
// looprinter state: the registry of loops, the logs of background runs and
// the engine's private folders all go to a temporary folder that is removed
// when the package's tests end.
//
// Use it from each package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// Main points LOOPRINTER_STATE_DIR (and XDG_STATE_HOME, for anything that
// reads it directly) at a new temporary folder, XDG_CACHE_HOME (where the
// Gemini adapter writes its settings copies) at another, and TMPDIR at a
// third, so that what the tests and the programs they start leave in the
// temporary folder (a sandbox's private folder, a script test's work) goes
// with it; runs the tests and removes them. Tests that need a state folder
// of their own still set one.
func Main(m interface{ Run() int }) int {
	dir, err := os.MkdirTemp("", "looprinter-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// A `go build` run by a test (the e2e binary) keeps using the user's
	// build cache, which lives under XDG_CACHE_HOME unless GOCACHE says
	// otherwise: without this it would build everything cold.
	if os.Getenv("GOCACHE") == "" {
		if d, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
		}
	}
	os.Setenv("LOOPRINTER_STATE_DIR", dir+"/looprinter")
	os.Setenv("XDG_STATE_HOME", dir)
	os.Setenv("XDG_CACHE_HOME", dir+"/cache")
	if err := os.Mkdir(dir+"/tmp", 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	os.Setenv("TMPDIR", dir+"/tmp")
	return m.Run()
}
