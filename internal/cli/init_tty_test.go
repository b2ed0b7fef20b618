package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/spec"
)

// TestInitInteractiveTmux drives `looprinter init` in a real terminal (tmux)
// from the first question to the written file: the interview, the hidden
// command question, the summary, the confirmation.
// initTmux is `looprinter init` running in a tmux window, and the means to
// drive it.
type initTmux struct {
	work     string
	screen   func() string
	until    func(what string, ok func(string) bool)
	waitFor  func(want string)
	waitLine func(want string)
	keys     func(k ...string)
	text     func(s string)
}

// startInitTmux builds looprinter and starts `looprinter init` in a new tmux
// window the given number of columns wide, in a folder holding files.
func startInitTmux(t *testing.T, width int, files map[string]string) initTmux {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and drives tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required in CI (.ci/run installs it)")
		}
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "looprinter")
	testkit.GoBuild(t, bin, "../../cmd/looprinter")
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	testkit.WriteTree(t, work, files)
	session := "lpinit" + strings.ReplaceAll(filepath.Base(dir), ".", "")
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", session, "-x", fmt.Sprint(width), "-y", "50", "-c", work,
		"TERM=xterm-256color "+bin+" init; echo EXIT=$?; sleep 60")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })

	screen := func() string { return tmux("capture-pane", "-t", session, "-p") }
	// Every key is followed by a wait for what it shows: the form handles a
	// key only after the one before (a field's move to the next is a
	// message of its own), so a key sent on a timer alone can reach the
	// wrong field on a loaded machine. The focused field's lines start with
	// "┃ ".
	until := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // a guard against a hang only
		for {
			s := screen()
			if ok(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %s:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor := func(want string) {
		t.Helper()
		until(fmt.Sprintf("%q", want), func(s string) bool { return strings.Contains(s, want) })
	}
	// waitLine waits for a line that ends with want (the field's "┃ " and
	// text), nothing after it: what was typed is on a line of its own.
	waitLine := func(want string) {
		t.Helper()
		until(fmt.Sprintf("a line ending %q", want), func(s string) bool {
			for _, l := range strings.Split(s, "\n") {
				if strings.HasSuffix(strings.TrimRight(l, " "), want) {
					return true
				}
			}
			return false
		})
	}
	keys := func(k ...string) {
		t.Helper()
		tmux(append([]string{"send-keys", "-t", session}, k...)...)
	}
	text := func(s string) { t.Helper(); keys("-l", s) }
	return initTmux{work, screen, until, waitFor, waitLine, keys, text}
}

// TestInitTmuxWideScreens: in a window 120 columns wide each screen of the
// interview replaces the one before (no piece of the first screen is left
// on the second) and the help wraps at the window's width, not at 80.
func TestInitTmuxWideScreens(t *testing.T) {
	tt := startInitTmux(t, 120, nil)
	tt.waitFor("1/6 Objective")
	tt.waitLine("┃ Key objective")
	s1 := tt.screen()
	tt.text("go test ./... passes")
	tt.waitLine("┃ > go test ./... passes")
	tt.keys("Enter")
	tt.waitLine("┃ Loop shape")
	tt.keys("Enter")
	tt.waitFor("┃ 2/6 Deliverables")
	// The screen is drawn in full once its last line, the key help, shows.
	tt.waitFor("enter next")
	s2 := tt.screen()
	for _, piece := range []string{"1/6 Objective", "verifier", "Key objective", "Loop shape", "ralph:", "go test ./... passes"} {
		if strings.Contains(s1, piece) && strings.Contains(s2, piece) {
			t.Errorf("a piece of the first screen, %q, is left on the second:\n%s", piece, s2)
		}
	}
	wide := false
	for _, l := range strings.Split(s2, "\n") {
		if strings.Contains(l, "Files, features, fixes") && utf8.RuneCountInString(strings.TrimRight(l, " ")) > 80 {
			wide = true
		}
	}
	if !wide {
		t.Errorf("the help of the second screen wraps at 80 columns in a window 120 wide:\n%s", s2)
	}
}

func TestInitInteractiveTmux(t *testing.T) {
	tt := startInitTmux(t, 120, nil)
	work, screen, waitFor, waitLine, keys, text := tt.work, tt.screen, tt.waitFor, tt.waitLine, tt.keys, tt.text

	waitFor("1/6 Objective")
	waitLine("┃ Key objective")
	text("go test ./... passes")
	waitLine("┃ > go test ./... passes")
	keys("Enter")
	waitLine("┃ Loop shape")
	keys("Down") // shape: ralph
	waitFor("┃ > ralph:")
	keys("Enter")
	waitFor("┃ 2/6 Deliverables")
	text("calc/calc.go fixed")
	waitLine("┃ calc/calc.go fixed")
	keys("C-j")
	text("notes in output/progress.txt")
	waitLine("┃ notes in output/progress.txt")
	keys("Enter")
	waitFor("┃ 3/6 Verification")
	text("go vet ./...")
	waitLine("┃ go vet ./...")
	keys("C-j")
	text("go test ./...")
	waitLine("┃ go test ./...")
	keys("Enter")
	waitFor("┃ Objective gate")
	keys("Enter") // objective_verify: none (ralph has no objective gate)
	waitFor("┃ Setup, run once")
	keys("Enter") // setup: none
	waitFor("┃ 4/6 Constraints")
	text("**/*_test.go")
	waitLine("┃ **/*_test.go")
	keys("Enter")
	waitFor("┃ Other constraints")
	keys("Enter") // no other constraints
	waitFor("┃ Sandbox: how agent runs are confined")
	waitLine("┃ > auto") // the default
	keys("Enter")
	waitFor("┃ Audit before DONE?")
	keys("Left") // yes
	keys("Enter")
	waitFor("┃ 5/6 Agent")
	if strings.Contains(screen(), "Agent command") {
		t.Fatalf("the command question shows before the command backend is chosen:\n%s", screen())
	}
	keys("Down", "Down", "Down") // command
	waitLine("┃ > command")
	keys("Enter") // the model question is not asked for the command backend
	waitLine("┃ Agent command")
	keys("Enter") // empty: refused
	waitFor("the command backend needs a program")
	text("./agent.sh --fast")
	waitLine("┃ > ./agent.sh --fast")
	keys("Enter")
	waitFor("6/6 Budgets")
	waitFor("┃ Iterations")
	keys("BSpace", "BSpace")
	text("7")
	waitLine("┃ > 7")
	for _, next := range []string{"┃ Cycles", "┃ Cost budget", "┃ Wall-clock budget", "┃ Stop when the same failure"} {
		keys("Enter")
		waitFor(next)
	}
	keys("Enter")
	waitFor("Write loop.yaml?")
	s := screen()
	for _, want := range []string{"Shape: ralph", "- **/*_test.go", "- go test -v ./...", "Agent: command, command ./agent.sh --fast", "Sandbox: auto", "Audit: on", "Budgets: 7 iterations"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "loop.yaml")); err == nil {
		t.Fatal("loop.yaml written before the confirmation")
	}
	keys("Enter")
	waitFor("EXIT=0")
	if !strings.Contains(screen(), "Wrote loop.yaml") {
		t.Fatalf("no 'Wrote':\n%s", screen())
	}

	l, err := spec.Load(filepath.Join(work, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Shape != "ralph" || l.Objective != "go test ./... passes" || l.Agent.Backend != "command" || l.Agent.Command != "./agent.sh --fast" ||
		l.Budget.Iterations != 7 || strings.Join(l.Verify, ";") != "go vet ./...;go test -v ./..." || strings.Join(l.Protect, ";") != "**/*_test.go" ||
		l.Vars["deliverables"] != "- calc/calc.go fixed\n- notes in output/progress.txt\n" || !l.Audit.On || l.Sandbox != "auto" {
		t.Fatalf("loaded %+v", l)
	}
	gi, _ := os.ReadFile(filepath.Join(work, ".gitignore"))
	if !strings.Contains(string(gi), "output/\nworking-records/\n") {
		t.Fatalf(".gitignore: %q", gi)
	}
}

// TestInitTmuxHoldout: in a project with tests the interview asks for a
// holdout share, and the loop file names the test files it set aside.
func TestInitTmuxHoldout(t *testing.T) {
	test := func(name string) string {
		return "package x\n\nimport \"testing\"\n\nfunc Test" + name + "(t *testing.T) {}\n"
	}
	tt := startInitTmux(t, 120, map[string]string{"go.mod": "module x\n", "x.go": "package x\n",
		"a_test.go": test("A"), "b_test.go": test("B"), "c_test.go": test("C")})
	tt.waitLine("┃ Key objective")
	tt.text("go test ./... passes")
	tt.waitLine("┃ > go test ./... passes")
	for _, next := range []string{"┃ Loop shape", "┃ 2/6 Deliverables", "┃ 3/6 Verification", "┃ Objective gate", "┃ Setup, run once", "┃ Holdout tests"} {
		tt.keys("Enter")
		tt.waitFor(next)
	}
	tt.waitFor("The project has 3 test files")
	tt.text("3")
	tt.keys("Enter")
	tt.waitFor("would set aside all 3 test files")
	tt.keys("BSpace")
	tt.text("1")
	tt.waitLine("┃ > 1")
	for _, next := range []string{"┃ 4/6 Constraints", "┃ Other constraints", "┃ Sandbox", "┃ Audit before DONE?", "┃ 5/6 Agent", "┃ Model", "┃ Iterations", "┃ Cycles", "┃ Cost budget", "┃ Wall-clock budget", "┃ Stop when the same failure", "Write loop.yaml?"} {
		tt.keys("Enter")
		tt.waitFor(next)
	}
	if s := tt.screen(); !strings.Contains(s, "Holdout tests (set aside: the agent never sees them):") || !strings.Contains(s, "- b_test.go") {
		t.Fatalf("the summary does not list the holdout file:\n%s", s)
	}
	tt.keys("Enter")
	tt.waitFor("EXIT=0")
	l, err := spec.Load(filepath.Join(tt.work, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(l.Holdout, ";") != "b_test.go" || strings.Join(l.HoldoutVerify, ";") != "go test -v -run '^(TestB)$' ." {
		t.Fatalf("holdout %q, holdout_verify %q", l.Holdout, l.HoldoutVerify)
	}
}
