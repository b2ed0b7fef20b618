package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// The real JavaScript test runners (jest with ts-jest and TypeScript,
// vitest, mocha), installed once by scripts/install-js-runners.sh into
// LOOPRINTER_JS_RUNNERS (default <repo>/.cache/js-runners). A script test
// needs them with [jsrunners] (false without the install, and an error
// in CI or when LOOPRINTER_REQUIRE_JS_RUNNERS=1 asks for them: there a
// missing install fails the tests that need it, never skips them) and
// gives its project them with `jsrunners`.

// jsRunnersDir is the install folder, whether or not it holds the runners.
func jsRunnersDir() string {
	if d := os.Getenv("LOOPRINTER_JS_RUNNERS"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join("..", "..", ".cache", "js-runners"))
	if err != nil {
		return ""
	}
	return d
}

// jsRunnersRequired says whether a missing install fails the tests.
func jsRunnersRequired() bool {
	return os.Getenv("CI") != "" || os.Getenv("LOOPRINTER_REQUIRE_JS_RUNNERS") == "1"
}

// jsRunnersCond is the [jsrunners] condition.
func jsRunnersCond() (bool, error) {
	d := jsRunnersDir()
	for _, tool := range []string{"jest", "vitest", "mocha", "tsc"} {
		if fi, err := os.Stat(filepath.Join(d, "node_modules", ".bin", tool)); err != nil || fi.IsDir() {
			if jsRunnersRequired() {
				return false, fmt.Errorf("the JavaScript test runners are not installed in %s (%s missing): run scripts/install-js-runners.sh (required: CI or LOOPRINTER_REQUIRE_JS_RUNNERS=1 is set)", d, tool)
			}
			return false, nil
		}
	}
	return true, nil
}

// jsrunners [DIR]: give the project in DIR (default the current folder)
// the installed runners: their node_modules, hard-linked (copied where
// links cannot be made) into DIR/node_modules, beside what is there. A
// copy in the tree, not a symlink out of it: the checks run in a box that
// sees the project's tree, and a link leading out of it does not resolve
// there (the check exits 127). Hard links share the install's files: a
// script must not write into node_modules' files (new files are its own).
func cmdJSRunners(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! jsrunners")
	}
	if len(args) > 1 {
		ts.Fatalf("usage: jsrunners [dir]")
	}
	if ok, err := jsRunnersCond(); err != nil || !ok {
		ts.Fatalf("the JavaScript test runners are not installed (guard the script with [!jsrunners] skip): %v", err)
	}
	dst := ts.MkAbs(".")
	if len(args) == 1 {
		dst = ts.MkAbs(args[0])
	}
	dst = filepath.Join(dst, "node_modules")
	ts.Check(os.MkdirAll(dst, 0o755))
	src := filepath.Join(jsRunnersDir(), "node_modules") + "/."
	if exec.Command("cp", "-al", src, dst).Run() == nil {
		return
	}
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		ts.Fatalf("copying the runners into %s: %v\n%s", dst, err, out)
	}
}
