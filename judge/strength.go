package judge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/mutate"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/tells"
)

// Verifier strength (verify_strength:). Once the clean room passed, the
// lines the loop changed since its base tree (a git tree object the engine
// wrote before the first agent run) are mutated with package mutate, and
// the DONE gate's checks run on each mutant in a tree of its own: under
// bubblewrap a copy-on-write view of the loop folder with the mutated file
// placed in it (sandbox.CheckBox, Put), else a copy of the loop folder in a
// temporary folder per worker. The loop folder is never written. A mutant
// is caught when a check fails on it, survives when every check passes, and
// is "not compiled" when a check fails because the mutant does not build
// (go's [build failed], a compiler's error line): neither caught nor
// survived. The cost grows with the change, not the checkout: git compares
// tree objects (equal subtrees are skipped by their hash), only changed
// files are read, only changed lines mutated.

// StrengthOptions say how to run a strength pass.
type StrengthOptions struct {
	// Base is the git tree (or commit) the loop started from.
	Base string
	// Cmds are the DONE gate's checks.
	Cmds []string
	// Kind is the loop's sandbox kind (sandbox.Resolve of the loop file's
	// sandbox:): Bwrap with layers gives a view per mutant; anything else
	// a copy per worker, its checks confined by Landlock when Kind is
	// Landlock.
	Kind string
	// Min is the share the checks must catch (0: none required).
	Min float64
	// Budget bounds the whole pass; MaxMutants the mutants made.
	Budget     time.Duration
	MaxMutants int
	// Paths are the files the loop changed, when the engine knows them
	// all (nil: the whole tree is compared with Base).
	Paths []string
	// Workers run mutants at once (0: from the machine's CPUs, at most 4).
	Workers int
	// Skip says a changed file is not mutated (the clean room's set-aside
	// files, the holdout files).
	Skip func(rel string) bool
}

// ChangedLines lists the lines of dir's working tree (tracked and
// untracked files, ignored ones and the records left out) added or changed
// since the tree base: file → lines (1-based, ascending), test files left
// out. It costs git's write of the tree (a stat of the tracked files) and a
// diff of two trees, which skips every subtree whose hash is equal.
//
// With paths (the files the agent's runs changed, which the engine keeps),
// only those are read from the working tree and compared: git stats and
// diffs them alone, and the cost grows with the change, not the checkout.
// When one of them cannot be taken (an ignored path, a file made and
// removed again) the whole tree is.
func ChangedLines(ctx context.Context, dir, base string, paths []string) (map[string][]int, error) {
	var now string
	var err error
	if paths != nil {
		// Removed files have no line to mutate.
		var there []string
		for _, p := range paths {
			if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
				there = append(there, p)
			}
		}
		paths = there
		now, err = safegit.SnapshotPaths(ctx, dir, paths)
	}
	if paths == nil || err != nil {
		paths = nil
		if now, err = safegit.SnapshotTree(ctx, dir); err != nil {
			return nil, fmt.Errorf("the tree as it is now: %w", err)
		}
	}
	return DiffLines(ctx, dir, base, now, paths)
}

// DiffLines lists the lines added or changed from tree a to tree b (only
// in paths, when given), test files left out.
func DiffLines(ctx context.Context, dir, a, b string, paths []string) (map[string][]int, error) {
	// --relative: a loop folder inside a repository sees its own paths.
	args := []string{"diff", "--relative", "--no-color", "--no-ext-diff", "--no-renames", "--unified=0", "--diff-filter=AM", "--src-prefix=a/", "--dst-prefix=b/", a, b}
	if paths != nil {
		if len(paths) == 0 {
			return map[string][]int{}, nil
		}
		args = append(append(args, "--"), literalPaths(paths)...)
	}
	out, err := safegit.Run(ctx, dir, nil, args...)
	if err != nil {
		return nil, err
	}
	return parseDiffLines(out), nil
}

func literalPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

var hunkHead = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`)

// parseDiffLines reads a --unified=0 diff into file → new lines.
func parseDiffLines(diff string) map[string][]int {
	lines := map[string][]int{}
	file := ""
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = ""
			if p, ok := strings.CutPrefix(l, "+++ b/"); ok && !strings.HasPrefix(p, "\"") && !tells.IsTestFile(p) {
				file = p
			}
		case strings.HasPrefix(l, "@@ ") && file != "":
			m := hunkHead.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			start, _ := strconv.Atoi(m[1])
			n := 1
			if m[2] != "" {
				n, _ = strconv.Atoi(m[2])
			}
			for i := 0; i < n; i++ {
				lines[file] = append(lines[file], start+i)
			}
		}
	}
	return lines
}

// StrengthMutants makes the mutants of the changed lines of dir, at most
// max in all, taken a file at a time in turn (every file gets its first
// mutant before any gets a second); it returns them and the files and
// lines mutated.
func StrengthMutants(dir string, changed map[string][]int, skip func(string) bool, max int) ([]mutate.Mutant, int, int, error) {
	var files []string
	for f := range changed {
		if skip == nil || !skip(f) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	var per [][]mutate.Mutant
	nFiles, nLines := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			continue // removed since, or not a regular file
		}
		ms, err := mutate.MutantsMax(f, src, changed[f], max)
		if err != nil {
			return nil, 0, 0, err
		}
		if len(ms) > 0 {
			per = append(per, ms)
			nFiles++
			nLines += len(changed[f])
		}
	}
	var out []mutate.Mutant
	for i := 0; len(out) < max || max <= 0; i++ {
		took := false
		for _, ms := range per {
			if i < len(ms) && (max <= 0 || len(out) < max) {
				out = append(out, ms[i])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out, nFiles, nLines, nil
}

// mutantResult is what one mutant's checks did.
type mutantResult int

const (
	mutantNotRun mutantResult = iota
	mutantCaught
	mutantSurvived
	mutantNotCompiled
)

// notCompiled finds a build failure in a failing check's output.
var notCompiled = regexp.MustCompile(`\[build failed\]|\[setup failed\]|(?m)^\S+\.go:\d+:\d+: (declared and not used|.* declared and not used|"[^"]*" imported and not used|missing return|duplicate case|.*overflows)|error TS\d{4}:`)

// Strength runs a strength pass and records it (a verify_strength
// record); the caller decides what it means for the loop.
func (j *Judge) Strength(ctx context.Context, o StrengthOptions) *record.Strength {
	start := time.Now()
	rec := &record.Strength{Min: o.Min}
	defer func() {
		rec.DurationMS = time.Since(start).Milliseconds()
		cycle, iteration := j.stamp()
		j.emit(record.Event{Event: record.VerifyStrength, Cycle: cycle, Iteration: iteration, Strength: rec})
	}()
	if o.Base == "" {
		rec.Error = "the loop's starting tree is not known (the loop folder is not in a git repository, or the loop started before verify_strength was on)"
		return rec
	}
	if o.Budget <= 0 {
		o.Budget = 5 * time.Minute
	}
	if o.MaxMutants <= 0 {
		o.MaxMutants = mutate.DefaultMax
	}
	changed, err := ChangedLines(ctx, j.Dir, o.Base, o.Paths)
	if err != nil {
		rec.Error = "the changed lines: " + err.Error()
		return rec
	}
	ms, files, lines, err := StrengthMutants(j.Dir, changed, o.Skip, o.MaxMutants)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Files, rec.Lines, rec.Mutants = files, lines, len(ms)
	results := make([]mutantResult, len(ms))
	bctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	view := o.Kind == sandbox.Bwrap && sandbox.LayerProbe() == nil
	rec.Mode = "copy"
	if view {
		rec.Mode = "view"
	}
	cpu := &cpuTally{}
	defer func() {
		u := cpu.total()
		rec.CPUMS, rec.CPUFrom = u.CPU.Milliseconds(), u.From
	}()
	if len(ms) > 0 && len(o.Cmds) > 0 {
		j.flush()
		// Caught only by a named test of the loop's or the holdout's, a
		// Go one accounted by the engine's test main (strength_named.go).
		acct, known := j.strengthAccount()
		defer acct.done()
		bctx = context.WithValue(bctx, strengthKey{}, strengthCtx{acct: acct, known: known, cpu: cpu})
		if acct != nil && len(acct.dirs) > 0 {
			bctx = context.WithValue(bctx, goAccountCtx{}, acct)
		}
		if err := j.runMutants(bctx, o, ms, results, view); err != nil {
			rec.Error = err.Error()
		}
	}
	for i, r := range results {
		switch r {
		case mutantCaught:
			rec.Caught++
		case mutantNotCompiled:
			rec.NotCompiled++
		case mutantNotRun:
			rec.NotRun++
		case mutantSurvived:
			m := ms[i]
			rec.Survivors = append(rec.Survivors, record.Survivor{File: m.Path, Line: m.Line, Column: m.Column, Op: string(m.Op), Mutation: m.Description})
		}
	}
	if judged := rec.Caught + len(rec.Survivors); judged > 0 {
		rec.Score = float64(rec.Caught) / float64(judged)
	}
	// Under a minimum, a pass that judged no mutant fails closed: a change
	// in a language without operators, or one the checks could not run on,
	// shows nothing of the checks' strength.
	judged := rec.Caught + len(rec.Survivors)
	rec.Pass = rec.Error == "" && (o.Min <= 0 || (judged > 0 && rec.Score >= o.Min))
	return rec
}

// runMutants runs the checks on each mutant, workers at a time.
func (j *Judge) runMutants(ctx context.Context, o StrengthOptions, ms []mutate.Mutant, results []mutantResult, view bool) error {
	workers := o.Workers
	if workers <= 0 {
		workers = min(max(runtime.NumCPU(), 1), 4)
	}
	workers = min(workers, len(ms))
	base := loopdir.Private(j.Priv).StrengthScratch()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("the pass's scratch folder: %w", err)
	}
	scratch, err := os.MkdirTemp(base, "pass-")
	if err != nil {
		return fmt.Errorf("the pass's scratch folder: %w", err)
	}
	defer os.RemoveAll(scratch)
	runners := make([]func(mutate.Mutant) mutantResult, 0, workers)
	for w := 0; w < workers; w++ {
		run, done, err := j.mutantRunner(ctx, o, filepath.Join(scratch, strconv.Itoa(w)), view)
		if err != nil {
			return err
		}
		defer done()
		runners = append(runners, run)
	}
	// The control: the checks must pass on the tree as it is, in the same
	// kind of tree and sandbox, or every failure would count as caught.
	control := ms[0]
	orig, err := os.ReadFile(filepath.Join(j.Dir, filepath.FromSlash(control.Path)))
	if err != nil {
		return err
	}
	control.Source = orig
	if r := runners[0](control); r != mutantSurvived {
		if ctx.Err() != nil {
			return nil // the budget ran out: the mutants are not run
		}
		return errors.New("the checks fail on the unmutated tree in the pass's own tree and sandbox: no mutant can be judged there")
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range ms {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for _, run := range runners {
		wg.Add(1)
		go func(run func(mutate.Mutant) mutantResult) {
			defer wg.Done()
			for i := range next {
				results[i] = run(ms[i])
			}
		}(run)
	}
	wg.Wait()
	return nil
}

// mutantRunner gives a worker its way of running the checks on a mutant.
func (j *Judge) mutantRunner(ctx context.Context, o StrengthOptions, scratch string, view bool) (func(mutate.Mutant) mutantResult, func(), error) {
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, nil, err
	}
	hide := append([]string{loopdir.RecordsDir}, j.holdouts...)
	if j.SetAside != nil {
		aside, err := j.SetAside()
		if err != nil {
			return nil, nil, err
		}
		hide = append(hide, aside...)
	}
	network, _ := boxNetworks(j.spec()) // the loop's checks.network, as for every check (an allowlist: none here)
	if view {
		return func(m mutate.Mutant) mutantResult {
			from := filepath.Join(scratch, "mutant")
			mode := os.FileMode(0o644)
			if fi, err := os.Stat(filepath.Join(j.Dir, filepath.FromSlash(m.Path))); err == nil {
				mode = fi.Mode().Perm()
			}
			if err := os.WriteFile(from, m.Source, 0o600); err != nil {
				return mutantNotRun
			}
			put := []sandbox.ViewFile{{From: from, To: m.Path, Mode: mode}}
			if a := strengthOf(ctx).acct; a != nil {
				put = append(put, a.put...)
			}
			box, err := sandbox.NewCheckBox(sandbox.CheckBoxOptions{Kind: sandbox.Bwrap, Tree: j.Dir, Remove: hide, Network: network,
				Put: put, Hide: []string{j.Priv}, Scratch: scratch, Cache: checkCache(j.spec()), Over: pyGuardOver(os.Environ(), j.Dir)})
			if err != nil {
				return mutantNotRun
			}
			defer box.Close()
			return j.checkMutant(ctx, box, j.Dir, o.Cmds)
		}, func() {}, nil
	}
	// A copy of the loop folder for this worker, the mutated file written
	// into it and put back after each mutant.
	room := filepath.Join(scratch, filepath.Base(j.Dir))
	skip := map[string]bool{}
	for _, h := range hide {
		skip[h] = true
	}
	if err := sandbox.CopyTree(j.Dir, room, skip); err != nil {
		return nil, nil, fmt.Errorf("copy the loop folder: %w", err)
	}
	placeAccount(strengthOf(ctx).acct, room)
	kind := sandbox.Off
	if o.Kind == sandbox.Landlock {
		kind = sandbox.Landlock
	}
	box, err := sandbox.NewCheckBox(sandbox.CheckBoxOptions{Kind: kind, Tree: room, Hide: []string{j.Priv}, Scratch: scratch, Network: network, Cache: checkCache(j.spec())})
	if err != nil {
		return nil, nil, err
	}
	return func(m mutate.Mutant) mutantResult {
		p := filepath.Join(room, filepath.FromSlash(m.Path))
		orig, err := os.ReadFile(p)
		if err != nil {
			return mutantNotRun
		}
		if err := os.WriteFile(p, m.Source, 0o644); err != nil {
			return mutantNotRun
		}
		defer os.WriteFile(p, orig, 0o644)
		return j.checkMutant(ctx, box, room, o.Cmds)
	}, func() { box.Close() }, nil
}

// checkMutant runs cmds in box, in order, until one fails.
func (j *Judge) checkMutant(ctx context.Context, box *sandbox.CheckBox, dir string, cmds []string) mutantResult {
	timeout := j.spec().CheckTimeout.D()
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	for _, c := range cmds {
		if ctx.Err() != nil {
			return mutantNotRun
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var out capped
		err := j.runMutantCheck(ctx, cctx, box, dir, c, &out)
		timedOut := cctx.Err() == context.DeadlineExceeded
		cancel()
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return mutantNotRun // the budget ran out under it: no verdict
		}
		var ee *exec.ExitError
		var se servedExit
		if !errors.As(err, &ee) && !errors.As(err, &se) && !timedOut {
			return mutantNotRun // it could not start
		}
		if timedOut {
			// Code that hangs when the source it embeds changed would
			// catch every mutant: a timeout judges nothing.
			return mutantNotRun
		}
		s := strengthOf(ctx)
		return j.mutantFailure(out.Bytes(), s.known, s.acct)
	}
	return mutantSurvived
}

// runMutantCheck runs check c of a mutant in box, in its server where it
// has one, its output to out: nil when it passed, a servedExit or an
// exec.ExitError when it failed, another error when it did not run.
func (j *Judge) runMutantCheck(ctx, cctx context.Context, box *sandbox.CheckBox, dir, c string, out *capped) error {
	env := j.checkEnv()
	if box.Serves(env) {
		code, use, err := box.RunUsage(cctx, dir, accountedLine(ctx, c), env, out)
		strengthOf(ctx).cpu.add(use)
		switch {
		case err != nil:
			return err
		case code != 0:
			return servedExit{code}
		}
		return nil
	}
	cmd, done, err := accountedStarter(ctx, box.Command)(cctx, dir, c, env)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = proc.GroupAttr()
	}
	cmd.Cancel = func() error { return proc.KillGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	done() // its processes ended, its cgroup's CPU read
	strengthOf(ctx).cpu.add(box.Usage(cmd))
	return err
}

// cpuTally sums the CPU of a pass's checks, run by its workers at once.
type cpuTally struct {
	mu  sync.Mutex
	sum sandbox.Usage
}

func (t *cpuTally) add(u sandbox.Usage) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sum = t.sum.Add(u)
}

func (t *cpuTally) total() sandbox.Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sum
}

// capped keeps the first 1 MiB written to it.
type capped struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := 1<<20 - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Bytes()
}

// StrengthPrompt is what the next prompt says of the survivors of a pass
// below its minimum: one line each, and what to do.
func StrengthPrompt(s *record.Strength, most int) string {
	if s == nil || len(s.Survivors) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The checks are too weak: they caught %d of %d mutants of the lines you changed (%.0f%%; at least %.0f%% needed). Each mutant below is your code with one change the checks did not notice. For each, write a test that fails on this mutant and passes on your code (do not change the code to dodge it):\n", s.Caught, s.Caught+len(s.Survivors), s.Score*100, s.Min*100)
	for i, sv := range s.Survivors {
		if i == most {
			fmt.Fprintf(&b, "… and %d more\n", len(s.Survivors)-most)
			break
		}
		b.WriteString("- " + sv.String() + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
