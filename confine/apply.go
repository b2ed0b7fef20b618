package confine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/tells"
)

// Applier judges what an agent run wrote before it reaches the loop
// folder: the apply of the run's copy-on-write layer (Apply), or, where no
// layer was in force, the files it changed in place (FolderTells). A
// change that holds a secret, tells of code written to pass a check or
// edits an inline test module is refused; the engine's own paths, the
// holdout files and the hidden repository are never the agent's. It is
// given what it needs of the engine, as values and funcs.
type Applier struct {
	Dir   string                  // the loop folder
	Spec  func() *spec.Loop       // the loop file in force
	Red   func() *redact.Redactor // the redactor in force
	Judge func() *judge.Judge     // the judge in force
	Emit  func(record.Event)      // the records
	// NoteTell keeps, for the audit, a tell that did not refuse a change.
	NoteTell func(line string)
}

// TestAwareRule is why a change with tells is refused.
const TestAwareRule = "no code the agent writes may decide a check's output"

// LayerTells is what a file the run wrote in its layer tells that the
// folder's version did not ("" when nothing, or when the path is not
// source the judge reads for tells): such a change is refused. cur is the
// layer's file as read for secrets (ok false: not a regular file the
// engine reads).
func (a *Applier) LayerTells(scope *judge.TellScope, rel string, cur []byte, ok bool) string {
	if note := a.inlineTests(rel, cur, ok); note != "" {
		return note // an inline test module edited (judge/inline_tests.go)
	}
	if !ok || len(cur) > 4<<20 || !judge.ScansForTells(rel) || a.Judge().TellsAllowed(rel) {
		return ""
	}
	return a.newTellsIn(scope, rel, func() []byte {
		old, err := guard.ReadBounded(filepath.Join(a.Dir, filepath.FromSlash(rel)), 4<<20)
		if err != nil {
			return nil
		}
		return old
	}, cur)
}

// FolderTells judges, where no layer is in force, the files a run changed
// for tells and for secrets: each file with a new tell or a secret is put
// back as git's HEAD has it, or removed when the run created it; where
// neither can be done it stays, and the violation says so.
func (a *Applier) FolderTells(changed, created []string) []guard.Tamper {
	isNew := map[string]bool{}
	for _, c := range created {
		isNew[c] = true
	}
	var out []guard.Tamper
	scope := a.Judge().NewTellScope(TreeOf(a.Dir, ""))
	for _, rel := range changed {
		p := filepath.Join(a.Dir, filepath.FromSlash(rel))
		cur, ok := ReadChange(p)
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
				if out, err := safegit.Run(context.Background(), a.Dir, nil, "show", "HEAD:./"+rel); err == nil {
					old = []byte(out)
				}
			}
			return old
		}
		t := guard.Tamper{File: rel, Rule: SecretRule}
		if secret := SecretsInChange(rel, cur, a.Red()); secret != "" {
			t.What = "refused: it holds " + secret
		} else {
			inline := a.inlineTestsOf(rel, head, cur)
			if inline == "" && (!judge.ScansForTells(rel) || a.Judge().TellsAllowed(rel) || len(cur) > 4<<20) {
				continue
			}
			note := inline
			if note == "" {
				note = a.newTellsIn(scope, rel, head, cur)
			}
			if note == "" {
				continue
			}
			t = guard.Tamper{Kind: guard.TestAware, File: rel, What: note, Rule: TestAwareRule}
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
		case t.Rule == TestAwareRule:
			t.What += " (it stays: no earlier version is known; the checks will run it)"
		default:
			t.What += " (it stays: no earlier version is known)"
		}
		out = append(out, t)
	}
	return out
}

// Apply applies l, the loop folder's layer, after a run (journal: the
// apply's journal, which a restart finishes it from): the engine's own
// paths are discarded (a change to working-records/ is a violation, one to
// .git a warning: agents that commit are common, and the engine alone
// commits), the rest reaches the folder. It returns the discarded changes
// to the records as tampering, for the run's verdict.
func (a *Applier) Apply(l sandbox.Layer, journal, phase, task string) ([]guard.Tamper, error) {
	commits := GitDir(a.Spec()) != ""
	held := map[string]bool{}
	hiddenGit := map[string]bool{} // a hidden path of the repository → whether it is the engine's note
	told := map[string]string{}
	secrets := map[string]string{}
	var pristineErr error
	scope := a.Judge().NewTellScope(TreeOf(a.Dir, l.Upper))
	changes, err := sandbox.ApplyLayer(l, func(rel string) bool {
		if a.Judge().HoldoutPath(l.Upper, rel) {
			held[rel] = true
			return false
		}
		if GitHidden(a.Judge().HiddenGit(), rel) {
			hiddenGit[rel] = OwnGitNote(a.Judge().HiddenGit(), l.Upper, rel)
			return false
		}
		if _, owned := EngineOwned(rel, commits); owned {
			return false
		}
		cur, ok := ReadChange(filepath.Join(l.Upper, filepath.FromSlash(rel))) // one read for secrets and tells
		if kinds := SecretsInChange(rel, cur, a.Red()); ok && kinds != "" {
			secrets[rel] = kinds
			return false
		}
		if note := a.LayerTells(scope, rel, cur, ok); note != "" {
			told[rel] = note
			return false
		}
		if judge.PristinePath(rel) {
			// The clean room sees dependency folders and caches as at the
			// loop's start: the original is kept before it is replaced.
			if fi, err := os.Lstat(filepath.Join(l.Upper, filepath.FromSlash(rel))); err == nil && !fi.IsDir() {
				if err := a.Judge().Pristine().Keep(rel); err != nil {
					pristineErr = err
				}
			}
		}
		return true
	}, journal)
	var tamper []guard.Tamper
	var git []string
	NoteSpecial(a.Emit, phase, task, changes)
	for _, c := range changes {
		if c.Applied {
			continue
		}
		why, owned := EngineOwned(c.Path, commits)
		switch {
		case told[c.Path] != "":
			tamper = append(tamper, guard.Tamper{Kind: guard.TestAware, File: c.Path, What: told[c.Path], Rule: TestAwareRule})
		case secrets[c.Path] != "":
			tamper = append(tamper, guard.Tamper{File: c.Path, What: "refused: it holds " + secrets[c.Path], Rule: SecretRule})
		case held[c.Path] && c.What == "removed" && slices.Contains(a.Judge().Holdouts(), c.Path):
			// The engine's own whiteout: the holdout file stayed hidden.
		case GitHidden(a.Judge().HiddenGit(), c.Path) && (hiddenGit[c.Path] && c.What == "written" || c.What == "removed" && slices.Contains(a.Judge().HiddenGit().InTree[1:], c.Path)):
			// The engine's own: the repository stayed hidden.
		case GitHidden(a.Judge().HiddenGit(), c.Path):
			git = append(git, c.Path)
		case held[c.Path] || a.Judge().TouchesHoldout(c.Path):
			tamper = append(tamper, guard.Tamper{File: c.Path, What: c.What + " where a holdout file is", Rule: "holdout: the user's hidden tests, never the agent's to see or change"})
		case owned && strings.HasPrefix(c.Path, ".git"):
			git = append(git, c.Path)
		case owned:
			tamper = append(tamper, guard.Tamper{File: c.Path, What: "written in the agent's layer", Rule: why})
		default:
			a.Emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "layer_discarded", File: c.Path,
				Message: fmt.Sprintf("%s (%s) was not applied to the loop folder: %s", c.Path, c.What, c.Why)})
		}
	}
	if pristineErr != nil {
		a.Emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "pristine",
			Message: "cannot keep the original of a dependency file the run changed (the clean room will leave it out): " + pristineErr.Error()})
	}
	if len(git) > 0 {
		a.Emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "git_discarded",
			Message: fmt.Sprintf("the %s run changed %s in its layer; discarded: the engine alone commits, and its history stays as it was", phase, strings.Join(git, ", "))})
	}
	if err != nil {
		return tamper, fmt.Errorf("cannot apply the agent's layer to the loop folder: %w", err)
	}
	return tamper, nil
}

// OwnGitNote says whether the file at rel of a layer's upper folder is the engine's note
// at .git, as it laid it (read before the layer is emptied).
func OwnGitNote(gh *judge.GitHide, upper, rel string) bool {
	if rel != gh.InTree[0] {
		return false
	}
	p := filepath.Join(upper, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	data, err := os.ReadFile(p)
	return err == nil && string(data) == judge.GitHiddenNote
}

// newTellsIn is what a file the run wrote tells that its version before
// did not, with its package around it: the refused tells as one note ("":
// none); the tells refused only in a library the checks import are, in
// any other file, noted for the audit instead.
func (a *Applier) newTellsIn(scope *judge.TellScope, rel string, before func() []byte, cur []byte) string {
	ts := judge.NewTellsAround(rel, before, cur, tells.Around{Siblings: scope.Siblings(rel)})
	if len(ts) == 0 {
		return ""
	}
	refused, noted := scope.Split(rel, cur, ts)
	if len(noted) > 0 {
		a.noteTells(rel, noted)
	}
	return judge.TellNote(refused)
}

// noteTells reports tells that do not refuse the change (a read of the
// run's context outside a library the checks import) to the audit and
// the records.
func (a *Applier) noteTells(rel string, ts []tells.Tell) {
	note := judge.TellNote(ts)
	a.NoteTell(rel + ": " + note + " (applied: not in a library the checks import)")
	a.Emit(record.Event{Event: record.Warning, Kind: "tells_noted", File: rel,
		Message: rel + ": the change reads the run's context (" + note + "); it was applied, since the checks do not import it as a library, and the audit is told"})
}
