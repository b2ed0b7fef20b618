package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The layer. Under bubblewrap an agent never writes the loop folder, its
// HOME or its caches: each is a copy-on-write layer (sandbox.Layer) whose
// writes land in the engine's private folder. After the run, with every
// process of it gone, the engine applies the loop folder's layer: what the
// agent wrote in .git and working-records/ is discarded, the rest reaches
// the folder and is judged there as before (protected files restored, the
// loop file judged field by field). The layers over HOME and the caches
// are never applied: they persist from run to run of the loop, so an agent
// CLI keeps its sessions and logins, while the checks and the engine's git
// read the user's own HOME and caches, which no agent wrote.

// prepareLayers makes the layers' folders. A loop layer that holds what a
// run wrote before the engine died is dropped: that run's work is lost, and
// the loop folder was never touched by it.
func (r *runner) prepareLayers(layers []sandbox.Layer) error {
	for i, l := range layers {
		left, err := sandbox.PrepareLayer(l)
		if err != nil {
			return fmt.Errorf("cannot prepare the copy-on-write layer over %s: %w", l.Target, err)
		}
		if i == 0 && left {
			if err := sandbox.ClearLayer(l); err != nil {
				return fmt.Errorf("cannot drop the layer a dead run left: %w", err)
			}
			r.emit(record.Event{Event: record.Warning, Kind: "layer_dropped", Message: "the copy-on-write layer of an agent run that died with the engine was dropped: nothing of that run reached the loop folder"})
		}
	}
	return nil
}

// resumeApply finishes the apply of the loop folder's layer that the
// engine died in the middle of (its journal says what was decided and what
// was done): the folder gets all of that run's judged changes, never a
// part of them, and the run is then judged like any run that died.
func (r *runner) resumeApply() error {
	for k := 0; k < spec.MaxParallel; k++ {
		if err := r.resumeApplySlot(k); err != nil {
			return err
		}
	}
	return nil
}

// resumeApplySlot is resumeApply for the layer of slot k (parallel: N).
func (r *runner) resumeApplySlot(k int) error {
	l, journal := slotLayer(r.dir, k)
	changes, found, err := sandbox.ResumeApply(l, journal)
	if !found {
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot finish applying the layer of the run that died with the engine: %w", err)
	}
	n := 0
	for _, c := range changes {
		if c.Applied {
			n++
		}
	}
	r.emit(record.Event{Event: record.Warning, Kind: "layer_apply_finished", Message: fmt.Sprintf("the engine died while applying an agent run's layer to the loop folder: the apply was finished now (%s), and the run is judged as one that died", plural(n, "path"))})
	return nil
}

// testAwareRule is why a change with tells is refused.
const testAwareRule = "no code the agent writes may decide a check's output"

// layerTells is what a file the run wrote in its layer tells that the
// folder's version did not ("" when nothing, or when the path is not
// source the judge reads for tells): such a change is refused. cur is the
// layer's file as read for secrets (ok false: not a regular file the
// engine reads).
func (r *runner) layerTells(scope *judge.TellScope, rel string, cur []byte, ok bool) string {
	if note := r.inlineTests(rel, cur, ok); note != "" {
		return note // an inline test module edited (judge/inline_tests.go)
	}
	if !ok || len(cur) > 4<<20 || !judge.ScansForTells(rel) || r.judge().TellsAllowed(rel) {
		return ""
	}
	return r.newTellsIn(scope, rel, func() []byte {
		old, err := guard.ReadBounded(filepath.Join(r.dir, filepath.FromSlash(rel)), 4<<20)
		if err != nil {
			return nil
		}
		return old
	}, cur)
}

// folderTells judges, where no layer is in force, the files a run changed
// for tells and for secrets: each file with a new tell or a secret is put
// back as git's HEAD has it, or removed when the run created it; where
// neither can be done it stays, and the violation says so.
func (r *runner) folderTells(changed, created []string) []guard.Tamper {
	isNew := map[string]bool{}
	for _, c := range created {
		isNew[c] = true
	}
	var out []guard.Tamper
	scope := r.judge().NewTellScope(confine.TreeOf(r.dir, ""))
	for _, rel := range changed {
		p := filepath.Join(r.dir, filepath.FromSlash(rel))
		cur, ok := confine.ReadChange(p)
		if !ok {
			continue
		}
		// git's version is asked for only when it is needed: the file
		// holds a secret or tells something (a git process per changed
		// file was most of an iteration's time).
		var old []byte
		asked := false
		head := func() []byte {
			if !asked && !isNew[rel] {
				asked = true
				if out, err := safegit.Run(context.Background(), r.dir, nil, "show", "HEAD:./"+rel); err == nil {
					old = []byte(out)
				}
			}
			return old
		}
		t := guard.Tamper{File: rel, Rule: confine.SecretRule}
		if secret := confine.SecretsInChange(rel, cur, r.red()); secret != "" {
			t.What = "refused: it holds " + secret
		} else {
			inline := r.inlineTestsOf(rel, head, cur)
			if inline == "" && (!judge.ScansForTells(rel) || r.judge().TellsAllowed(rel) || len(cur) > 4<<20) {
				continue
			}
			note := inline
			if note == "" {
				note = r.newTellsIn(scope, rel, head, cur)
			}
			if note == "" {
				continue
			}
			t = guard.Tamper{Kind: guard.TestAware, File: rel, What: note, Rule: testAwareRule}
		}
		head()
		switch {
		case isNew[rel]:
			if os.Remove(p) != nil {
				t.What += " (it could not be removed)"
			}
		case old != nil:
			mode := os.FileMode(0o644)
			if fi, err := os.Stat(p); err == nil {
				mode = fi.Mode().Perm()
			}
			if guard.WriteFile(p, old, mode, false) != nil {
				t.What += " (it could not be put back)"
			}
		case t.Rule == testAwareRule:
			t.What += " (it stays: no earlier version is known; the checks will run it)"
		default:
			t.What += " (it stays: no earlier version is known)"
		}
		out = append(out, t)
	}
	return out
}

// endRun ends the watch of a run's changes, after applying its layer (only
// then does what the agent wrote reach the loop folder): what changed,
// what was created, and the layer's discarded changes to the engine's
// records, as tampering.
func (r *runner) endRun(phase, task string, rc *guard.RunChanges) (changed, created []string, tamper []guard.Tamper, err error) {
	tamper, lerr := r.applyLayer(phase, task)
	for _, l := range r.trees {
		// overlayfs leaves a folder of mode 000 in its work folder; nothing
		// is mounted any more.
		if cerr := sandbox.ClearWork(l); cerr != nil && lerr == nil {
			lerr = cerr
		}
	}
	changed, created, err = r.guard.End(rc)
	if lerr != nil {
		err = lerr
	}
	if r.layer == nil {
		// No layer judged the run's files before they reached the folder:
		// they are judged where they are.
		confine.StripInPlace(r.emit, r.dir, phase, task, changed, created)
		tamper = append(tamper, r.folderTells(changed, created)...)
		if perr := r.judge().Pristine().Lost(created, changed); perr != nil {
			r.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "pristine", Message: "cannot note the dependency files the run changed: " + perr.Error()})
		}
	}
	return changed, created, tamper, err
}

// applyLayer applies the loop folder's layer after a run: the engine's own
// paths are discarded (a change to working-records/ is a violation, one to
// .git a warning: agents that commit are common, and the engine alone
// commits), the rest reaches the folder. It returns the discarded changes
// to the records as tampering, for the run's verdict.
func (r *runner) applyLayer(phase, task string) ([]guard.Tamper, error) {
	if r.layer == nil || r.viewOnly {
		return nil, nil // a view-only run's layer is its caller's to read and clear
	}
	commits := confine.GitDir(r.spec()) != ""
	held := map[string]bool{}
	hiddenGit := map[string]bool{} // a hidden path of the repository → whether it is the engine's note
	told := map[string]string{}
	secrets := map[string]string{}
	var pristineErr error
	scope := r.judge().NewTellScope(confine.TreeOf(r.dir, r.layer.Upper))
	changes, err := sandbox.ApplyLayer(*r.layer, func(rel string) bool {
		if r.judge().HoldoutPath(r.layer.Upper, rel) {
			held[rel] = true
			return false
		}
		if confine.GitHidden(r.judge().HiddenGit(), rel) {
			hiddenGit[rel] = r.ownGitNote(rel)
			return false
		}
		if _, owned := confine.EngineOwned(rel, commits); owned {
			return false
		}
		cur, ok := confine.ReadChange(filepath.Join(r.layer.Upper, filepath.FromSlash(rel))) // one read for secrets and tells
		if kinds := confine.SecretsInChange(rel, cur, r.red()); ok && kinds != "" {
			secrets[rel] = kinds
			return false
		}
		if note := r.layerTells(scope, rel, cur, ok); note != "" {
			told[rel] = note
			return false
		}
		if judge.PristinePath(rel) {
			// The clean room sees dependency folders and caches as at the
			// loop's start: the original is kept before it is replaced.
			if fi, err := os.Lstat(filepath.Join(r.layer.Upper, filepath.FromSlash(rel))); err == nil && !fi.IsDir() {
				if err := r.judge().Pristine().Keep(rel); err != nil {
					pristineErr = err
				}
			}
		}
		return true
	}, loopdir.PrivateOf(r.dir).LayerJournal(slotLayerName(r.slot)))
	var tamper []guard.Tamper
	var git []string
	confine.NoteSpecial(r.emit, phase, task, changes)
	for _, c := range changes {
		if c.Applied {
			continue
		}
		why, owned := confine.EngineOwned(c.Path, commits)
		switch {
		case told[c.Path] != "":
			tamper = append(tamper, guard.Tamper{Kind: guard.TestAware, File: c.Path, What: told[c.Path], Rule: testAwareRule})
		case secrets[c.Path] != "":
			tamper = append(tamper, guard.Tamper{File: c.Path, What: "refused: it holds " + secrets[c.Path], Rule: confine.SecretRule})
		case held[c.Path] && c.What == "removed" && slices.Contains(r.judge().Holdouts(), c.Path):
			// The engine's own whiteout: the holdout file stayed hidden.
		case confine.GitHidden(r.judge().HiddenGit(), c.Path) && (hiddenGit[c.Path] && c.What == "written" || c.What == "removed" && slices.Contains(r.judge().HiddenGit().InTree[1:], c.Path)):
			// The engine's own: the repository stayed hidden.
		case confine.GitHidden(r.judge().HiddenGit(), c.Path):
			git = append(git, c.Path)
		case held[c.Path] || r.judge().TouchesHoldout(c.Path):
			tamper = append(tamper, guard.Tamper{File: c.Path, What: c.What + " where a holdout file is", Rule: "holdout: the user's hidden tests, never the agent's to see or change"})
		case owned && strings.HasPrefix(c.Path, ".git"):
			git = append(git, c.Path)
		case owned:
			tamper = append(tamper, guard.Tamper{File: c.Path, What: "written in the agent's layer", Rule: why})
		default:
			r.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "layer_discarded", File: c.Path,
				Message: fmt.Sprintf("%s (%s) was not applied to the loop folder: %s", c.Path, c.What, c.Why)})
		}
	}
	if pristineErr != nil {
		r.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "pristine",
			Message: "cannot keep the original of a dependency file the run changed (the clean room will leave it out): " + pristineErr.Error()})
	}
	if len(git) > 0 {
		r.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "git_discarded",
			Message: fmt.Sprintf("the %s run changed %s in its layer; discarded: the engine alone commits, and its history stays as it was", phase, strings.Join(git, ", "))})
	}
	if err != nil {
		return tamper, fmt.Errorf("cannot apply the agent's layer to the loop folder: %w", err)
	}
	return tamper, nil
}

// ownGitNote says whether the layer's file at rel is the engine's note
// at .git, as it laid it (read before the layer is emptied).
func (r *runner) ownGitNote(rel string) bool {
	gh := r.judge().HiddenGit()
	if rel != gh.InTree[0] {
		return false
	}
	p := filepath.Join(r.layer.Upper, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	data, err := os.ReadFile(p)
	return err == nil && string(data) == judge.GitHiddenNote
}
