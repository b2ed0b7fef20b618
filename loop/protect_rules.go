package loop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// Protected is one file the agent may not change, with the rule that
// protects it.
type Protected struct {
	Path string // slash-separated, relative to the loop's directory
	// Rule says why, in words a user can act on: "go test files (default
	// rule go-tests)", `protect[0] "tests/**"`, "gate program: `sh
	// check.sh` runs check.sh", "the loop file".
	Rule string
	// Default is set when only a default rule protects the file: it may
	// not be edited or deleted, but new files that match the rule may be
	// added (writing tests is work), and protect_except frees it. The loop
	// file and files of the user's protect globs are not Default: they are
	// protected whether new or old, and protect_except never frees them.
	Default bool
}

// Allow says how a user lets the agent edit the file.
func (p Protected) Allow() string {
	switch {
	case p.Rule == ruleLoopFile:
		return "the loop file is never the agent's to edit"
	case p.Default:
		return fmt.Sprintf("add protect_except: [%q] to the loop file", p.Path)
	default:
		return "narrow or remove that protect glob in the loop file"
	}
}

const ruleLoopFile = "the loop file"

// maxProtectWalk bounds the walk that lists protected files (as the
// engine's own walks are bounded). Past it the listing fails rather than
// leave files unprotected.
var maxProtectWalk = 1000000

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

// ProtectRules are a loop's protection rules resolved against its folder:
// build them once (one walk of the folder) and ask them about many paths.
type ProtectRules struct {
	dir      string
	l        *spec.Loop
	loopFile string // relative; "" when outside dir
	defaults bool
	ecos     map[string]bool
	crates   []string          // directories (relative, "" for the top) that hold a Cargo.toml
	goMods   map[string]bool   // directories (relative, "." for the top) that hold a go.mod
	programs map[string]string // gate program path → why
	// deliverables are the files under review (the review shape's diff):
	// a check that runs one runs the work being judged, not a gate program.
	deliverables map[string]bool
	files        []string              // every walked file
	skipped      map[string]bool       // files under a directory the default rules do not look into
	exists       func(rel string) bool // for paths not walked
	support      map[string]bool       // folders of Go packages only tests use (goTestSupport)
	// shadow are the modules the checks run with `python -m`; shadowAtStart
	// the top-level names of the folder when the rules were made.
	shadow, shadowAtStart map[string]bool
}

// ResolveProtected lists every protected file in the loop's folder, each
// with the rule that protects it, sorted by path. It fails (rather than
// leave files unprotected) when the folder cannot be read or holds more
// than maxProtectWalk files outside .git and the records; the default
// rules do not look into dependency, cache and build folders
// (node_modules, .venv, target, vendor, build …), the user's protect globs
// do.
//
// The rules: the loop file; the user's protect globs; and unless
// protect_defaults is false, the files a gate runs as programs (never the
// data it reads) and the tests of each ecosystem found in the folder: Go
// (go.mod), Python (pyproject.toml, setup.py, setup.cfg, requirements*.txt,
// any .py file), JS/TS (package.json), Rust (Cargo.toml). protect_except
// globs free files from the default rules only. pyproject.toml and
// setup.cfg are listed whole; KeepTestConfigEdit lets edits outside their
// pytest sections stand.
func ResolveProtected(dir string, l *spec.Loop) ([]Protected, error) {
	r, err := NewProtectRules(dir, l)
	if err != nil {
		return nil, err
	}
	return r.Files(), nil
}

// ProtectRule tells whether one path (relative to dir, or absolute) is
// protected, and by which rule: an existing file by every rule, a file that
// does not exist yet only by the rules that also cover new files (see
// ProtectNew). When the folder cannot be listed it fails closed: protected,
// with the reason as the rule.
func ProtectRule(dir string, l *spec.Loop, rel string) (rule string, protected bool) {
	r, err := NewProtectRules(dir, l)
	if err != nil {
		return "the protected files could not be listed: " + err.Error(), true
	}
	p, ok := r.Rule(rel)
	return p.Rule, ok
}

// NewProtectRules walks the loop's folder once and returns its rules.
func NewProtectRules(dir string, l *spec.Loop) (*ProtectRules, error) {
	if l == nil {
		return nil, errors.New("listing protected files: no loop")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &ProtectRules{dir: abs, l: l, ecos: map[string]bool{}, programs: map[string]string{}, skipped: map[string]bool{}, goMods: map[string]bool{}}
	r.defaults = l.ProtectDefaults == nil || *l.ProtectDefaults
	if l.Path != "" {
		if rel, ok := relInside(abs, l.Path); ok {
			r.loopFile = rel
		}
	}
	r.exists = func(rel string) bool {
		st, err := os.Stat(filepath.Join(abs, filepath.FromSlash(rel)))
		return err == nil && !st.IsDir()
	}
	if err := r.walk(); err != nil {
		return nil, err
	}
	if r.defaults {
		if err := r.gatePrograms(); err != nil {
			return nil, err
		}
	}
	r.support = goTestSupport(abs, r.files) // nil without a go.mod
	r.shadow = shadowable(l.Verify, l.ObjectiveVerify, l.HoldoutVerify)
	r.shadowAtStart = map[string]bool{}
	if ents, err := os.ReadDir(abs); err == nil {
		for _, e := range ents {
			r.shadowAtStart[e.Name()] = true
		}
	}
	return r, nil
}

func (r *ProtectRules) walk() error {
	n := 0
	err := filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(r.dir, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if p == r.dir {
				return err
			}
			return fmt.Errorf("cannot read %s: %w", rel, err)
		}
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if neverWalked[d.Name()] {
				return filepath.SkipDir
			}
			if defaultSkipped[d.Name()] && !r.userGlobCouldMatchUnder(rel) && !r.goVendored(rel+"/-") {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > maxProtectWalk {
			return fmt.Errorf("%s holds more than %d files (outside .git, %s and, for the default rules, dependency and build folders): "+
				"the protected files cannot all be listed; narrow the protect globs, or run the loop in a smaller folder", r.dir, maxProtectWalk, loopdir.RecordsDir)
		}
		r.files = append(r.files, rel)
		if underDefaultSkipped(rel) {
			r.skipped[rel] = true
			return nil
		}
		r.detect(rel)
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing protected files: %w", err)
	}
	sort.Strings(r.crates)
	return nil
}

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

// userGlobCouldMatchUnder tells whether a user glob may match a file under
// the directory rel: then the walk must look inside it.
func (r *ProtectRules) userGlobCouldMatchUnder(rel string) bool {
	dirParts := strings.Split(rel, "/")
	for _, g := range r.l.Protect {
		if strings.ContainsAny(g, "{\\") {
			return true // alternatives may hold slashes: look
		}
		gp := strings.Split(strings.TrimPrefix(g, "./"), "/")
		could := true
		for i, d := range dirParts {
			if i >= len(gp)-1 { // the last segment names files, not this directory
				could = i < len(gp) && gp[i] == "**"
				break
			}
			if gp[i] == "**" {
				break
			}
			if ok, _ := doublestar.Match(gp[i], d); !ok {
				could = false
				break
			}
		}
		if could {
			return true
		}
	}
	return false
}

// gatePrograms finds the files the gates run as programs.
func (r *ProtectRules) gatePrograms() error {
	groups := []struct {
		key  string
		cmds []string
	}{{"verify", r.l.Verify}, {"objective_verify", r.l.ObjectiveVerify}}
	for _, g := range groups {
		for i, c := range g.cmds {
			progs, err := checkcmd.Programs(c)
			if err != nil {
				return fmt.Errorf("%s[%d] %q cannot be read (%v): its programs cannot be protected", g.key, i, c, err)
			}
			for _, p := range progs {
				full := p.Path
				if !path.IsAbs(full) {
					full = path.Join(filepath.ToSlash(r.dir), full)
				}
				rel, ok := relInside(r.dir, filepath.FromSlash(full))
				if !ok {
					continue // outside the loop's folder
				}
				if _, seen := r.programs[rel]; !seen {
					r.programs[rel] = "gate program: " + p.Why
				}
			}
		}
	}
	return nil
}

// FreeDeliverables says which files are the deliverable under review
// (slash-separated, relative to the loop's folder): a check that runs one of
// them runs the work it judges, so the gate-program rule does not protect
// it. The loop file, the user's protect globs and the ecosystems' test rules
// still do.
func (r *ProtectRules) FreeDeliverables(paths []string) {
	if r.deliverables == nil {
		r.deliverables = map[string]bool{}
	}
	for _, p := range paths {
		if rel, ok := r.clean(p); ok {
			r.deliverables[rel] = true
		}
	}
}

// relInside is target relative to dir, slash-separated, when it is inside.
func relInside(dir, target string) (string, bool) {
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	rel, err := filepath.Rel(dir, target)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Files lists every existing protected file with its rule, sorted by path.
func (r *ProtectRules) Files() []Protected {
	seen := map[string]bool{}
	var out []Protected
	for _, rel := range r.files {
		if p, ok := r.rule(rel, true); ok {
			seen[rel] = true
			out = append(out, p)
		}
	}
	// Gate programs and the loop file in folders the walk did not enter.
	extra := []string{}
	if r.loopFile != "" {
		extra = append(extra, r.loopFile)
	}
	for rel := range r.programs {
		extra = append(extra, rel)
	}
	for _, rel := range extra {
		if !seen[rel] && r.exists(rel) {
			if p, ok := r.rule(rel, true); ok {
				seen[rel] = true
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Rule tells whether a path is protected now, and by which rule: an
// existing file by every rule, a missing one only by the rules that cover
// new files.
func (r *ProtectRules) Rule(rel string) (Protected, bool) {
	rel, ok := r.clean(rel)
	if !ok {
		return Protected{}, false
	}
	return r.rule(rel, r.exists(rel))
}

// ProtectNew tells whether the agent may not create this file (one that did
// not exist when the loop started): the loop file, the user's protect
// globs, a gate's programs (a check must not run what the agent wrote) and
// test-runner configuration (a new conftest.py, pytest.ini or jest.config.js
// changes how the existing tests run). New test files are allowed.
func (r *ProtectRules) ProtectNew(rel string) (Protected, bool) {
	rel, ok := r.clean(rel)
	if !ok {
		return Protected{}, false
	}
	return r.rule(rel, false)
}

func (r *ProtectRules) clean(rel string) (string, bool) {
	if rel == "" {
		return "", false
	}
	return relInside(r.dir, filepath.FromSlash(rel))
}

// rule applies the rules in order: the loop file, the user's globs, gate
// programs, protect_except, then the ecosystems' rules (existing files
// only, except for configuration).
func (r *ProtectRules) rule(rel string, exists bool) (Protected, bool) {
	if rel == r.loopFile && rel != "" {
		return Protected{Path: rel, Rule: ruleLoopFile}, true
	}
	for i, g := range r.l.Protect {
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return Protected{Path: rel, Rule: fmt.Sprintf("protect[%d] %q", i, g)}, true
		}
	}
	if !r.defaults {
		return Protected{}, false
	}
	for _, g := range r.l.ProtectExcept {
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return Protected{}, false
		}
	}
	if why, ok := r.programs[rel]; ok && !r.deliverables[rel] {
		return Protected{Path: rel, Rule: why, Default: true}, true
	}
	if r.goVendored(rel) {
		return Protected{Path: rel, Rule: ruleGoVendor, Default: true}, true
	}
	if r.skipped[rel] || underDefaultSkipped(rel) {
		return Protected{}, false
	}
	if name, ok := r.shadows(rel); ok && !exists {
		return Protected{Path: rel, Rule: fmt.Sprintf("a module named like one a check runs with `python -m %s` (default rule python-shadow)", name), Default: true}, true
	}
	if exists && strings.HasSuffix(rel, ".go") && r.support[path.Dir(rel)] {
		return Protected{Path: rel, Rule: "go test support: a package only tests import (default rule go-test-support)", Default: true}, true
	}
	for _, dr := range defaultRules {
		if !r.ecos[dr.eco] || !exists && !dr.config {
			continue
		}
		if dr.matches(rel, r.crates) {
			return Protected{Path: rel, Rule: fmt.Sprintf("%s (default rule %s)", dr.what, dr.id), Default: true}, true
		}
	}
	return Protected{}, false
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

// KeepTestConfigEdit decides about a change to a file that holds test
// configuration beside the project's own settings, which a config rule
// protects whole: pyproject.toml and setup.cfg (an edit that leaves their
// pytest sections — [tool.pytest…] in pyproject.toml, [tool:pytest] in
// setup.cfg — as they were is kept), go.mod (its go, toolchain, godebug
// and replace lines), package.json (its scripts and its test runners'
// keys) and Cargo.toml (its [profile.*], [patch.*] and [replace] tables).
// For any other file it returns false.
func KeepTestConfigEdit(rel string, old, cur []byte) (keep bool, why string) {
	var isTest func(section string) bool
	switch path.Base(filepath.ToSlash(rel)) {
	case "pyproject.toml":
		isTest = func(s string) bool { return s == "tool.pytest" || strings.HasPrefix(s, "tool.pytest.") }
	case "setup.cfg":
		isTest = func(s string) bool { return s == "tool:pytest" || s == "pytest" }
	case "go.mod":
		if bytes.Equal(goModRunnerLines(old), goModRunnerLines(cur)) {
			return true, ""
		}
		return false, "its go, toolchain, godebug or replace lines changed"
	case "package.json":
		if bytes.Equal(packageRunnerKeys(old), packageRunnerKeys(cur)) {
			return true, ""
		}
		return false, "its scripts or its test runners' settings changed"
	case "Cargo.toml":
		if bytes.Equal(cargoRunnerTables(old), cargoRunnerTables(cur)) {
			return true, ""
		}
		return false, "its [profile], [patch] or [replace] tables changed"
	default:
		return false, ""
	}
	if bytes.Equal(testSections(old, isTest), testSections(cur, isTest)) {
		return true, ""
	}
	return false, "its pytest section changed"
}

// goModRunnerLines are the lines of a go.mod that change how its tests
// build and run without changing the deliverable's code: the go and
// toolchain versions, godebug settings and replacements.
func goModRunnerLines(data []byte) []byte {
	var out bytes.Buffer
	block := ""
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(strings.SplitN(line, "//", 2)[0])
		if block != "" {
			if t == ")" {
				block = ""
			} else if t != "" {
				out.WriteString(block + " " + strings.Join(strings.Fields(t), " ") + "\n")
			}
			continue
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "go", "toolchain", "godebug", "replace":
			if len(f) == 2 && f[1] == "(" {
				block = f[0]
				continue
			}
			out.WriteString(strings.Join(f, " ") + "\n")
		}
	}
	return out.Bytes()
}

// cargoRunnerTables are the parts of a Cargo.toml that change how its
// tests build without changing the deliverable's code: the [profile.*]
// tables (optimisation, debug assertions, overflow checks, panic), the
// [patch.*] and [replace] tables (what stands in for a dependency), and
// the same written as dotted keys of the top table.
func cargoRunnerTables(data []byte) []byte {
	runner := func(name string) bool {
		first := strings.SplitN(name, ".", 2)[0]
		return first == "profile" || first == "patch" || first == "replace"
	}
	var out bytes.Buffer
	in, top := false, true
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		t := strings.TrimSpace(strings.SplitN(sc.Text(), "#", 2)[0])
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(t, "[] \t")
			name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
			in, top = runner(name), false
			t = "[" + name + "]"
		}
		if in || top && runner(strings.ReplaceAll(strings.TrimSpace(strings.SplitN(t, "=", 2)[0]), `"`, "")) {
			out.WriteString(strings.Join(strings.Fields(t), " "))
			out.WriteByte('\n')
		}
	}
	if sc.Err() != nil {
		return append([]byte("unreadable\n"), data...)
	}
	return out.Bytes()
}

// packageRunnerKeys are the keys of a package.json that say what `npm
// test` runs and how the test runners load the code: scripts, the runners'
// own settings, babel, module type and subpath imports. Unreadable JSON is
// compared whole.
func packageRunnerKeys(data []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	var out bytes.Buffer
	for _, k := range []string{"scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc", "tap", "babel", "type", "imports"} {
		if v, ok := m[k]; ok {
			var c bytes.Buffer
			if json.Compact(&c, v) != nil {
				c.Write(v)
			}
			out.WriteString(k + "=" + c.String() + "\n")
		}
	}
	return out.Bytes()
}

// testSections returns the lines of the sections isTest selects; a [tool]
// table with pytest keys counts too.
func testSections(data []byte, isTest func(string) bool) []byte {
	var out bytes.Buffer
	in, inTool := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(strings.TrimSpace(strings.SplitN(t, "#", 2)[0]), "[] \t")
			name = strings.ReplaceAll(strings.ReplaceAll(name, `"`, ""), " ", "")
			in, inTool = isTest(name), name == "tool"
		}
		if in || inTool && strings.HasPrefix(t, "pytest") {
			out.WriteString(strings.TrimRight(line, " \t\r"))
			out.WriteByte('\n')
		}
	}
	if sc.Err() != nil {
		return append([]byte("unreadable\n"), data...)
	}
	return out.Bytes()
}
