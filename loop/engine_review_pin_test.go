package loop

// More engine tests through Run with the scripted fake agent (issue 18):
// the review's fix check, and loop-file edits during a
// run (kept when they weaken nothing, undone when they do).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

// A critical finding that comes back in a new form (same kind, same place)
// is RECURRING, and the next fixer is told to change the approach; after
// the last round a fresh reviewer checks only what was fixed, and its
// verdict closes the review DONE.
func TestEngineReviewRecurringThenFixCheck(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	for n, b := range map[string]string{".gitignore": "working-records/\nagent.txt\nloop.yaml\n", "check.sh": "sh -n hook.sh\n", "hook.sh": "#!/bin/sh\n", "README.md": "# hooks\n"} {
		os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644)
	}
	gitInit(t, dir)
	os.WriteFile(filepath.Join(dir, "hook.sh"), []byte("#!/bin/sh\ncase \"$1\" in --force) exit 1;; esac\n"), 0o644)
	files := map[string]string{
		"loop.yaml": `shape: review
sandbox: off
objective: "hooks must block every force push"
agent: {backend: command, command: AGENT, timeout: 30s}
review: {max_rounds: 2}
verify: ["sh check.sh"]
`,
		"agent.txt": `== reviewer
findings {"findings":[{"id":"F-1","severity":"critical","file":"hook.sh","line":10,"title":"force push with --force is not blocked","detail":"only one spelling is checked","kind":"bypass"},{"id":"F-2","severity":"major","file":"README.md","line":0,"title":"usage is not documented","detail":"no usage","kind":"docs"}]}
== reviewer
findings {"findings":[{"id":"F-1","severity":"critical","file":"hook.sh","line":14,"title":"force push with a +refspec is not blocked","detail":"git push origin +main forces","kind":"bypass"}]}
== reviewer
findings {"verdicts":[{"id":"F-1","status":"closed","detail":"unknown arguments now fail closed"}]}
== fixer
write hook.sh #!/bin/sh\ncase "$1" in --force|-f) exit 1;; esac
run git add hook.sh && git commit -qm "fix F-1: block --force"
write README.md # hooks\nusage: install hook.sh
run git add README.md && git commit -qm "docs: F-2"
== fixer
write hook.sh #!/bin/sh\n# FAIL-CLOSED: only plain pushes pass\nfor a; do case "$a" in -*|+*) exit 1;; esac; done
run git add hook.sh && git commit -qm "fix F-1: fail closed on unknown push arguments"
`,
	}
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{})
	if out.Reason != ReasonDone || out.ExitCode != 0 {
		t.Fatalf("outcome %s (exit %d): %s; want done", out.Reason, out.ExitCode, out.Summary)
	}
	var runs []string
	for _, e := range events(evs, record.AgentStart) {
		runs = append(runs, e.Phase+":"+e.Task)
	}
	if got := strings.Join(runs, " "); got != "reviewer:round-1 fixer:round-1 reviewer:round-2 fixer:round-2 reviewer:fixcheck" {
		t.Errorf("agent runs %s", got)
	}
	if p := promptOf(t, dir, 2); strings.Contains(p, "RECURRING") {
		t.Error("round 1's fixer prompt says RECURRING")
	}
	p4 := promptOf(t, dir, 4)
	for _, want := range []string{"RECURRING: the approach must change", `F-1 (critical, hook.sh:14, kind bypass): "force push with a +refspec is not blocked" came back after round 1's F-1`, "hooks must block every force push"} {
		if !strings.Contains(p4, want) {
			t.Errorf("round 2's fixer prompt lacks %q:\n%s", want, p4)
		}
	}
	p5 := promptOf(t, dir, 5)
	if !strings.Contains(p5, "Your job: fix verification") || !strings.Contains(p5, "## F-1 · critical · hook.sh:14") || strings.Contains(p5, "usage is not documented") {
		t.Errorf("fix check prompt: want only round 2's fixed F-1:\n%s", p5)
	}
	rep := readFile(t, filepath.Join(dir, loopdir.RecordsDir, "review-report.md"))
	for _, want := range []string{
		"| 1 | 1 | 1 | 0 | fix F-1: block --force; docs: F-2 | – | F-1 |",
		"| 2 | 1 | 0 | 0 | fix F-1: fail closed on unknown push arguments | F-1 (← r1 F-1) | see fix check |",
		"| fix check | 1 | 0 | 0 | confirmed closed: F-1 | – | none |",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

const steerLoop = "shape: ralph\nsandbox: off\nobjective: \"done.txt exists\"\nagent: {backend: command, command: AGENT}\nbudget: {iterations: 5, same_failure: 10}\nverify: [\"test -s done.txt\"]\n"

// A loop-file edit during a run that weakens nothing (a lower budget) is
// kept and takes effect at the next run; one that weakens the loop (a
// higher budget) is undone and recorded as a violation.
func TestEngineLoopFileEditsJudged(t *testing.T) {
	for _, c := range []struct {
		name, edit string
		kept       bool
	}{
		{"lower budget kept", "iterations: 2", true},
		{"higher budget undone", "iterations: 50", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{
				"loop.yaml": steerLoop,
				"agent.txt": "== ralph\nrun sed -i 's/iterations: 5/" + c.edit + "/' loop.yaml\nsay tried\n",
			}
			out, evs, dir := fakeLoop(t, files, nil)
			src := readFile(t, filepath.Join(dir, "loop.yaml"))
			v := events(evs, record.Violation)
			changed := events(evs, record.SpecChanged)
			if c.kept {
				if !strings.Contains(src, c.edit) || len(v) != 0 || len(changed) != 1 {
					t.Fatalf("edit %q: loop file %q, %d violations, %d spec_changed; want it kept and picked up", c.edit, src, len(v), len(changed))
				}
				if out.Reason != ReasonBudget || out.State.Iterations != 2 {
					t.Errorf("outcome %s after %d attempts, want budget after the lowered 2", out.Reason, out.State.Iterations)
				}
				return
			}
			if strings.Contains(src, c.edit) || len(v) == 0 || v[0].File != "loop.yaml" {
				t.Fatalf("edit %q: loop file %q, violations %+v; want it undone and recorded", c.edit, src, v)
			}
			if !strings.Contains(v[0].Message, "weakens the loop") {
				t.Errorf("violation %q does not say the edit weakens the loop", v[0].Message)
			}
			if out.State.Iterations != 5 {
				t.Errorf("%d attempts, want the original 5", out.State.Iterations)
			}
		})
	}
}
