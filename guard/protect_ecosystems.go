package guard

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/looprinter/looprinter/loopdir"
)

// neverWalked are never project files: git's own and the engine's records.
var neverWalked = map[string]bool{".git": true, loopdir.RecordsDir: true}

// defaultSkipped hold dependencies, caches and build output: the default
// rules do not look inside them (the user's protect globs do).
var defaultSkipped = map[string]bool{"node_modules": true, ".cache": true, ".venv": true, "venv": true,
	"target": true, "vendor": true, "build": true, "dist": true, "__pycache__": true, ".tox": true, ".nox": true,
	".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true, ".next": true, ".gradle": true}

// defaultRule protects the tests of one ecosystem.
type defaultRule struct {
	id, what string
	eco      string
	globs    []string
	// config rules cover test-runner configuration: a new file of theirs
	// changes how the existing tests run, so it may not be added either.
	config bool
}

// The ecosystems, detected from the loop folder's files.
const (
	ecoGo     = "go"
	ecoPython = "python"
	ecoJS     = "js"
	ecoRust   = "rust"
)

var defaultRules = []defaultRule{
	{id: "go-tests", what: "go test files", eco: ecoGo, globs: []string{"**/*_test.go"}},
	{id: "go-testdata", what: "go test data", eco: ecoGo, globs: []string{"**/testdata/**"}},
	// go.mod is listed whole; KeepTestConfigEdit lets an edit stand that
	// leaves its go, toolchain, godebug and replace lines as they were.
	{id: "go-test-config", what: "go build configuration the tests run with", eco: ecoGo, config: true,
		globs: []string{"**/go.mod", "go.work", "go.work.sum"}},
	{id: "python-tests", what: "python test files", eco: ecoPython, globs: []string{"**/test_*.py", "**/*_test.py", "**/tests/**"}},
	{id: "python-test-config", what: "pytest configuration", eco: ecoPython, config: true,
		globs: []string{"**/conftest.py", "**/pytest.ini", "**/.pytest.ini", "**/tox.ini", "pyproject.toml", "setup.cfg",
			"**/sitecustomize.py", "**/usercustomize.py", "**/*.pth"}},
	{id: "js-tests", what: "JS/TS test files", eco: ecoJS, globs: []string{"**/*.test.*", "**/*.spec.*", "**/__tests__/**", "test/**"}},
	// package.json is listed whole; KeepTestConfigEdit lets an edit stand
	// that leaves its scripts and its test runners' keys as they were.
	{id: "js-test-config", what: "JS/TS test runner configuration", eco: ecoJS, config: true,
		globs: []string{"**/jest.config.*", "**/vitest.config.*", "**/.mocharc*", "**/playwright.config.*", "**/karma.conf.*",
			"**/package.json", "**/.npmrc", "**/babel.config.*", "**/.babelrc*", "**/ava.config.*", "**/.nycrc*", "**/.c8rc*", "**/.taprc"}},
	{id: "rust-tests", what: "rust integration tests", eco: ecoRust, globs: []string{"tests/**"}}, // relative to each Cargo.toml
	// Snapshots a test compares with (jest, vitest, syrupy, go-snaps:
	// __snapshots__; insta: snapshots/*.snap) are its expected values.
	{id: "js-test-snapshots", what: "test snapshots", eco: ecoJS, globs: []string{"**/__snapshots__/**"}},
	{id: "python-test-snapshots", what: "test snapshots", eco: ecoPython, globs: []string{"**/__snapshots__/**"}},
	{id: "go-test-snapshots", what: "test snapshots", eco: ecoGo, globs: []string{"**/__snapshots__/**"}},
	{id: "rust-test-snapshots", what: "test snapshots", eco: ecoRust, globs: []string{"**/snapshots/*.snap", "**/snapshots/*.snap.new"}},
	{id: "rust-test-config", what: "cargo configuration", eco: ecoRust, config: true, globs: []string{".cargo/config", ".cargo/config.toml"}},
	// Cargo.toml is listed whole; KeepTestConfigEdit lets an edit stand
	// that leaves its [profile.*], [patch.*] and [replace] tables as they
	// were (a new crate's Cargo.toml is work: cargo reads those tables
	// from the workspace's root only).
	{id: "rust-build-config", what: "cargo build profiles and patches", eco: ecoRust, globs: []string{"Cargo.toml"}},
}

// ruleGoVendor protects a Go module's vendor folder, all of it: `go build`
// and `go test` compile what it holds instead of the modules go.mod names,
// so an edited or added file there changes what the tests run.
const ruleGoVendor = "vendored sources the Go build uses (default rule go-vendor)"

// detect notes the ecosystem a file shows.
func (r *ProtectRules) detect(rel string) {
	base := path.Base(rel)
	switch {
	case base == "go.mod":
		r.ecos[ecoGo] = true
		r.goMods[path.Dir(rel)] = true
	case base == "package.json":
		r.ecos[ecoJS] = true
	case base == "Cargo.toml":
		r.ecos[ecoRust] = true
		if d := path.Dir(rel); d == "." {
			r.crates = append(r.crates, "")
		} else {
			r.crates = append(r.crates, d)
		}
	case base == "pyproject.toml" || base == "setup.py" || base == "setup.cfg" || strings.HasSuffix(base, ".py") ||
		strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
		r.ecos[ecoPython] = true
	}
}

// note adds what a new file shows (an ecosystem, a crate) to rules built
// before it existed. What it shows stays known: a file the rules once
// covered is never freed by removing the file that showed its ecosystem.
func (r *ProtectRules) note(rel string) {
	crates := len(r.crates)
	r.detect(rel)
	if len(r.crates) > crates {
		sort.Strings(r.crates)
		r.crates = slices.Compact(r.crates)
	}
}

// Ecosystems are the ecosystems found in the folder, sorted.
func (r *ProtectRules) Ecosystems() []string {
	var out []string
	for e := range r.ecos {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// goVendored says whether the file rel lies in a Go module's vendor folder
// (a folder named vendor beside a go.mod, outside any other dependency or
// build folder).
func (r *ProtectRules) goVendored(rel string) bool {
	parts := strings.Split(rel, "/")
	for i, p := range parts[:len(parts)-1] {
		if p == "vendor" {
			mod := path.Clean(strings.Join(parts[:i], "/")) // "." for the top
			return r.goMods[mod] || r.exists(path.Join(mod, "go.mod"))
		}
		if defaultSkipped[p] {
			return false
		}
	}
	return false
}

// goVendorFolder says whether the folder rel of dir is a Go module's vendor
// folder: named vendor, beside a go.mod.
func goVendorFolder(dir, rel, name string) bool {
	if name != "vendor" {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(path.Dir(rel)), "go.mod"))
	return err == nil && !st.IsDir()
}

func underDefaultSkipped(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		if defaultSkipped[p] {
			return true
		}
	}
	return false
}

func (dr defaultRule) matches(rel string, crates []string) bool {
	if dr.eco == ecoRust {
		for _, c := range crates {
			sub := rel
			if c != "" {
				if !strings.HasPrefix(rel, c+"/") {
					continue
				}
				sub = strings.TrimPrefix(rel, c+"/")
			}
			for _, g := range dr.globs {
				if ok, _ := doublestar.Match(g, sub); ok {
					return true
				}
			}
		}
		return false
	}
	for _, g := range dr.globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
	}
	return false
}
