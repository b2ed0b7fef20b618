package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// fakeJudge is the judge's side of a run's confinement.
type fakeJudge struct {
	dir      string
	holdouts []string
	gh       *judge.GitHide
	kept     int
	ready    []bool // HoldoutReady's arguments
	pristine *judge.Pristine
}

func (f *fakeJudge) Holdouts() []string        { return f.holdouts }
func (f *fakeJudge) KeepHoldouts() error       { f.kept++; return nil }
func (f *fakeJudge) HiddenGit() *judge.GitHide { return f.gh }
func (f *fakeJudge) HoldoutReady(layered bool) error {
	f.ready = append(f.ready, layered)
	return errors.New("the holdout files need a layer")
}
func (f *fakeJudge) Pristine() *judge.Pristine {
	if f.pristine == nil {
		f.pristine = judge.OpenPristine(f.dir)
	}
	return f.pristine
}

// runReq is a request for a run of a loop in a new folder, under sandbox
// mode; what it was told and asked is counted in the returned probe.
type runProbe struct {
	confined        []string
	readOnly, links int
	events          []record.Event
}

func runReq(t *testing.T, mode, phase string, slot int) (Request, *fakeJudge, *runProbe) {
	t.Helper()
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	src := []byte("objective: \"a.txt exists\"\nagent: {backend: command, command: \"true\"}\nsandbox: " + mode + "\nnetwork: {mode: open}\n")
	os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644)
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j := &fakeJudge{dir: dir}
	pr := &runProbe{}
	emit := func(ev record.Event) { pr.events = append(pr.events, ev) }
	net := &Network{Emit: emit}
	t.Cleanup(net.Close)
	name := "loop"
	if slot > 0 {
		name = "slot-layer"
	}
	return Request{
		Loop: l, Dir: dir, Priv: string(loopdir.PrivateOf(dir)), Slot: slot, Layer: LayerOf(dir, name, dir), Phase: phase, Fresh: true,
		ReadOnly: func() []string { pr.readOnly++; return []string{filepath.Join(dir, "a_test.go")} },
		Links:    func() []string { pr.links++; return nil },
		Holdouts: j, Net: net, Emit: emit,
		Confined: func(what string) { pr.confined = append(pr.confined, what) },
	}, j, pr
}

// Under sandbox: off nothing wraps the agent, the verdict carries the
// NOT VERIFIED note, the sandbox is said, and the loop's secrets are noted
// for other loops all the same; with holdout files the run does not start.
func TestForRunSandboxOff(t *testing.T) {
	req, j, pr := runReq(t, "off", "build", 0)
	run, err := ForRun(req)
	if err != nil || run == nil {
		t.Fatalf("ForRun: %v, %v", run, err)
	}
	if run.Wrap != nil || run.Layer != nil || run.GuardsGit {
		t.Errorf("sandbox: off wraps, lays or guards: %+v", run)
	}
	if run.NotVerified != NotConfined || !strings.HasPrefix(run.NotVerified, "sandbox: off — agent runs were not confined") {
		t.Errorf("NOT VERIFIED note %q", run.NotVerified)
	}
	if len(pr.confined) != 1 || pr.confined[0] != sandbox.Off {
		t.Errorf("said confined by %q, want off once", pr.confined)
	}
	if _, err := os.Stat(loopdir.PrivateOf(req.Dir).Secrets()); err != nil {
		t.Errorf("the loop's secrets were not noted: %v", err)
	}
	if pr.links != 0 {
		t.Error("the protected files' links asked outside Landlock")
	}

	j.holdouts = []string{"hidden_test.go"}
	pr.confined = nil
	run, err = ForRun(req)
	if err == nil || !strings.Contains(err.Error(), "need a layer") || len(j.ready) != 1 || j.ready[0] {
		t.Fatalf("holdout files without a layer: %v (HoldoutReady %v)", err, j.ready)
	}
	if run == nil || run.Wrap != nil || run.NotVerified != "" || len(pr.confined) != 0 {
		t.Errorf("a refused run was confined: %+v, said %q", run, pr.confined)
	}
}

// An unknown sandbox decides nothing: no run, and the runner keeps what
// it had.
func TestForRunUnknownSandbox(t *testing.T) {
	req, _, pr := runReq(t, "off", "build", 0)
	req.Loop.Sandbox = "jail"
	if run, err := ForRun(req); run != nil || err == nil {
		t.Fatalf("sandbox: jail gave %+v, %v", run, err)
	}
	if len(pr.confined) != 0 || pr.readOnly != 0 {
		t.Error("an unresolved sandbox said or asked something")
	}
}

// Landlock only grants: another loop's records inside the loop folder
// would be in the agent's reach, so the run does not start; once they are
// gone it starts with a private HOME, .git's guard decided and the
// protected files' links, not the files, read-only.
func TestForRunLandlockRefusesSecretsInReach(t *testing.T) {
	if k, err := sandbox.Resolve("landlock"); err != nil || k != sandbox.Landlock {
		t.Skipf("Landlock cannot run here: %v", err)
	}
	req, _, pr := runReq(t, "landlock", "build", 0)
	other := filepath.Join(req.Dir, "other")
	os.MkdirAll(filepath.Join(other, loopdir.RecordsDir), 0o755)
	if err := loopdir.Dir(other).WriteSecrets(nil); err != nil {
		t.Fatal(err)
	}
	run, err := ForRun(req)
	if err == nil || !strings.Contains(err.Error(), "other/"+loopdir.RecordsDir) || !strings.Contains(err.Error(), "in the agent's reach") {
		t.Fatalf("another loop's records in reach: %v", err)
	}
	if run == nil || run.Wrap != nil || run.GuardsGit || len(pr.confined) != 0 || pr.links != 0 {
		t.Errorf("a refused Landlock run went on: %+v, said %q, links asked %d", run, pr.confined, pr.links)
	}

	os.RemoveAll(other)
	run, err = ForRun(req)
	if err != nil {
		t.Fatal(err)
	}
	if run.Wrap == nil || !run.GuardsGit || run.Layer != nil || run.NotVerified != "" {
		t.Errorf("Landlock run: %+v", run)
	}
	if len(pr.confined) != 1 || pr.confined[0] != "landlock (a private HOME)" {
		t.Errorf("said confined by %q", pr.confined)
	}
	if pr.links != 1 || pr.readOnly != 0 {
		t.Errorf("asked the protected files %d times, their links %d, want 0 and 1", pr.readOnly, pr.links)
	}
	_, _, env, err := run.Wrap("/bin/true", nil)
	if err != nil {
		t.Fatal(err)
	}
	home := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			home = v
		}
	}
	if !strings.HasPrefix(home, req.Priv) {
		t.Errorf("the agent's HOME is %q, not inside the engine's private folder %s", home, req.Priv)
	}
}

// Under bubblewrap with layers: the loop folder's layer is the slot's,
// HOME's layers are named by the phase and the slot (the auditor's and
// the chooser's are their own, emptied before each run), the holdout
// files are kept, and a hidden repository's folders are masked after the
// network's masks.
func TestForRunLayers(t *testing.T) {
	if _, err := sandbox.Resolve(sandbox.Bwrap); err != nil || sandbox.LayerProbe() != nil {
		t.Skip("no bubblewrap with copy-on-write layers here")
	}
	for _, c := range []struct {
		phase  string
		slot   int
		prefix string
		clears bool
	}{
		{"build", 0, "tree-", false},
		{"auditor", 0, "auditor-tree-", true},
		{spec.PhaseChooser, 0, spec.PhaseChooser + "-tree-", true},
		{"build", 2, "slot3-tree-", false},
	} {
		req, j, pr := runReq(t, "bwrap", c.phase, c.slot)
		gitDir := t.TempDir()
		j.gh = &judge.GitHide{InTree: []string{".git"}, Dirs: []string{gitDir}}
		// What an earlier run left in the phase's HOME layers.
		planted := ""
		for _, tl := range TreeLayers(req.Dir, WritableTrees(req.Loop.Agent.Env), c.prefix) {
			os.MkdirAll(tl.Upper, 0o700)
			planted = filepath.Join(tl.Upper, "CLAUDE.md")
			os.WriteFile(planted, []byte("planted"), 0o600)
		}
		run, err := ForRun(req)
		if err != nil {
			t.Fatalf("%s slot %d: %v", c.phase, c.slot, err)
		}
		if run.Layer == nil || run.Layer.Upper != req.Layer.Upper || run.Layer.Target != req.Dir || run.GuardsGit || run.NotVerified != "" {
			t.Errorf("%s slot %d: %+v", c.phase, c.slot, run)
		}
		if len(run.Trees) == 0 {
			t.Fatalf("%s slot %d: no HOME layer", c.phase, c.slot)
		}
		for _, tl := range run.Trees {
			if name := filepath.Base(filepath.Dir(tl.Upper)); !strings.HasPrefix(name, c.prefix) {
				t.Errorf("%s slot %d: HOME layer %s, want the prefix %s", c.phase, c.slot, name, c.prefix)
			}
		}
		if _, err := os.Stat(planted); (err == nil) == c.clears {
			t.Errorf("%s slot %d: what an earlier run left in HOME's layer: %v, want it emptied %v", c.phase, c.slot, err, c.clears)
		}
		if j.kept != 1 || pr.readOnly != 0 || pr.links != 0 {
			t.Errorf("%s slot %d: holdouts kept %d times, protected files asked %d, %d", c.phase, c.slot, j.kept, pr.readOnly, pr.links)
		}
		if len(pr.confined) != 1 || pr.confined[0] != "bwrap with copy-on-write layers" {
			t.Errorf("%s slot %d: said confined by %q", c.phase, c.slot, pr.confined)
		}
		if note, err := os.ReadFile(filepath.Join(req.Layer.Upper, ".git")); err != nil || string(note) != judge.GitHiddenNote {
			t.Errorf("%s slot %d: the repository was not hidden in the layer: %v", c.phase, c.slot, err)
		}
		// The layer helper gets bubblewrap's arguments in its environment
		// (the run box the same view: the classic start's).
		path, args, env, err := run.Wrap("/bin/true", nil)
		if err != nil {
			t.Fatal(err)
		}
		if b := sandbox.TakeBoxedRun(path); b != nil {
			_, extra := b.Classic()
			env = append(env, extra...)
		}
		if all := strings.Join(append(args, env...), " "); !strings.Contains(all, gitDir) {
			t.Errorf("%s slot %d: the hidden repository's folder %s is not masked: %q", c.phase, c.slot, gitDir, all)
		}
	}
}
