package judge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/testcount"
)

// The clean room's Go accounting, piece by piece: what each part reads,
// and what a run that forges a pass (printed by code of the package, or by
// the check itself) looks like next to an honest one.

func pinWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The folder of an import path: under the tree's module only, the module
// itself is ".", a sibling module sharing its prefix is not under it.
func TestPinGoAccountDirOf(t *testing.T) {
	a := &goAccount{module: "example.com/add"}
	for _, c := range []struct {
		pkg, dir string
		ok       bool
	}{
		{"example.com/add", ".", true},
		{"example.com/add/sub/x", "sub/x", true},
		{"example.com/addx", "", false},
		{"example.com/addx/sub", "", false},
		{"other.org/add", "", false},
	} {
		d, ok := a.dirOf(c.pkg)
		if d != c.dir || ok != c.ok {
			t.Errorf("dirOf(%q) = %q, %v; want %q, %v", c.pkg, d, ok, c.dir, c.ok)
		}
	}
	if d, ok := (&goAccount{}).dirOf("example.com/add"); ok || d != "" {
		t.Errorf("no module: dirOf = %q, %v", d, ok)
	}
	if got := a.pkgName("."); got != "example.com/add" {
		t.Errorf("pkgName(.) = %q", got)
	}
	if got := a.pkgName("sub/x"); got != "example.com/add/sub/x" {
		t.Errorf("pkgName(sub/x) = %q", got)
	}
}

// The passes a printout claims: `ok PKG` lines and a package's pass event
// of go test -json (not a test's), each folder once, only folders the
// engine placed its test main in.
func TestPinGoAccountClaims(t *testing.T) {
	a := &goAccount{module: "example.com/add", dirs: map[string]bool{".": true, "sub": true}}
	out := strings.Join([]string{
		"ok  \texample.com/add\t0.01s",
		"ok  \texample.com/add\t(cached)",
		`{"Action":"pass","Package":"example.com/add/sub","Test":"TestX"}`,
		`{"Action":"fail","Package":"example.com/add/sub"}`,
		`{"Action":"pass","Package":""}`,
		"ok  \texample.com/add/other\t0.01s",
		"ok  \tother.org/x\t0.01s",
		"--- PASS: TestAdd (0.00s)",
		"  ok example.com/add/sub",
		"",
	}, "\n")
	if got := a.claims([]byte(out)); !reflect.DeepEqual(got, []string{"."}) {
		t.Errorf("claims = %q, want [.]", got)
	}
	ev := `  {"Action":"pass","Package":"example.com/add/sub"}` + "\n" + `{"Action":"pass","Package":"example.com/add/sub","Elapsed":0.1}`
	if got := a.claims([]byte(ev)); !reflect.DeepEqual(got, []string{"sub"}) {
		t.Errorf("json claims = %q, want [sub]", got)
	}
	if got := a.claims([]byte(`{"Action":"passed","Package":"example.com/add/sub"} "pass"`)); len(got) != 0 {
		t.Errorf("an action that is not pass claimed %q", got)
	}
}

// The test mains' reports: only lines under this run's nonce count; a
// report with no code or a code that is not a number counts for nothing.
func TestPinGoAccountRecords(t *testing.T) {
	a := &goAccount{nonce: "n0"}
	out := strings.Join([]string{
		"looprinter-account n0 0 .",
		"looprinter-account n0 1 sub/dir",
		"looprinter-account n0 0 sub/dir",
		"looprinter-account n1 0 forged",
		"echo looprinter-account n0 0 prefixed",
		"looprinter-account n0 x bad",
		"looprinter-account n0 7",
		"looprinter-account n0 -2 neg",
	}, "\n")
	codes, nofile := a.records([]byte(out))
	want := map[string][]int{".": {0}, "sub/dir": {1, 0}, "neg": {-2}}
	if nofile || !reflect.DeepEqual(codes, want) {
		t.Errorf("records = %v, %v; want %v, false", codes, nofile, want)
	}
	if _, nofile := a.records([]byte("looprinter-account n0 nofile\n")); !nofile {
		t.Error("the wrapper's nofile report was not read")
	}
	if _, nofile := a.records([]byte("looprinter-account n9 nofile\n")); nofile {
		t.Error("another nonce's nofile was read")
	}
	if !nonZero([]int{0, 0, 3}) || nonZero([]int{0, 0}) || nonZero(nil) || firstNonZero([]int{0, -1, 2}) != -1 {
		t.Error("nonZero / firstNonZero")
	}
}

// The wrapper, run by a shell: the line's exit status is kept, each line
// the test mains appended is printed under the nonce after the line ran,
// and a box where no file can be made says so.
func TestPinGoAccountWrap(t *testing.T) {
	a := &goAccount{nonce: "abc"}
	tmp := t.TempDir()
	line := `echo "0 ." >> "$` + goAccountEnv + `"; echo "1 sub" >> "$` + goAccountEnv + `"; echo ran; exit 3`
	cmd := exec.Command("/bin/sh", "-c", a.wrap(line))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.Output()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3: %s", err, out)
	}
	if want := "ran\nlooprinter-account abc 0 .\nlooprinter-account abc 1 sub\n"; string(out) != want {
		t.Errorf("printout %q, want %q", out, want)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("the accounting file was left: %v", ents)
	}
	cmd = exec.Command("/bin/sh", "-c", a.wrap(`test -z "$`+goAccountEnv+`"`))
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(tmp, "missing"))
	out, err = cmd.Output()
	if err != nil || string(out) != "looprinter-account abc nofile\n" {
		t.Errorf("no file: %v %q", err, out)
	}
	ctx := context.Background()
	if got := accountedLine(ctx, "go test ./..."); got != "go test ./..." {
		t.Errorf("a line without accounting changed: %q", got)
	}
	actx := context.WithValue(ctx, goAccountCtx{}, a)
	if got := accountedLine(actx, "go test ./..."); got != a.wrap("go test ./...") {
		t.Errorf("accountedLine = %q", got)
	}
	var lines []string
	start := func(ctx context.Context, dir, line string, env []string) (*exec.Cmd, func(), error) {
		lines = append(lines, line)
		return nil, nil, nil
	}
	accountedStarter(ctx, start)(ctx, "", "plain", nil)
	accountedStarter(actx, start)(actx, "", "wrapped", nil)
	if len(lines) != 2 || lines[0] != "plain" || lines[1] != a.wrap("wrapped") {
		t.Errorf("starter lines %q", lines)
	}
}

// with: the view gets the generated files only when a package is
// accounted, and the caller's list is not written over.
func TestPinGoAccountWith(t *testing.T) {
	ctx := context.Background()
	put := make([]sandbox.ViewFile, 1, 4)
	put[0] = sandbox.ViewFile{From: "x", To: "y"}
	var none *goAccount
	if c, p := none.with(ctx, put); c != ctx || len(p) != 1 {
		t.Errorf("nil account: %v %v", c, p)
	}
	empty := &goAccount{dirs: map[string]bool{}}
	if c, p := empty.with(ctx, put); c != ctx || len(p) != 1 {
		t.Errorf("account without folders: %v %v", c, p)
	}
	a := &goAccount{dirs: map[string]bool{".": true}, put: []sandbox.ViewFile{{From: "g", To: goAccountFile}}}
	c, p := a.with(ctx, put)
	if got, _ := c.Value(goAccountCtx{}).(*goAccount); got != a {
		t.Error("the context does not carry the account")
	}
	if len(p) != 2 || p[0].To != "y" || p[1].To != goAccountFile {
		t.Errorf("put %v", p)
	}
	if put[:2][1].To == goAccountFile {
		t.Error("the caller's list was written over")
	}
	none.done()
}

// The package of a folder's tests and whether one declares its own
// TestMain (then the engine's cannot be placed): the first test file in
// name order names it; the engine's own file, folders and non-test files
// are not read; a file the parser cannot read that mentions TestMain
// counts as declaring one.
func TestPinGoAccountTestPackage(t *testing.T) {
	dir := t.TempDir()
	pinWrite(t, filepath.Join(dir, "a.go"), "package impl\n")
	pinWrite(t, filepath.Join(dir, "b_test.go"), "package add_test\n\nfunc TestMainly() {}\n\nfunc (x T) TestMain() {}\n")
	pinWrite(t, filepath.Join(dir, "c_test.go"), "package add\n")
	pinWrite(t, filepath.Join(dir, goAccountFile), "package zz\n\nfunc TestMain() {}\n")
	os.MkdirAll(filepath.Join(dir, "d_test.go"), 0o755)
	if pkg, own := goTestPackage(dir); pkg != "add_test" || own {
		t.Errorf("goTestPackage = %q, %v; want add_test, false", pkg, own)
	}
	pinWrite(t, filepath.Join(dir, "e_test.go"), "package add\n\nfunc TestMain(m *testing.M) {}\n")
	if pkg, own := goTestPackage(dir); pkg != "add_test" || !own {
		t.Errorf("with a TestMain: %q, %v", pkg, own)
	}
	bad := t.TempDir()
	pinWrite(t, filepath.Join(bad, "a_test.go"), "package add\nfunc TestMain( {\n")
	if pkg, own := goTestPackage(bad); pkg != "" || !own {
		t.Errorf("unparsable with TestMain: %q, %v", pkg, own)
	}
	pinWrite(t, filepath.Join(bad, "a_test.go"), "package add\nfunc Test( {\n")
	pinWrite(t, filepath.Join(bad, "b_test.go"), "package add\n")
	if pkg, own := goTestPackage(bad); pkg != "add" || own {
		t.Errorf("unparsable without TestMain: %q, %v", pkg, own)
	}
	if pkg, own := goTestPackage(filepath.Join(bad, "missing")); pkg != "" || own {
		t.Errorf("no folder: %q, %v", pkg, own)
	}
}

// Code run at initialisation: an init function, a package variable whose
// value calls a function (a hostile package's way to print a pass and
// exit before any test); a constant or a plain value is not.
func TestPinGoAccountDeclaresInit(t *testing.T) {
	for src, want := range map[string]bool{
		"package a\nfunc init() {}\n": true,
		"package a\nimport \"os\"\nvar _ = exit()\nfunc exit() int { os.Exit(0); return 0 }\n": true,
		"package a\nvar x, y = 1, f()\n":                        true,
		"package a\nvar x = 1\nconst y = 2\nfunc f() { g() }\n": false,
		"package a\nfunc (T) init() {}\ntype T int\n":           false,
		"package a\nfunc init( {\n":                             true,
		"package a\nfunc start( {\n":                            false,
	} {
		if got := declaresInit([]byte(src)); got != want {
			t.Errorf("declaresInit(%q) = %v, want %v", src, got, want)
		}
	}
	root := t.TempDir()
	pinWrite(t, filepath.Join(root, "p", "a.go"), "package p\nfunc init() { println(\"ok\") }\n")
	pinWrite(t, filepath.Join(root, "p", "b.go"), "package p\nvar v = 1\n")
	pinWrite(t, filepath.Join(root, "p", "c_test.go"), "package p\nfunc init() {}\n")
	pinWrite(t, filepath.Join(root, "p", "d.go", "x.go"), "package x\nfunc init() {}\n")
	pinWrite(t, filepath.Join(root, "p", "e.txt"), "func init() {}\n")
	pinWrite(t, filepath.Join(root, "p", "f.go"), "package p\nvar w = g()\nfunc g() int { return 1 }\n")
	if got := initFiles(root, "p"); !reflect.DeepEqual(got, []string{"p/a.go", "p/f.go"}) {
		t.Errorf("initFiles = %q", got)
	}
	pinWrite(t, filepath.Join(root, "q", "b.go"), "package q\n")
	if got := initFiles(root, "q"); len(got) != 1 || !strings.Contains(got[0], "none found") {
		t.Errorf("initFiles without any = %q", got)
	}
}

// The module path of go.mod, quoted or not; none without go.mod or a
// module line.
func TestPinGoAccountModule(t *testing.T) {
	dir := t.TempDir()
	if got := goModule(dir); got != "" {
		t.Errorf("no go.mod: %q", got)
	}
	pinWrite(t, filepath.Join(dir, "go.mod"), "// module fake\nmodule\ngo 1.22\n")
	if got := goModule(dir); got != "" {
		t.Errorf("no module line: %q", got)
	}
	pinWrite(t, filepath.Join(dir, "go.mod"), "go 1.22\nmodule \"example.com/q\" // c\n")
	if got := goModule(dir); got != "example.com/q" {
		t.Errorf("quoted: %q", got)
	}
}

// newGoAccount places the engine's test main in each folder of a Go test
// file, sorted, except where a TestMain of the package's own keeps it out,
// where no package can be read, and never for its own file's name.
func TestPinGoAccountNew(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: "off"})
	if a := j.newGoAccount([]string{"a.go", "README.md", "sub/" + goAccountFile}); a != nil {
		t.Errorf("no Go test file, an account: %+v", a)
	}
	pinWrite(t, filepath.Join(j.Dir, "go.mod"), "module example.com/add\n")
	pinWrite(t, filepath.Join(j.Dir, "b", "b_test.go"), "package b\n")
	pinWrite(t, filepath.Join(j.Dir, "a", "a_test.go"), "package a_test\n")
	pinWrite(t, filepath.Join(j.Dir, "own", "own_test.go"), "package own\nfunc TestMain(m *M) {}\n")
	os.MkdirAll(filepath.Join(j.Dir, "gone"), 0o755)
	a := j.newGoAccount([]string{"b/b_test.go", "a/a_test.go", "own/own_test.go", "gone/g_test.go", "a/x_test.go"})
	if a == nil {
		t.Fatal("no account")
	}
	defer a.done()
	if a.module != "example.com/add" || len(a.nonce) != 32 {
		t.Errorf("module %q, nonce %q", a.module, a.nonce)
	}
	if !reflect.DeepEqual(a.dirs, map[string]bool{"a": true, "b": true}) || !reflect.DeepEqual(a.own, []string{"own"}) {
		t.Errorf("dirs %v, own %v", a.dirs, a.own)
	}
	if len(a.put) != 2 || a.put[0].To != "a/"+goAccountFile || a.put[1].To != "b/"+goAccountFile {
		t.Fatalf("put %+v", a.put)
	}
	for i, pkg := range []string{"package a_test", "package b"} {
		src, err := os.ReadFile(a.put[i].From)
		if err != nil || !strings.Contains(string(src), pkg+"\n") || !strings.Contains(string(src), "m.Run()") {
			t.Errorf("%s: %v\n%s", a.put[i].From, err, src)
		}
	}
	b := j.newGoAccount([]string{"a/a_test.go"})
	if b == nil || b.nonce == a.nonce {
		t.Error("two accounts share a nonce")
	}
	b.done()
	if _, err := os.Stat(b.tmp); !os.IsNotExist(err) {
		t.Errorf("done left %s", b.tmp)
	}
}

// judgeGo on results: an accounted pass stands; a claimed pass with no
// report, or with a failing one, fails the check naming the package and
// where its initialisation code is; a failing report the printout hides
// fails it too; a check that already failed, left no output, or ran
// where no file could be made is left alone (the last one noted).
func TestPinGoAccountJudge(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: "off"})
	var notes []string
	j.AddNotVerified = func(s string) { notes = append(notes, s) }
	pinWrite(t, filepath.Join(j.Dir, "go.mod"), "module example.com/add\n")
	pinWrite(t, filepath.Join(j.Dir, "hook.go"), "package add\nfunc init() {}\n")
	a := &goAccount{nonce: "n", module: "example.com/add", dirs: map[string]bool{".": true, "sub": true}, own: []string{"mine"}}
	out := t.TempDir()
	res := func(name, printout string, pass bool) CheckResult {
		p := filepath.Join(out, name)
		pinWrite(t, p, printout)
		return CheckResult{Check: record.Check{Command: name, Pass: pass, Output: p, Signal: "was"}, Lines: []string{"old"}}
	}
	okRoot, okSub := "ok  \texample.com/add\t0.1s\n", "ok  \texample.com/add/sub\t0.1s\n"
	rs := []CheckResult{
		res("honest", okRoot+okSub+"looprinter-account n 0 .\nlooprinter-account n 0 sub\n", true),
		res("unreported", okRoot+"looprinter-account n 0 sub\n", true),
		res("failed", okSub+"looprinter-account n 0 sub\nlooprinter-account n 2 sub\n", true),
		res("hidden", "looprinter-account n 1 sub\nlooprinter-account n 1 elsewhere\n", true),
		res("already failed", okRoot, false),
		res("nofile", okRoot+"looprinter-account n nofile\n", true),
		{Check: record.Check{Command: "no output", Pass: true}},
		{Check: record.Check{Command: "output gone", Pass: true, Output: filepath.Join(out, "missing")}},
	}
	j.judgeGo(a, rs)
	pass := map[string]bool{}
	for _, r := range rs {
		pass[r.Command] = r.Pass
		if r.Pass != r.Check.Pass {
			t.Errorf("%s: Pass and Check.Pass differ", r.Command)
		}
	}
	want := map[string]bool{"honest": true, "unreported": false, "failed": false, "hidden": false, "already failed": false, "nofile": true, "no output": true, "output gone": true}
	if !reflect.DeepEqual(pass, want) {
		t.Errorf("pass %v, want %v", pass, want)
	}
	if r := rs[1]; !strings.HasPrefix(r.Lines[0], forgedRunHead+" package . (example.com/add) passed, but its tests never ran to their end") ||
		!strings.Contains(r.Lines[0], "hook.go") || r.Lines[1] != "old" || !strings.HasPrefix(r.Signal, r.Lines[0]+"\n") || !strings.HasSuffix(r.Signal, "\nwas") {
		t.Errorf("unreported: %q %q", r.Lines, r.Signal)
	}
	if r := rs[2]; !strings.Contains(r.Lines[0], "package sub (example.com/add/sub) passed, but its tests failed (the testing package returned 2)") {
		t.Errorf("failed: %q", r.Lines)
	}
	if r := rs[3]; !strings.Contains(r.Lines[0], "the tests of package sub failed (the testing package returned 1)") || strings.Contains(r.Lines[0], "elsewhere") {
		t.Errorf("hidden: %q", r.Lines)
	}
	if r := rs[0]; len(r.Lines) != 1 || r.Signal != "was" {
		t.Errorf("honest changed: %q %q", r.Lines, r.Signal)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "mine has a TestMain of its own") || !strings.Contains(notes[1], "`nofile` ran where no file could be made") {
		t.Errorf("notes %q", notes)
	}
	// Several reasons in one check, sorted.
	two := []CheckResult{res("two", okRoot+okSub+"looprinter-account n 3 sub\n", true)}
	j.judgeGo(a, two)
	l := two[0].Lines[0]
	if i, k := strings.Index(l, "package . ("), strings.Index(l, "package sub ("); i < 0 || k < i || !strings.Contains(l, "; ") {
		t.Errorf("two reasons: %q", l)
	}
	// Without folders to account, only the own-TestMain notes.
	notes = nil
	only := []CheckResult{res("only", okRoot, true)}
	j.judgeGo(&goAccount{module: "example.com/add", dirs: map[string]bool{}, own: []string{"x"}}, only)
	j.judgeGo(nil, only)
	if !only[0].Pass || len(notes) != 1 {
		t.Errorf("no folders: pass %v, notes %q", only[0].Pass, notes)
	}
}

// forgedGo: only a passing Go run with output is read; more than five
// unknown names are cut after the fifth; the known names are those of the
// start files and the holdout's test files, other files not read.
func TestPinGoAccountForgedNames(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: "off"})
	pinWrite(t, filepath.Join(j.Dir, "add_test.go"), "package add\nimport \"testing\"\nfunc TestAdd(t *testing.T) {}\n")
	pinWrite(t, filepath.Join(j.Dir, "hold_test.go"), "package add\nimport \"testing\"\nfunc TestHeld(t *testing.T) {}\n")
	pinWrite(t, filepath.Join(j.Dir, "notes.go"), "package add\nimport \"testing\"\nfunc TestNotATest(t *testing.T) {}\n")
	j.StartFiles = func() []string { return []string{"add_test.go", "notes.go"} }
	j.holdouts = []string{"hold_test.go"}
	if got := j.goTestNames(); !reflect.DeepEqual(got, map[string]bool{"TestAdd": true, "TestHeld": true}) {
		t.Errorf("goTestNames = %v", got)
	}
	out := t.TempDir()
	var forged strings.Builder
	for _, n := range []string{"TestAdd", "TestHeld", "TestA", "TestB", "TestC", "TestD", "TestE", "TestF", "TestNotATest"} {
		forged.WriteString("--- PASS: " + n + " (0.00s)\n")
	}
	p := filepath.Join(out, "forged")
	pinWrite(t, p, forged.String())
	goRun := func(pass bool, runner string) CheckResult {
		return CheckResult{Check: record.Check{Command: "go test", Pass: pass, Output: p}, Tests: testcount.Counts{Runner: runner}}
	}
	rs := []CheckResult{goRun(true, "go"), goRun(true, "pytest"), goRun(false, "go"), {Check: record.Check{Pass: true}, Tests: testcount.Counts{Runner: "go"}}}
	j.forgedGo(rs)
	if rs[0].Pass || !rs[1].Pass || rs[3].Pass != true {
		t.Fatalf("pass %v %v %v", rs[0].Pass, rs[1].Pass, rs[3].Pass)
	}
	l := rs[0].Lines[0]
	if !strings.HasPrefix(l, forgedGoHead) || !strings.Contains(l, "TestA") || !strings.Contains(l, "TestE") || strings.Contains(l, "TestF") ||
		!strings.Contains(l, "line 7 of its output") || !strings.Contains(l, "…") || strings.Contains(l, "TestAdd") || strings.Contains(l, "TestHeld") {
		t.Errorf("forged line %q", l)
	}
	if len(rs[2].Lines) != 0 {
		t.Errorf("a failed run was read: %q", rs[2].Lines)
	}
	j.StartFiles = nil
	j.holdouts = nil
	if got := j.goTestNames(); len(got) != 0 || j.startFiles() != nil {
		t.Errorf("without start files: %v", got)
	}
}

// A failing report of a package the printout does not claim fails the
// check even when the printout claims another package that passed.
func TestPinGoAccountHiddenBesideClaimed(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: "off"})
	a := &goAccount{nonce: "n", module: "example.com/add", dirs: map[string]bool{".": true, "sub": true}}
	p := filepath.Join(t.TempDir(), "out")
	pinWrite(t, p, "ok  \texample.com/add\t0.1s\nlooprinter-account n 0 .\nlooprinter-account n 1 sub\n")
	rs := []CheckResult{{Check: record.Check{Command: "go test ./... | grep -v FAIL", Pass: true, Output: p}}}
	j.judgeGo(a, rs)
	if rs[0].Pass || len(rs[0].Lines) == 0 || !strings.Contains(rs[0].Lines[0], "the tests of package sub failed (the testing package returned 1)") {
		t.Errorf("pass %v, lines %q", rs[0].Pass, rs[0].Lines)
	}
	if containsStr([]string{".", "sub"}, "x") || !containsStr([]string{".", "sub"}, "sub") {
		t.Error("containsStr")
	}
}
