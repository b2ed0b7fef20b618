package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// The runner files a loop started with, which the clean room keeps, and
// the gate checks run as the clean room runs them on a tree outside the
// engine (a merged tree at the landing, init's and doctor's probe).

// RunnerStart is what the clean room keeps: the runner files and
// top-level names the loop folder held at the start, from the engine's
// private folder priv. A loop that started before the engine kept it uses
// the files protected at the start.
func RunnerStart(priv string) (guard.RunnerFiles, error) {
	var rf guard.RunnerFiles
	p := loopdir.Private(priv)
	data, err := os.ReadFile(p.RunnerFilesAtStart())
	if err == nil {
		if json.Unmarshal(data, &rf) != nil {
			return rf, fmt.Errorf("the engine's list of the files the loop started with is corrupt (%s)", p.RunnerFilesAtStart())
		}
		return rf, nil
	}
	data, err = os.ReadFile(p.ProtectedAtStart())
	if err != nil {
		return rf, fmt.Errorf("the engine has no list of the files the loop started with: %w", err)
	}
	if json.Unmarshal(data, &rf.Files) != nil {
		return rf, fmt.Errorf("the engine's list of protected files is corrupt (%s)", p.ProtectedAtStart())
	}
	return rf, nil
}

// SetAside lists the files a test runner loads that the loop did not
// start with, sorted: for the clean room (the protection rules know them).
func SetAside(dir, priv string, l *spec.Loop, isHoldout func(string) bool) ([]string, error) {
	start, err := RunnerStart(priv)
	if err != nil {
		return nil, err
	}
	rules, err := guard.NewProtectRules(dir, l)
	if err != nil {
		return nil, err
	}
	rules.SetTopAtStart(start.Top)
	had := map[string]bool{}
	for _, f := range start.Files {
		had[f] = true
	}
	var out []string
	for _, f := range rules.Walked() {
		if !had[f] && !isHoldout(f) && rules.RunnerFile(f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Land runs a loop's gate checks on a merged tree (Loop.Dir) as the clean
// room does: in the judge's sandbox, with the runner files the loop did
// not start with set aside (known from the engine's folder of the loop
// that ran in RunDir; nothing is set aside when RunDir is "" or the
// engine kept no list), only those FromBranch names when it is not nil
// (the paths the loop's branch changed: what reached the base meanwhile
// is the user's). Each check's output is kept in LogDir as PREFIX-N.log
// (N from 1).
type Land struct {
	Loop           *spec.Loop
	RunDir         string
	LogDir, Prefix string
	FromBranch     func(rel string) bool
	Redactor       *redact.Redactor
}

// Checks runs them. aside is what was set aside; err says why the runner
// files could not be known (the gates then did not run: fail closed).
func (d Land) Checks(ctx context.Context) (results []CheckResult, aside []string, err error) {
	l := d.Loop
	if err := os.MkdirAll(d.LogDir, 0o700); err != nil {
		return nil, nil, err
	}
	var rf guard.RunnerFiles
	if d.RunDir != "" {
		// Without the list of the files the loop started with, the runner
		// files it added cannot be set aside: the gates would run the
		// agent's runner files as trusted. Fail closed.
		priv := string(loopdir.PrivateOf(d.RunDir))
		all, err := SetAside(l.Dir, priv, l, (&Judge{Spec: func() *spec.Loop { return l }}).IsHoldout)
		if err != nil {
			return nil, nil, fmt.Errorf("the gates cannot run as in the clean room: %w", err)
		}
		for _, f := range all {
			if d.FromBranch == nil || d.FromBranch(f) {
				aside = append(aside, f)
			}
		}
		rf, _ = RunnerStart(priv)
	}
	env := append(os.Environ(), "LOOPRINTER_DIR="+l.Dir, "LOOPRINTER_CYCLE=0")
	env = append(env, GuardEnv(l.Dir, rf.Top, rf.Files)...)
	return Check(ctx, CheckRequest{Loop: l, Cmds: l.GateChecks(), Remove: aside, Env: env, Redactor: d.Redactor, LogPath: func(i int) string {
		return filepath.Join(d.LogDir, fmt.Sprintf("%s-%d.log", d.Prefix, i+1))
	}}), aside, nil
}
