package initwiz

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/safegit"
)

// A holdout set made from the project's tests: init sets a share of the
// existing test files aside as holdout files (`holdout:`), which the agent
// never sees and which only the clean room runs (`holdout_verify:`). A
// file stays where it is, since a Go test file compiles only in its
// package's folder and a Python test imports from where it sits; what
// changes is that the loop hides it from the agent and git never carries
// it (.git/info/exclude).

// skipWalk are folders that hold no test of the project's own.
var skipWalk = map[string]bool{".git": true, "vendor": true, "node_modules": true, ".venv": true, "venv": true,
	"__pycache__": true, "testdata": true, "output": true, "working-records": true, "site-packages": true,
	"target": true, "build": true, "dist": true, ".tox": true, ".nox": true}

var goTestFunc = regexp.MustCompile(`(?m)^func (Test[A-Z0-9_]\w*|Test)\(\s*\w+\s+\*testing\.T\s*\)`)

// TestFiles lists the project's test files under dir (relative, with
// slashes, sorted) that a holdout set can take: Go test files with at
// least one test function, and Python test_*.py and *_test.py files.
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
// pytest, else unittest.
func HoldoutVerify(dir string, files []string, checks []string) []string {
	var out []string
	byPkg := map[string][]string{}
	var pkgs, py []string
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			d := path.Dir(f)
			if byPkg[d] == nil {
				pkgs = append(pkgs, d)
			}
			byPkg[d] = append(byPkg[d], goTests(filepath.Join(dir, filepath.FromSlash(f)))...)
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
	return out
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

// ErrHoldoutTracked is a chosen holdout file git carries or once carried.
type ErrHoldoutTracked struct{ Files []string }

func (e ErrHoldoutTracked) Error() string {
	return fmt.Sprintf("cannot set aside %s as holdout tests: git tracks them or once did, and the agent reads the repository, "+
		"history included, so it would see them. Taking test files out of git is your decision, not init's: to make them holdout files, "+
		"remove them from the index (git rm --cached FILE) and from the history (e.g. git filter-repo --invert-paths --path FILE), then run init again; "+
		"or write new holdout tests that never go into git and name them in holdout: and holdout_verify: yourself; "+
		"or run init without --holdout", strings.Join(e.Files, ", "))
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

// CheckHoldoutUntracked refuses holdout files that git tracks, has staged
// or has in its history.
func CheckHoldoutUntracked(dir string, files []string) error {
	if tracked := judge.HoldoutTracked(dir, files); len(tracked) > 0 {
		return ErrHoldoutTracked{tracked}
	}
	return nil
}

// ExcludeHoldout keeps the holdout files out of git: it adds those git does
// not ignore yet to .git/info/exclude (not .gitignore, which the agent
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
// and the test files of dir: it picks the files and refuses files git
// carries. It changes nothing on disk.
func PlanHoldout(dir string, a *Answers) error {
	a.Holdout, a.HoldoutVerify = nil, nil
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
	picked := PickHoldout(files, k)
	if err := CheckHoldoutUntracked(dir, picked); err != nil {
		return err
	}
	a.Holdout = picked
	a.HoldoutVerify = HoldoutVerify(dir, picked, append(append([]string{}, a.Verify...), a.ObjectiveVerify...))
	return nil
}
