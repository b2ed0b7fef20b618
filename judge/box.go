package judge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Every check runs in the judge's own sandbox (sandbox.CheckBox), never the
// agent's and never as the user: the tree read-only with writes going to a
// throw-away layer, HOME and the caches as throw-away layers over the
// user's, an empty /tmp, the engine's state folder hidden, no
// capabilities, no network but a loopback of its own unless
// checks.network says host. What the checks run of the agent's code can
// neither change what a later check reads nor leave anything behind.

// checkKind is the kind of the checks' sandbox for a loop: the kind its
// agents are confined by, where it can confine checks (bwrap needs
// copy-on-write layers for the tree; seatbelt does not confine checks
// yet), else Landlock where it runs, else off. why says what was given up
// ("" when nothing).
func checkKind(l *spec.Loop) (kind, why string) {
	kind, err := sandbox.Resolve(l.Sandbox)
	if err != nil {
		return sandbox.Off, "the sandbox cannot run here: " + err.Error()
	}
	switch kind {
	case sandbox.Off:
		return sandbox.Off, ""
	case sandbox.Bwrap:
		if err := sandbox.LayerProbe(); err == nil {
			return sandbox.Bwrap, ""
		} else if k, lerr := sandbox.Resolve(sandbox.Landlock); lerr == nil && k == sandbox.Landlock {
			return sandbox.Landlock, "no copy-on-write layer for the checks' tree here (" + err.Error() + "): checks are confined by Landlock"
		} else {
			return sandbox.Off, "no copy-on-write layer for the checks' tree here (" + err.Error() + ") and no Landlock: checks run unconfined"
		}
	case sandbox.Landlock:
		return sandbox.Landlock, ""
	}
	return sandbox.Off, "checks cannot be confined by " + kind + " yet: they run unconfined"
}

// warnedKinds keeps "checks run less confined" from repeating in a process.
var warnedKinds sync.Map

// gitDirsOf is the repository a worktree tree belongs to (its .git is a
// file naming a folder elsewhere: the worktree's git folder and the
// repository's common one), which its checks must see, read-only, even
// where it lies in a folder they do not see (/tmp, the state folder).
func gitDirsOf(tree string) []string {
	data, err := os.ReadFile(filepath.Join(tree, ".git"))
	if err != nil {
		return nil // a folder (or none): it is in the tree itself
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	gd := strings.TrimSpace(line)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(tree, gd)
	}
	out := []string{gd}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		out = append(out, filepath.Clean(cd))
	}
	return out
}

// gitHidden adds to remove the repository's paths in the loop folder, and
// names the folders outside it to hide, when git holds holdout files (no
// check whose output can reach a prompt sees the repository; a holdout
// copy in another worktree, a file, stays visible to them).
func (j *Judge) gitHidden(remove []string) ([]string, []string) {
	gh := j.HiddenGit()
	if gh == nil {
		return remove, nil
	}
	return append(append([]string{}, remove...), gh.InTree...), gh.Dirs
}

// failAll is every command failed for one reason, closed: nothing ran.
func failAll(cmds []string, logPath func(int) string, why string) []CheckResult {
	var out []CheckResult
	for i, c := range cmds {
		r := CheckResult{}
		r.Command, r.Output, r.ExitCode = c, logPath(i), 127
		r.Lines = []string{why}
		r.Signal = why
		out = append(out, r)
	}
	return out
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// CheckConfinement says in one line how the judge confines a loop's
// checks, for the records and `validate`.
func CheckConfinement(l *spec.Loop) string {
	kind, why := checkKind(l)
	s := fmt.Sprintf("checks are confined by %s", kind)
	if kind == sandbox.Off {
		s = "checks run unconfined (sandbox: off)"
	}
	if why != "" {
		s += ": " + why
	}
	return s
}

// noteConfinement records, once per process and loop, that the checks run
// less confined than the loop's sandbox promises, as a warning and a NOT
// VERIFIED note.
func (j *Judge) noteConfinement(why string) {
	j.emit(record.Event{Event: record.Warning, Kind: "checks_confinement", Message: why})
	j.addNotVerified("checks: " + why)
}

// boxOptions are a check box's options over tree that every box of the
// judge shares: its throw-away folders in the engine's state folder, which
// no check or agent sees (never in the temporary folder, which may be
// inside the tree or read by agents); the state folder and hideDirs out of
// sight; the repository's folders as views when nothing else is hidden;
// the loop's checks network (none by default).
func boxOptions(l *spec.Loop, tree string, hideDirs []string) sandbox.CheckBoxOptions {
	scratch := filepath.Join(loopdir.StateRoot(), "check-scratch")
	if p := loopdir.PrivateOf(l.Dir); dirExists(string(p)) {
		scratch = p.CheckScratch()
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		scratch = ""
	}
	var views []string
	if len(hideDirs) == 0 {
		views = gitDirsOf(tree)
	}
	// The engine's sitecustomize for Python checks (pyguard.go), read-only.
	if d := pyGuardDir(); d != "" {
		views = append(views, d)
	}
	network, setupNet := boxNetworks(l)
	o := sandbox.CheckBoxOptions{Tree: tree, Hide: append([]string{loopdir.StateRoot()}, hideDirs...), Views: views, Network: network, SetupNetwork: setupNet, Scratch: scratch}
	o.View = sandbox.ViewSpec{AllowRead: l.SandboxOpts.AllowRead, AllowSockets: l.SandboxOpts.AllowSockets}
	return o
}
