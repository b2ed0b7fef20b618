package initwiz

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/safegit"
)

// A holdout set made from the project's tests: init sets a share of the
// existing test files aside as holdout files (`holdout:`), which the agent
// never sees and which only the clean room runs (`holdout_verify:`). A
// file stays where it is, since a Go test file compiles only in its
// package's folder and a Python or JavaScript test imports from where it
// sits; what changes is that the loop hides it from the agent: an
// untracked one is kept out of git (.git/info/exclude); when git tracks
// one, the loop hides the whole repository from the agent.

// skipWalk are folders that hold no test of the project's own.
var skipWalk = map[string]bool{".git": true, "vendor": true, "node_modules": true, ".venv": true, "venv": true,
	"__pycache__": true, "testdata": true, "output": true, "working-records": true, "site-packages": true,
	"target": true, "build": true, "dist": true, ".tox": true, ".nox": true}

var goTestFunc = regexp.MustCompile(`(?m)^func (Test[A-Z0-9_]\w*|Test)\(\s*\w+\s+\*testing\.T\s*\)`)

// jsTestCall is a JavaScript or TypeScript test declared: it(…), test(…),
// and their .only/.each/.concurrent forms, at the start of a line.
var jsTestCall = regexp.MustCompile("(?m)^\\s*(?:it|test)(?:\\.\\w+)*\\s*\\(\\s*['\"`]")

// jsTestExt are the extensions of JavaScript and TypeScript test files.
var jsTestExt = []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}

// jsTestFile says whether a path (relative, with slashes) names a
// JavaScript or TypeScript test file by its name or folder.
func jsTestFile(rel string) bool {
	ext := path.Ext(rel)
	if !slices.Contains(jsTestExt, ext) || strings.HasSuffix(rel, ".d.ts") {
		return false
	}
	stem := strings.TrimSuffix(path.Base(rel), ext)
	if strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") {
		return true
	}
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		switch d {
		case "fixtures", "fixture", "helpers", "support", "__mocks__", "__fixtures__":
			return false
		}
	}
	for _, d := range parts[:len(parts)-1] {
		if d == "test" || d == "tests" || d == "__tests__" {
			return true
		}
	}
	return false
}

// jsTests are the tests a JavaScript or TypeScript file declares.
func jsTests(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return jsTestCall.FindAllString(string(data), -1)
}

// TestFiles lists the project's test files under dir (relative, with
// slashes, sorted) that a holdout set can take: Go test files with at
// least one test function, Python test_*.py and *_test.py files, and
// JavaScript and TypeScript test files (*.test.*, *.spec.*, and files in
// a test, tests or __tests__ folder) that declare a test (it, test).
func TestFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (skipWalk[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch {
		case strings.HasSuffix(name, "_test.go"):
			if len(goTests(p)) > 0 {
				out = append(out, rel)
			}
		case strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py")):
			out = append(out, rel)
		case jsTestFile(rel) && len(jsTests(p)) > 0:
			out = append(out, rel)
		case rustTestTarget(dir, rel) != "":
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// goTests are the test functions of a Go test file.
func goTests(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range goTestFunc.FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// HoldoutCount reads a share of n test files: "20%" or a count ("2").
// Empty or 0 is none. At least one test file must stay in sight.
func HoldoutCount(share string, n int) (int, error) {
	share = strings.TrimSpace(share)
	if share == "" {
		return 0, nil
	}
	var k int
	if p, ok := strings.CutSuffix(share, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f >= 100 {
			return 0, fmt.Errorf("--holdout %q: a share is a percentage under 100%% (like 20%%) or a count of test files (like 2)", share)
		}
		if f == 0 {
			return 0, nil
		}
		k = max(1, int(math.Round(f*float64(n)/100)))
	} else {
		c, err := strconv.Atoi(share)
		if err != nil || c < 0 {
			return 0, fmt.Errorf("--holdout %q: a share is a percentage under 100%% (like 20%%) or a count of test files (like 2)", share)
		}
		k = c
	}
	if k == 0 {
		return 0, nil
	}
	if n < 2 {
		return 0, fmt.Errorf("--holdout %s: the project has %d test file(s); a holdout set needs at least 2, one set aside and one the agent sees", share, n)
	}
	if k >= n {
		return 0, fmt.Errorf("--holdout %s would set aside all %d test files: the agent needs tests it can see; set aside fewer", share, n)
	}
	return k, nil
}

// PickHoldout picks k of the sorted files, spread evenly over the list:
// the same files every time for the same list.
func PickHoldout(files []string, k int) []string {
	n := len(files)
	var out []string
	for i := 0; i < k; i++ {
		out = append(out, files[(2*i+1)*n/(2*k)])
	}
	return out
}

// HoldoutVerify writes the commands that run the holdout files and only
// them: for Go, `go test -v -run` with their test functions, one command a
// package; for Python, pytest over them when the checks or the project use
// pytest, else unittest; for JavaScript and TypeScript, the project's
// runner over them (nodeRunner).
func HoldoutVerify(dir string, files []string, checks []string) []string {
	var out []string
	byPkg := map[string][]string{}
	var pkgs, py, js, rs []string
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			d := path.Dir(f)
			if byPkg[d] == nil {
				pkgs = append(pkgs, d)
			}
			byPkg[d] = append(byPkg[d], goTests(filepath.Join(dir, filepath.FromSlash(f)))...)
		} else if slices.Contains(jsTestExt, path.Ext(f)) {
			js = append(js, f)
		} else if t := rustTestTarget(dir, f); t != "" {
			rs = append(rs, t)
		} else {
			py = append(py, f)
		}
	}
	sort.Strings(pkgs)
	for _, d := range pkgs {
		names := byPkg[d]
		sort.Strings(names)
		target := "./" + d + "/"
		if d == "." {
			target = "."
		}
		out = append(out, fmt.Sprintf("go test -v -run '^(%s)$' %s", strings.Join(names, "|"), target))
	}
	if len(py) > 0 {
		out = append(out, pythonRunner(dir, checks)+" -v "+strings.Join(py, " "))
	}
	if len(js) > 0 {
		out = append(out, nodeRunner(dir, checks)+" "+strings.Join(js, " "))
	}
	out = append(out, rustHoldoutChecks(rs)...)
	return out
}

// nodeRunner is the start of a command that runs the JavaScript or
// TypeScript test files named after it, with the runner the project's
// checks or its package.json test script start (vitest, jest, mocha,
// node --test; node --test when none is named), through the package
// manager of the lockfile.
func nodeRunner(dir string, checks []string) string {
	runner, line := "", ""
	for _, c := range checks {
		if runner = detect.NodeRunner(c); runner != "" {
			line = c
			break
		}
	}
	if runner == "" {
		var pj struct {
			Scripts map[string]string `json:"scripts"`
		}
		if data, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil && json.Unmarshal(data, &pj) == nil {
			line = pj.Scripts["test"]
			runner = detect.NodeRunner(line)
		}
	}
	flags := ""
	if f := runnerFlags(dir, line, runner); len(f) > 0 {
		flags = " " + strings.Join(f, " ")
	}
	pm, _ := detect.PackageManager(dir)
	x := map[string]string{"npm": "npx", "pnpm": "pnpm exec", "yarn": "yarn", "bun": "bunx"}[pm]
	switch runner {
	case "vitest":
		return x + " vitest run" + flags
	case "jest":
		return x + " jest" + flags + " --runTestsByPath"
	case "mocha":
		return x + " mocha" + flags
	}
	return "node --test"
}

// pythonRunner is the test runner of the project's checks, as they start
// it ("pytest-3", "python3 -m pytest", "uv run pytest", "python -m
// unittest"); with none, pytest when the project's files name it, else
// unittest.
func pythonRunner(dir string, checks []string) string {
	for _, c := range checks {
		f := strings.Fields(c)
		for i, w := range f {
			if strings.Contains(path.Base(w), "pytest") || w == "unittest" {
				return strings.Join(f[:i+1], " ")
			}
		}
	}
	for _, f := range []string{"pytest.ini", "conftest.py", "tests/conftest.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return "python3 -m pytest"
		}
	}
	for _, f := range []string{"pyproject.toml", "setup.cfg", "tox.ini"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.Contains(string(data), "pytest") {
			return "python3 -m pytest"
		}
	}
	return "python3 -m unittest"
}

// gitTop is the top of the git work tree holding dir, "" when none.
func gitTop(dir string) string {
	out, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	return out
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", safegit.Args(args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// ExcludeHoldout keeps the untracked holdout files out of git: it adds
// those git does not ignore yet to .git/info/exclude (not .gitignore, which the agent
// reads and a commit carries). It returns the lines added; nothing outside
// a git work tree.
func ExcludeHoldout(dir string, files []string) ([]string, error) {
	top := gitTop(dir)
	if top == "" {
		return nil, nil
	}
	excl, err := git(top, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return nil, fmt.Errorf("finding .git/info/exclude: %w", err)
	}
	if !filepath.IsAbs(excl) {
		excl = filepath.Join(top, excl)
	}
	var add []string
	for _, f := range files {
		abs, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		if _, err := git(top, "check-ignore", "-q", "--", abs); err == nil {
			continue
		}
		if o, _ := git(top, "ls-files", "--", abs); o != "" {
			continue // tracked: the loop hides the repository instead
		}
		rel, err := filepath.Rel(top, abs)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil, errors.New("a holdout file is outside the git work tree")
		}
		add = append(add, "/"+filepath.ToSlash(rel))
	}
	if len(add) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(excl), 0o755); err != nil {
		return nil, err
	}
	old, _ := os.ReadFile(excl)
	var b strings.Builder
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("# looprinter: holdout tests, never in git (the agent reads the repository)\n")
	for _, l := range add {
		b.WriteString(l + "\n")
	}
	f, err := os.OpenFile(excl, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, err
	}
	return add, f.Close()
}

// PlanHoldout fills in a.Holdout and a.HoldoutVerify from a.HoldoutShare
// and the test files of dir, and a.HoldoutNotes with what the user must
// know of the pick. It never picks a test file that may hold the loop's
// failing target (FailingTargets): one changed since the last commit or
// not committed, or one the checks name. Files git tracks may be picked:
// the loop then hides the whole repository from the agent. It changes
// nothing on disk.
func PlanHoldout(dir string, a *Answers) error {
	a.Holdout, a.HoldoutVerify, a.HoldoutNotes = nil, nil, nil
	if strings.TrimSpace(a.HoldoutShare) == "" {
		return nil
	}
	files, err := TestFiles(dir)
	if err != nil {
		return fmt.Errorf("listing the test files: %w", err)
	}
	k, err := HoldoutCount(a.HoldoutShare, len(files))
	if err != nil {
		return err
	}
	if k == 0 {
		return nil
	}
	checks := append(append([]string{}, a.Verify...), a.ObjectiveVerify...)
	target := FailingTargets(dir, files, checks)
	for f, why := range failingNamed(dir, files, a.FailingOutput) {
		if target[f] == "" {
			target[f] = why
		}
	}
	var free []string
	for _, f := range files {
		if target[f] == "" {
			free = append(free, f)
		}
	}
	if len(target) > 0 {
		var kept []string
		for _, f := range files {
			if target[f] != "" {
				kept = append(kept, f+" ("+target[f]+")")
			}
		}
		a.HoldoutNotes = append(a.HoldoutNotes, "kept in sight, since it may hold the loop's failing target: "+strings.Join(kept, ", "))
	}
	if k > len(free) {
		return fmt.Errorf("--holdout %s: of the %d test files, %d may hold the loop's failing target (%s) and stay in sight; %d can be set aside: set aside fewer", a.HoldoutShare, len(files), len(files)-len(free), strings.Join(keys(target), ", "), len(free))
	}
	picked := PickHoldout(free, k)
	if tracked := judge.HoldoutTracked(dir, picked); len(tracked) > 0 {
		a.HoldoutNotes = append(a.HoldoutNotes, fmt.Sprintf("git tracks %s: while the loop runs, the agent sees no repository at all (its git commands fail; history and objects hold every version of a tracked file), and the checks whose output it reads do not either", strings.Join(tracked, ", ")))
	}
	a.Holdout = picked
	a.HoldoutVerify = HoldoutVerify(dir, picked, checks)
	return nil
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FailingTargets are the test files (of files, relative to dir) that may
// hold the loop's failing target, each with why: a file with changes git
// has not committed, or that git does not track where it tracks the other
// test files (the test a user writes for the bug), and a file a check names (its path, or for Go a test
// function a check's -run pattern names).
func FailingTargets(dir string, files []string, checks []string) map[string]string {
	out := map[string]string{}
	if top := gitTop(dir); top != "" {
		untracked := map[string]bool{}
		anyTracked := false
		for _, f := range files {
			abs := filepath.Join(dir, filepath.FromSlash(f))
			st, err := git(top, "status", "--porcelain", "--", abs)
			switch {
			case err != nil:
			case strings.HasPrefix(st, "??"):
				untracked[f] = true
			case st != "":
				anyTracked = true
				out[f] = "changed since the last commit"
			default:
				if o, _ := git(top, "ls-files", "--", abs); o != "" {
					anyTracked = true // else ignored: kept out of git on purpose
				}
			}
		}
		// Where git tracks the tests, an untracked one is new: the
		// user's test for the work. Where it tracks none, the tests are
		// kept out of git on purpose.
		for f := range untracked {
			if anyTracked {
				out[f] = "not committed, where git tracks the other tests"
			}
		}
	}
	for _, f := range files {
		if out[f] != "" {
			continue
		}
		for _, c := range checks {
			if checkNames(c, f) {
				out[f] = "a check names it"
				break
			}
		}
		if out[f] == "" && strings.HasSuffix(f, ".go") {
			for _, fn := range goTests(filepath.Join(dir, filepath.FromSlash(f))) {
				for _, c := range checks {
					if runNames(c, fn) {
						out[f] = "a check runs " + fn
					}
				}
			}
		}
	}
	return out
}

// checkNames says whether a check's line names the file f (a word of it
// is f, ./f, or a path that ends in /f).
func checkNames(check, f string) bool {
	for _, w := range strings.Fields(check) {
		w = strings.Trim(w, `'"`)
		w, _, _ = strings.Cut(w, "::") // pytest's file::test
		if w == f || w == "./"+f || strings.HasSuffix(w, "/"+f) {
			return true
		}
	}
	return false
}

// runNames says whether a Go test function is named in a check's -run
// pattern (as a word of it).
var runFlag = regexp.MustCompile(`-(?:test\.)?run[= ]+('[^']*'|"[^"]*"|\S+)`)

func runNames(check, fn string) bool {
	for _, m := range runFlag.FindAllStringSubmatch(check, -1) {
		pat := strings.Trim(m[1], `'"`)
		if regexp.MustCompile(`(^|[^\w])` + regexp.QuoteMeta(fn) + `([^\w]|$)`).MatchString(pat) {
			return true
		}
	}
	return false
}
