package judge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// The runner's own accounting, not its printout. In the clean room and
// the holdout, every Go package that holds a test file of the loop's (as
// it started) or of the holdout gets an engine-written test main placed
// in the checks' view (goAccountFile): it runs the package's tests
// (m.Run) and only then appends "CODE DIR" to the file
// $LOOPRINTER_GO_ACCOUNT names. The judge runs each check in a wrapper
// that makes that file (a fresh name in the box's temporary folder),
// and after the check ends prints each line of it prefixed with a nonce
// that is new for each run and that no file and no environment holds
// (only the wrapper's own command line). A passing run whose printout
// says a package passed (`ok PKG`, a package's `pass` event of go test
// -json) while the package's test main never reported, or reported a
// failure, FAILS: its tests never ran to their end, and what printed the
// pass was code of the package (an init function that prints a passing
// run and exits before any test runs).
//
// What it cannot see: code of the agent runs in the same process as the
// test main, after it too: code written against this very mechanism can
// append a line to the file the environment names, or read the wrapper's
// command line from /proc, and forge it (the tells watch for such reads).
// A package with a TestMain of its own cannot get the engine's: its runs
// are not accounted (NOT VERIFIED says so). A package whose import path
// is not under the tree's go.mod module is not mapped to its folder.

const (
	goAccountEnv  = "LOOPRINTER_GO_ACCOUNT"
	goAccountFile = "zz_looprinter_main_test.go"
	goAccountTag  = "looprinter-account"
	forgedRunHead = "the run's printout says"
)

// goAccount is one clean room's or holdout's Go accounting.
type goAccount struct {
	nonce  string
	put    []sandbox.ViewFile
	dirs   map[string]bool // folders (slash-separated, relative) with the engine's test main
	own    []string        // folders whose own TestMain keeps the engine's out
	module string          // the tree's go.mod module path ("" when none)
	tmp    string          // where the generated files are kept (removed by done)
}

// goAccountCtx carries a goAccount to the checks of a CheckRequest.
type goAccountCtx struct{}

// newGoAccount prepares the accounting of the Go test folders of files
// (paths relative to the loop folder): nil when none holds a Go test.
func (j *Judge) newGoAccount(files []string) *goAccount {
	dirs := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") && path.Base(f) != goAccountFile {
			d := path.Dir(filepath.ToSlash(f))
			dirs[d] = append(dirs[d], f)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	base := ""
	if p := loopdir.PrivateOf(j.Dir); dirExists(string(p)) {
		base = p.CheckScratch()
		os.MkdirAll(base, 0o700)
	}
	tmp, err := os.MkdirTemp(base, "looprinter-goaccount-")
	if err != nil {
		return nil
	}
	a := &goAccount{nonce: newNonce(), dirs: map[string]bool{}, tmp: tmp, module: goModule(j.Dir)}
	keys := make([]string, 0, len(dirs))
	for d := range dirs {
		keys = append(keys, d)
	}
	sort.Strings(keys)
	for i, d := range keys {
		pkg, own := goTestPackage(filepath.Join(j.Dir, filepath.FromSlash(d)))
		if own {
			a.own = append(a.own, d)
			continue
		}
		if pkg == "" {
			continue
		}
		src, err := goAccountSource(pkg, d)
		if err != nil {
			continue
		}
		from := filepath.Join(tmp, strconv.Itoa(i)+".go")
		if os.WriteFile(from, src, 0o644) != nil {
			continue
		}
		a.put = append(a.put, sandbox.ViewFile{From: from, To: path.Join(d, goAccountFile), Mode: 0o644})
		a.dirs[d] = true
	}
	return a
}

// done removes the generated files.
func (a *goAccount) done() {
	if a != nil {
		os.RemoveAll(a.tmp)
	}
}

// with is ctx carrying a for the checks' wrapper, and put with its files.
func (a *goAccount) with(ctx context.Context, put []sandbox.ViewFile) (context.Context, []sandbox.ViewFile) {
	if a == nil || len(a.dirs) == 0 {
		return ctx, put
	}
	return context.WithValue(ctx, goAccountCtx{}, a), append(append([]sandbox.ViewFile{}, put...), a.put...)
}

// accountedStarter wraps start so that each check's shell line runs in the
// accounting's wrapper, when ctx carries one.
func accountedStarter(ctx context.Context, start Starter) Starter {
	a, _ := ctx.Value(goAccountCtx{}).(*goAccount)
	if a == nil {
		return start
	}
	return func(ctx context.Context, dir, line string, env []string) (*exec.Cmd, func(), error) {
		return start(ctx, dir, a.wrap(line), env)
	}
}

// accountedLine is line wrapped for the Go accounting of ctx (see
// accountedStarter), line itself without one.
func accountedLine(ctx context.Context, line string) string {
	if a, _ := ctx.Value(goAccountCtx{}).(*goAccount); a != nil {
		return a.wrap(line)
	}
	return line
}

// wrap is line run with the accounting file made before and printed,
// each line under the nonce, after it; the line's exit status is kept.
func (a *goAccount) wrap(line string) string {
	return fmt.Sprintf(`__lpa=$(mktemp "${TMPDIR:-/tmp}/looprinter-account.XXXXXXXX" 2>/dev/null) || __lpa=
if [ -n "$__lpa" ]; then export %s="$__lpa"; fi
(
%s
)
__lps=$?
if [ -n "$__lpa" ]; then while IFS= read -r __lpl; do printf '%s %s %%s\n' "$__lpl"; done < "$__lpa"; rm -f "$__lpa"; else printf '%s %s nofile\n'; fi
exit $__lps`, goAccountEnv, line, goAccountTag, a.nonce, goAccountTag, a.nonce)
}

// goAccountSource is the engine's test main for package pkg in folder dir.
func goAccountSource(pkg, dir string) ([]byte, error) {
	src := fmt.Sprintf(`// Code generated by looprinter for the clean room's accounting. DO NOT EDIT.

package %s

import (
	looprinterOS "os"
	looprinterTesting "testing"
)

func TestMain(m *looprinterTesting.M) {
	code := m.Run()
	if p := looprinterOS.Getenv(%q); p != "" {
		if f, err := looprinterOS.OpenFile(p, looprinterOS.O_WRONLY|looprinterOS.O_APPEND|looprinterOS.O_CREATE, 0o600); err == nil {
			f.WriteString(%q)
			f.Close()
		}
	}
	looprinterOS.Exit(code)
}
`, pkg, goAccountEnv, "")
	// The line written: the code, then the folder (a constant).
	src = strings.Replace(src, `f.WriteString("")`, fmt.Sprintf(`f.WriteString(looprinterItoa(code) + " " + %q + "\n")`, dir), 1)
	src += `
func looprinterItoa(n int) string {
	if n < 0 {
		return "-" + looprinterItoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return looprinterItoa(n/10) + string(rune('0'+n%10))
}
`
	return format.Source([]byte(src))
}

// goTestPackage is the package name of dir's test files (the first one's,
// in name order) and whether one of them declares a TestMain.
func goTestPackage(dir string) (pkg string, own bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, "_test.go") || n == goAccountFile {
			continue
		}
		src, err := readHead(filepath.Join(dir, n), maxGoLog)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, src, parser.SkipObjectResolution)
		if err != nil {
			// Unreadable: the runner fails on it anyway; never place a
			// second TestMain beside one the parser did not see.
			own = own || bytes.Contains(src, []byte("TestMain"))
			continue
		}
		if pkg == "" {
			pkg = f.Name.Name
		}
		own = own || declaresFunc(f, "TestMain")
	}
	return pkg, own
}

// declaresFunc says whether f declares the function name (no method).
func declaresFunc(f *ast.File, name string) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return true
		}
	}
	return false
}

// declaresInit says whether Go source runs code at initialisation: an
// init function, or a package variable whose value calls a function.
func declaresInit(src []byte) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		return bytes.Contains(src, []byte("func init("))
	}
	if declaresFunc(f, "init") {
		return true
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		calls := false
		ast.Inspect(gd, func(n ast.Node) bool {
			if _, ok := n.(*ast.CallExpr); ok {
				calls = true
			}
			return !calls
		})
		if calls {
			return true
		}
	}
	return false
}

// goModule is the module path of the tree's go.mod ("" when none).
func goModule(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`+"`")
		}
	}
	return ""
}

func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// goOK is a package go test printed as passing: `ok  \tPKG\t…`.
var goOK = regexp.MustCompile(`^ok\s+(\S+)`)

// claims are the folders whose packages the printout says passed.
func (a *goAccount) claims(out []byte) []string {
	var pkgs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if m := goOK.FindSubmatch(line); m != nil {
			pkgs = append(pkgs, string(m[1]))
			continue
		}
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) && bytes.Contains(line, []byte(`"pass"`)) {
			var ev struct{ Action, Package, Test string }
			if json.Unmarshal(line, &ev) == nil && ev.Action == "pass" && ev.Test == "" && ev.Package != "" {
				pkgs = append(pkgs, ev.Package)
			}
		}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		d, ok := a.dirOf(p)
		if ok && a.dirs[d] && !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// dirOf is the folder of an import path under the tree's module.
func (a *goAccount) dirOf(pkg string) (string, bool) {
	switch {
	case a.module == "":
		return "", false
	case pkg == a.module:
		return ".", true
	case strings.HasPrefix(pkg, a.module+"/"):
		return strings.TrimPrefix(pkg, a.module+"/"), true
	}
	return "", false
}

// records are the test mains' reports in out, under the nonce: folder →
// the codes m.Run returned; nofile says the wrapper could not make the
// accounting file.
func (a *goAccount) records(out []byte) (codes map[string][]int, nofile bool) {
	codes = map[string][]int{}
	head := goAccountTag + " " + a.nonce + " "
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, head)
		if !ok {
			continue
		}
		if rest == "nofile" {
			nofile = true
			continue
		}
		c, d, ok := strings.Cut(rest, " ")
		n, err := strconv.Atoi(c)
		if !ok || err != nil {
			continue
		}
		codes[d] = append(codes[d], n)
	}
	return codes, nofile
}

// judgeGo fails each passing check of results whose printout says a
// package passed that the package's test main did not account for.
func (j *Judge) judgeGo(a *goAccount, results []CheckResult) {
	if a == nil {
		return
	}
	for _, d := range a.own {
		j.addNotVerified(fmt.Sprintf("Go accounting: %s has a TestMain of its own, so the engine's cannot run there: a pass of its tests is the printout's word only", d))
	}
	if len(a.dirs) == 0 {
		return
	}
	for i := range results {
		r := &results[i]
		if !r.Pass || r.Output == "" {
			continue
		}
		out, err := readHead(r.Output, maxGoLog)
		if err != nil {
			continue
		}
		claims := a.claims(out)
		codes, nofile := a.records(out)
		if nofile {
			j.addNotVerified(fmt.Sprintf("Go accounting: `%s` ran where no file could be made for it: its Go passes are the printout's word only", r.Command))
			continue
		}
		var why []string
		for _, d := range claims {
			switch cs := codes[d]; {
			case len(cs) == 0:
				why = append(why, fmt.Sprintf("package %s (%s) passed, but its tests never ran to their end: the engine's test main there never reported. The pass was printed by code of the package, which ended the run before its tests (look at the code it runs at initialisation: %s)", d, a.pkgName(d), strings.Join(initFiles(j.Dir, d), ", ")))
			case nonZero(cs):
				why = append(why, fmt.Sprintf("package %s (%s) passed, but its tests failed (the testing package returned %d): the pass was printed by code under test", d, a.pkgName(d), firstNonZero(cs)))
			}
		}
		for d, cs := range codes {
			if a.dirs[d] && nonZero(cs) && !containsStr(claims, d) {
				why = append(why, fmt.Sprintf("the check passed, but the tests of package %s failed (the testing package returned %d)", d, firstNonZero(cs)))
			}
		}
		if len(why) == 0 {
			continue
		}
		sort.Strings(why)
		head := forgedRunHead + " " + strings.Join(why, "; ")
		r.Pass, r.Check.Pass = false, false
		r.Lines = append([]string{head}, r.Lines...)
		r.Signal = strings.TrimSpace(head + "\n" + r.Signal)
	}
}

func (a *goAccount) pkgName(d string) string {
	if d == "." {
		return a.module
	}
	return a.module + "/" + d
}

// initFiles are the Go files of folder d (not test files) that run code
// at initialisation: where a run that ends before its tests starts.
func initFiles(root, d string) []string {
	dir := filepath.Join(root, filepath.FromSlash(d))
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := readHead(filepath.Join(dir, n), maxGoLog)
		if err == nil && declaresInit(src) {
			out = append(out, path.Join(d, n))
		}
	}
	if len(out) == 0 {
		return []string{"none found in the package's own files"}
	}
	return out
}

func nonZero(cs []int) bool { return firstNonZero(cs) != 0 }

func firstNonZero(cs []int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// startFiles are the files the loop started with (none when unknown).
func (j *Judge) startFiles() []string {
	if j.StartFiles == nil {
		return nil
	}
	return j.StartFiles()
}
