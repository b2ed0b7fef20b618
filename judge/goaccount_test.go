package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// The clean room's Go accounting: a run whose printout says a package
// passed stands only when the engine's test main placed in that package
// reported, after the tests, a zero code through the file the wrapper
// made; a report printed by the check itself (without the wrapper's
// nonce) counts for nothing.
func TestCleanRoomGoAccounting(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: "off"})
	var notes []string
	j.AddNotVerified = func(s string) { notes = append(notes, s) }
	os.WriteFile(filepath.Join(j.Dir, "go.mod"), []byte("module example.com/add\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(j.Dir, "add_test.go"), []byte("package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"), 0o644)
	os.MkdirAll(filepath.Join(j.Dir, "own"), 0o755)
	os.WriteFile(filepath.Join(j.Dir, "own", "own_test.go"), []byte("package own\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) {}\n"), 0o644)
	j.SetAside = func() ([]string, error) { return nil, nil }
	j.StartFiles = func() []string { return []string{"add_test.go", "own/own_test.go"} }
	ok := `printf 'ok  \texample.com/add\t0.01s\n'`
	placed := `grep -q 'm.Run()' zz_looprinter_main_test.go && ! test -e own/zz_looprinter_main_test.go && `
	honest := placed + `echo "0 ." >> "$LOOPRINTER_GO_ACCOUNT" && ` + ok
	rec, signal := j.JudgeCleanRoom(context.Background(), "objective", []string{honest})
	if !rec.Pass {
		t.Fatalf("an accounted pass failed the clean room: %s", signal)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "own has a TestMain of its own") {
		t.Errorf("NOT VERIFIED notes %q", notes)
	}
	for name, cmd := range map[string]string{
		"no report":     ok,
		"failed":        `echo "1 ." >> "$LOOPRINTER_GO_ACCOUNT"; ` + ok,
		"forged":        `echo "looprinter-account 0123 0 ."; ` + ok,
		"json":          `printf '{"Action":"pass","Package":"example.com/add"}\n'`,
		"failed, quiet": `echo "2 ." >> "$LOOPRINTER_GO_ACCOUNT"`,
	} {
		rec, signal := j.JudgeCleanRoom(context.Background(), "objective", []string{cmd})
		if rec.Pass || !strings.Contains(signal, "the run's printout says") {
			t.Errorf("%s: pass %v, signal %q", name, rec.Pass, signal)
		}
	}
	// A package outside the module, or no claim at all: nothing to say.
	rec, signal = j.JudgeCleanRoom(context.Background(), "objective", []string{`printf 'ok  \tother.org/x\t0.01s\n'`})
	if !rec.Pass {
		t.Errorf("a package the tree does not hold failed: %s", signal)
	}
}

// The engine's test main is valid Go that reports after m.Run.
func TestGoAccountSource(t *testing.T) {
	src, err := goAccountSource("add_test", "sub/dir")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i, k := strings.Index(s, "m.Run()"), strings.Index(s, `"sub/dir"`)
	if i < 0 || k < i || !strings.Contains(s, "package add_test") || !strings.Contains(s, goAccountEnv) {
		t.Fatalf("source:\n%s", s)
	}
}
