package initwiz

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

func TestIsExistenceCheck(t *testing.T) {
	for cmd, want := range map[string]bool{
		"test -f out.txt":                 true,
		"test -e a && test -s b":          true,
		"[ -e out/x ]":                    true,
		"[[ -f x ]]":                      true,
		"ls docs/":                        true,
		"ls":                              true,
		"! test -f bad.txt":               true,
		"stat out.bin":                    true,
		"go test ./...":                   false,
		"test -f out.txt && go vet ./...": false,
		"grep -q done out.txt":            false,
		"lsof -i :8080":                   false,
		"test $(wc -l < out.txt) -gt 3":   false,
		"./scripts/objective.sh":          false,
		"":                                false,
	} {
		if got := IsExistenceCheck(cmd); got != want {
			t.Errorf("IsExistenceCheck(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestVagueWords(t *testing.T) {
	for obj, want := range map[string][]string{
		"make the code better":                          {"better"},
		"a nice, clean and robust CLI":                  {"nice", "clean", "robust"},
		"handle errors properly":                        nil, // "errors" is measurable
		"the parser works properly":                     {"properly"},
		"go test ./... passes":                          nil,
		"make the code cleaner so that all tests pass":  nil,
		"p95 latency under 200ms":                       nil,
		"Add a --json flag to the list command":         nil,
		"Good documentation":                            {"Good"},
		"improve the README":                            {"improve"},
		"the importer handles 3 formats well":           nil,
		"a well-written, readable and maintainable API": {"well", "readable", "maintainable"},
	} {
		if got := VagueWords(obj); !reflect.DeepEqual(got, want) {
			t.Errorf("VagueWords(%q) = %q, want %q", obj, got, want)
		}
	}
}

func TestWeaknesses(t *testing.T) {
	has := func(ws []string, sub string) bool {
		for _, w := range ws {
			if strings.Contains(w, sub) {
				return true
			}
		}
		return false
	}
	a := Defaults()
	a.Objective = "go test ./... passes"
	if w := a.Weaknesses(); !has(w, "no checks") {
		t.Errorf("no checks not warned: %q", w)
	}
	a.Verify = []string{"test -f x"}
	a.ObjectiveVerify = []string{"ls y"}
	if w := a.Weaknesses(); !has(w, "only file-existence checks") || has(w, "no checks") {
		t.Errorf("existence only: %q", w)
	}
	a.Verify = append(a.Verify, "go test ./...")
	if w := a.Weaknesses(); len(w) != 0 {
		t.Errorf("strong setup warned: %q", w)
	}
	a.Objective = "the code is clean"
	if w := a.Weaknesses(); !has(w, `the word "clean" is vague`) {
		t.Errorf("vague objective: %q", w)
	}
	// ralph has no objective gate: no warning about one.
	r := Defaults()
	r.Shape, r.Objective, r.Verify = spec.ShapeRalph, "go test ./... passes", []string{"go test ./..."}
	if w := r.Weaknesses(); len(w) != 0 {
		t.Errorf("ralph warned: %q", w)
	}
}

// Every valid set of answers renders to a file that loads and says the same.
func TestRenderLoads(t *testing.T) {
	cases := map[string]Answers{}
	a := Defaults()
	a.Objective = `say "hi": #1 {{.X}} 'q' \ end`
	a.Deliverables = []string{"a: b # c", "'quoted' \"x\"", "{{.Objective}}"}
	a.Setup = []string{"go mod download"}
	a.Verify = []string{"go test ./...", `grep -q "ok: yes" out.txt`}
	a.ObjectiveVerify = []string{"./scripts/objective.sh --strict"}
	a.Protect = []string{"**/*_test.go", "go.mod"}
	a.Constraints = []string{"no new dependencies", "- keep the API"}
	a.Model = "claude-opus-4-1"
	cases["cycle, everything"] = a
	r := Defaults()
	r.Shape, r.Objective, r.Verify = spec.ShapeRalph, "lint passes", []string{"make lint"}
	r.Backend, r.Command = "command", "./agent.sh --fast"
	r.Iterations, r.CostUSD, r.Wall, r.SameFailure = 3, 0.5, "90m", 2
	cases["ralph, command backend"] = r
	v := Defaults()
	v.Shape, v.Backend, v.Model = spec.ShapeReview, "codex", "gpt-5"
	cases["review"] = v
	m := Defaults()
	m.Objective = "true"
	m.Model = "yes"
	cases["yaml-looking values"] = m

	for name, a := range cases {
		a.Clean()
		if ms := a.Check(); len(ms) > 0 {
			t.Fatalf("%s: answers rejected: %v", name, ms)
		}
		data := Render(a)
		l, err := spec.Parse(data, filepath.Join(t.TempDir(), "loop.yaml"))
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, data)
			continue
		}
		if l.Objective != a.Objective || l.Shape != a.Shape || l.Agent.Backend != a.Backend || l.Agent.Model != a.Model || l.Agent.Command != a.Command {
			t.Errorf("%s: loaded %q %q %q %q %q", name, l.Objective, l.Shape, l.Agent.Backend, l.Agent.Model, l.Agent.Command)
		}
		if !reflect.DeepEqual(nilIfEmpty(l.Verify), a.Verify) || !reflect.DeepEqual(nilIfEmpty(l.Protect), a.Protect) || !reflect.DeepEqual(nilIfEmpty(l.Setup), a.Setup) {
			t.Errorf("%s: lists %q %q %q", name, l.Verify, l.Protect, l.Setup)
		}
		if a.Shape == spec.ShapeCycle && !reflect.DeepEqual(nilIfEmpty(l.ObjectiveVerify), a.ObjectiveVerify) {
			t.Errorf("%s: objective_verify %q", name, l.ObjectiveVerify)
		}
		if l.Budget.Iterations != a.Iterations || l.Budget.Cycles != a.Cycles || l.Budget.CostUSD != a.CostUSD || l.Budget.SameFailure != a.SameFailure || l.Budget.Wall.String() != mustDur(t, a.Wall) {
			t.Errorf("%s: budget %+v", name, l.Budget)
		}
		if len(a.Deliverables) > 0 {
			for _, d := range a.Deliverables {
				if !strings.Contains(l.Vars["deliverables"], "- "+d+"\n") {
					t.Errorf("%s: deliverable %q lost: %q", name, d, l.Vars["deliverables"])
				}
			}
		}
		// Every non-empty line that sets a field of the loop is explained:
		// a comment on it or on the lines just before.
		lines := strings.Split(string(data), "\n")
		for i, line := range lines {
			if line == "" || strings.HasPrefix(strings.TrimSpace(line), "#") || strings.HasPrefix(strings.TrimSpace(line), "-") || strings.HasPrefix(line, "    ") {
				continue
			}
			if strings.Contains(line, "#") || (i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#")) || isParentOfCommented(lines, i) {
				continue
			}
			t.Errorf("%s: line %d has no comment: %q", name, i+1, line)
		}
	}
}

// isParentOfCommented: "agent:" and "budget:" are explained by the comment
// above them, "version: 1" is self-explanatory.
func isParentOfCommented(lines []string, i int) bool {
	return strings.TrimSpace(lines[i]) == "version: 1"
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func mustDur(t *testing.T, s string) string {
	l, err := spec.Parse([]byte("objective: x\nbudget: {wall: "+s+"}\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return l.Budget.Wall.String()
}

func TestWriteRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "loop.yaml")
	os.WriteFile(path, []byte("objective: mine\n"), 0o644)
	a := Defaults()
	a.Objective = "go test ./... passes"
	if _, err := Write(path, a, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("overwrote without --force: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "objective: mine\n" {
		t.Fatalf("file changed: %q", b)
	}
	if _, err := Write(path, a, true); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Load(path); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateGitignore(t *testing.T) {
	// A folder with Node, Python and Rust projects gets each one's build
	// output; a Python project alone gets no node_modules/.
	py := t.TempDir()
	os.WriteFile(filepath.Join(py, "pyproject.toml"), nil, 0o644)
	if added, err := UpdateGitignore(py); err != nil || !reflect.DeepEqual(added, []string{"output/", "working-records/", "__pycache__/", ".pytest_cache/"}) {
		t.Fatalf("python: %v %v", added, err)
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "setup.py", "Cargo.toml"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	added, err := UpdateGitignore(dir)
	if err != nil || !reflect.DeepEqual(added, []string{"output/", "working-records/", "node_modules/", "__pycache__/", ".pytest_cache/", "target/"}) {
		t.Fatalf("%v %v", added, err)
	}
	added, err = UpdateGitignore(dir)
	if err != nil || added != nil {
		t.Fatalf("second run added %v %v", added, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if strings.Count(string(b), "output/") != 1 {
		t.Fatalf("duplicate lines:\n%s", b)
	}
	// An existing file without a final newline, one entry already there.
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules\nworking-records"), 0o644)
	added, _ = UpdateGitignore(dir)
	b, _ = os.ReadFile(filepath.Join(dir, ".gitignore"))
	if !reflect.DeepEqual(added, []string{"output/", "__pycache__/", ".pytest_cache/", "target/"}) || string(b) != "node_modules\nworking-records\n# looprinter: the loop's outputs and records\noutput/\n# build output, kept out of the loop's commits\n__pycache__/\n.pytest_cache/\ntarget/\n" {
		t.Fatalf("added %v:\n%q", added, b)
	}
}

func TestCheckNamesFlags(t *testing.T) {
	a := Answers{Shape: "loop", Backend: "command", Wall: "x"}
	var flags []string
	for _, m := range a.Check() {
		flags = append(flags, strings.Fields(m.Flag)[0])
	}
	want := []string{"--shape", "--objective", "--command", "--iterations", "--cycles", "--cost", "--wall", "--same-failure"}
	if !reflect.DeepEqual(flags, want) {
		t.Fatalf("flags %v, want %v", flags, want)
	}
}

// A command agent gets no model: init neither asks for one nor writes the
// commented model line.
func TestNoModelForACommandAgent(t *testing.T) {
	if ModelApplies("command") || !ModelApplies("claude") {
		t.Fatal("ModelApplies")
	}
	v := &formValues{backend: "command", model: "sonnet", command: "./a.sh", shape: "cycle", objective: "x", iterations: "1", cycles: "1", cost: "1", wall: "1h", sameFail: "2"}
	if a := v.answers(); a.Model != "" || a.Command != "./a.sh" {
		t.Fatalf("%+v", a)
	}
	a := Defaults()
	a.Objective, a.Backend, a.Command, a.Verify = "x works", "command", "./a.sh", []string{"true"}
	dir := t.TempDir()
	if _, err := Write(filepath.Join(dir, "loop.yaml"), a, false); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "loop.yaml"))
	if strings.Contains(string(b), "model:") {
		t.Fatalf("a command loop mentions a model:\n%s", b)
	}
}
