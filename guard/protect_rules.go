package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
	testData     map[string]bool       // data files Go tests name (goTestData)
	fixtures     map[string]bool       // data files Python and JS tests name (testFixtures)
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
		if rel, ok := RelInside(abs, l.Path); ok {
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
	r.testData = goTestData(abs, r.files)
	r.fixtures = testFixtures(abs, r.files)
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
				rel, ok := RelInside(r.dir, filepath.FromSlash(full))
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

// RelInside is target relative to dir, slash-separated, when it is inside.
func RelInside(dir, target string) (string, bool) {
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
	return RelInside(r.dir, filepath.FromSlash(rel))
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
	if exists && r.testData[rel] {
		return Protected{Path: rel, Rule: "go test data: a file the tests name (default rule go-test-data-read)", Default: true}, true
	}
	if exists && r.fixtures[rel] {
		return Protected{Path: rel, Rule: "test data: a file the tests name (default rule test-data-read)", Default: true}, true
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
