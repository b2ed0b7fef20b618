package judge

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/mutate"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/tells"
)

// AttemptPass is the strength pass of one attempt of a best-of: how well
// the task's checks pin it. The lines the attempt's layer changed (test
// files and the holdout left out) are mutated (at most max mutants) and
// the checks run on each mutant, over the attempt's layer, with the
// mutated file placed above it. A mutant is caught as in the strength
// pass (a named test fails: strength_named.go). A special case of the
// tests' inputs (`if a == 2 && b == 3 { return 5 }`) survives a mutant of
// its constants where an honest fix does not, so the engine ranks passing
// attempts by this first. It needs the layered sandbox (a view with a
// layer under the mutant): elsewhere, and when no mutant could be judged,
// judged is 0.
//
// A pass is made ready first (NewAttemptPass: its mutants made and a
// scratch folder of its own), so that its mutants can be judged in any
// order, several at once and at the same time as other attempts' passes.
// Each mutant's checks run in a check box of their own (Check), its files
// and logs named by the mutant in the pass's scratch folder, its verdict
// kept at its index: two passes, or two mutants of one pass, share
// nothing they write.
type AttemptPass struct {
	j       *Judge
	o       AttemptOptions
	ms      []mutate.Mutant
	scratch string
	known   map[string]bool
	verdict []mutantResult // by mutant; mutantNotRun until judged
}

// NewAttemptPass readies the strength pass of the attempt o (at most max
// mutants). A pass that cannot run (no layered sandbox, no checks, no
// mutant, no scratch folder) has no mutant, and its Result is 0 of 0.
// Close removes its scratch folder.
func (j *Judge) NewAttemptPass(o AttemptOptions, max int) *AttemptPass {
	p := &AttemptPass{j: j, o: o}
	l := j.spec()
	if kind, _ := checkKind(l); kind != sandbox.Bwrap || len(o.Cmds) == 0 {
		return p
	}
	ms := attemptMutants(j.Dir, o.Upper, func(rel string) bool { return tells.IsTestFile(rel) || j.IsHoldout(rel) }, max)
	if len(ms) == 0 {
		return p
	}
	scratch, err := os.MkdirTemp(j.scratchBase(), "attempt-strength-")
	if err != nil {
		return p
	}
	p.ms, p.scratch, p.known = ms, scratch, j.goTestNames()
	p.verdict = make([]mutantResult, len(ms))
	return p
}

// Mutants is how many mutants the pass judges.
func (p *AttemptPass) Mutants() int { return len(p.ms) }

// Judge runs the checks on mutant i (0 ≤ i < Mutants()) and keeps its
// verdict. Calls for different mutants may run at once.
func (p *AttemptPass) Judge(ctx context.Context, i int) {
	j, m := p.j, p.ms[i]
	from := filepath.Join(p.scratch, fmt.Sprintf("m%d", i))
	if os.WriteFile(from, m.Source, 0o600) != nil {
		return
	}
	logPath := func(k int) string { return filepath.Join(p.scratch, fmt.Sprintf("m%d-%d.log", i, k+1)) }
	put := []sandbox.ViewFile{{From: from, To: m.Path, Mode: 0o644}}
	r := j.request(j.holdouts, p.o.Cmds, logPath)
	r.Put, r.Lower, r.Note = put, p.o.Upper, nil
	rs := Check(ctx, r)
	verdict := mutantSurvived
	for _, r := range rs {
		if r.Pass {
			continue
		}
		if r.TimedOut {
			verdict = mutantNotRun
			break
		}
		out, _ := readHead(r.Output, 1<<20)
		verdict = j.mutantFailure(out, p.known, nil)
		break
	}
	p.verdict[i] = verdict
}

// Result is how many of the mutants judged so far the checks caught, and
// how many were judged (caught or survived).
func (p *AttemptPass) Result() (caught, judged int) {
	for _, v := range p.verdict {
		switch v {
		case mutantCaught:
			caught++
			judged++
		case mutantSurvived:
			judged++
		}
	}
	return caught, judged
}

// Close removes the pass's scratch folder.
func (p *AttemptPass) Close() {
	if p.scratch != "" {
		os.RemoveAll(p.scratch)
	}
}

// scratchBase is the engine's private scratch folder for checks ("" : the
// system's temporary folder).
func (j *Judge) scratchBase() string {
	if j.Priv == "" {
		return ""
	}
	d := filepath.Join(j.Priv, "attempt-scratch")
	if os.MkdirAll(d, 0o700) != nil {
		return ""
	}
	return d
}

// attemptMutants are the mutants of the lines the files of upper (an
// attempt's layer) add over dir's, a file at a time in turn.
func attemptMutants(dir, upper string, skip func(string) bool, max int) []mutate.Mutant {
	var per [][]mutate.Mutant
	filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(upper, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if skip(rel) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		old, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		lines := addedLines(string(old), string(src))
		if len(lines) == 0 {
			return nil
		}
		if ms, err := mutate.MutantsMax(rel, src, lines, max); err == nil && len(ms) > 0 {
			per = append(per, ms)
		}
		return nil
	})
	var out []mutate.Mutant
	for i := 0; len(out) < max; i++ {
		took := false
		for _, ms := range per {
			if i < len(ms) && len(out) < max {
				out = append(out, ms[i])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// addedLines are the lines (1-based) of b that a does not hold as many
// times: the lines an attempt added or changed.
func addedLines(a, b string) []int {
	have := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		have[strings.TrimSpace(l)]++
	}
	var out []int
	for i, l := range strings.Split(b, "\n") {
		k := strings.TrimSpace(l)
		if have[k] > 0 {
			have[k]--
			continue
		}
		out = append(out, i+1)
	}
	return out
}
