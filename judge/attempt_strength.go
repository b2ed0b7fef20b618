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

// AttemptStrength measures how well the task's checks pin one attempt of
// a best-of: the lines the attempt's layer changed (test files and the
// holdout left out) are mutated (at most max mutants) and the checks run
// on each mutant, over the attempt's layer, with the mutated file placed
// above it. A mutant is caught as in the strength pass (a named test
// fails: strength_named.go). A special case of the tests' inputs (`if a
// == 2 && b == 3 { return 5 }`) survives a mutant of its constants where
// an honest fix does not, so the engine ranks passing attempts by this
// first. It needs the layered sandbox (a view with a layer under the
// mutant): elsewhere, and when no mutant could be judged, judged is 0.
func (j *Judge) AttemptStrength(ctx context.Context, o AttemptOptions, max int) (caught, judged int) {
	l := j.spec()
	if kind, _ := checkKind(l); kind != sandbox.Bwrap || len(o.Cmds) == 0 {
		return 0, 0
	}
	ms := attemptMutants(j.Dir, o.Upper, func(rel string) bool { return tells.IsTestFile(rel) || j.IsHoldout(rel) }, max)
	if len(ms) == 0 {
		return 0, 0
	}
	scratch, err := os.MkdirTemp(j.scratchBase(), "attempt-strength-")
	if err != nil {
		return 0, 0
	}
	defer os.RemoveAll(scratch)
	known := j.goTestNames()
	for i, m := range ms {
		if ctx.Err() != nil {
			break
		}
		from := filepath.Join(scratch, fmt.Sprintf("m%d", i))
		if os.WriteFile(from, m.Source, 0o600) != nil {
			continue
		}
		logPath := func(k int) string { return filepath.Join(scratch, fmt.Sprintf("m%d-%d.log", i, k+1)) }
		put := []sandbox.ViewFile{{From: from, To: m.Path, Mode: 0o644}}
		r := j.request(j.holdouts, o.Cmds, logPath)
		r.Put, r.Lower, r.Note = put, o.Upper, nil
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
			verdict = j.mutantFailure(out, known, nil)
			break
		}
		switch verdict {
		case mutantCaught:
			caught++
			judged++
		case mutantSurvived:
			judged++
		}
	}
	return caught, judged
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
