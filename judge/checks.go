package judge

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/testcount"
)

// SignalLines is the most lines a check contributes to the failure signal.
const SignalLines = 40

// failLine says whether line holds FAIL, Error or not ok (the regular
// expression `FAIL|Error|not ok`, without one: it reads every line a check
// prints).
func failLine(line string) bool {
	return strings.Contains(line, "FAIL") || strings.Contains(line, "Error") || strings.Contains(line, "not ok")
}

// CheckResult is one check command's outcome, with its failure signal.
type CheckResult struct {
	record.Check
	Lines []string         // failure signal lines
	Tests testcount.Counts // the test results its output shows, if any
	// Failed names the failing tests its output shows (a runner's output
	// the engine can read), for telling which tests flipped.
	Failed []string
	// FailedMore counts failing tests past those named.
	FailedMore int
	// NegatedNotRun says why a negated check that exited 0 failed: a
	// program it negates could not run (checkcmd.NegatedRunFailed).
	NegatedNotRun string
}

// Starter makes the process of a check: the shell line run in dir with env,
// confined (sandbox.CheckBox.Command); cleanup runs after it ended.
type Starter func(ctx context.Context, dir, line string, env []string) (cmd *exec.Cmd, cleanup func(), err error)

// runCheck runs one shell command of r in r's tree, its process made by
// start (nil: the shell line run as this process's user, unconfined),
// saving its whole output to outPath, and keeps in memory only what the
// failure signal needs: the failing tests a test runner's output names,
// with their messages (testcount.Failures); else the lines matching FAIL,
// Error or not ok (up to SignalLines), else the last SignalLines lines.
func runCheck(ctx context.Context, start Starter, r *CheckRequest, command, outPath string) CheckResult {
	dir, env, timeout, red := r.Tree, r.Env, r.Loop.CheckTimeout.D(), r.Redactor
	began := time.Now()
	res := CheckResult{Check: record.Check{Command: command, Output: outPath}}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	var cleanup func()
	defer func() {
		if cleanup != nil {
			cleanup()
		}
	}()
	if start != nil && r.served != nil {
		// The box runs its checks in its server (sandbox.CheckBox.Run):
		// no process of the check's own here.
	} else if start == nil {
		cmd = exec.CommandContext(cctx, "/bin/sh", "-c", command)
		cmd.Dir = dir
		cmd.Env = env
		cmd.SysProcAttr = proc.GroupAttr()
	} else {
		c, done, err := start(cctx, dir, command, env)
		if err != nil {
			// Fails closed: a check that cannot be confined does not run.
			res.ExitCode = 127
			res.Lines = []string{"the check's sandbox cannot be made: " + err.Error()}
			res.Signal = res.Lines[0]
			res.DurationMS = time.Since(began).Milliseconds()
			return res
		}
		cmd, cleanup = c, done
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = proc.GroupAttr()
		}
	}
	pr, pw := io.Pipe()
	// Redacted before anything reads it: the log, the failure signal and
	// the next prompt never see a secret the check printed.
	rw := red.Writer(pw)
	if cmd != nil {
		cmd.Cancel = func() error { return proc.KillGroup(cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
		cmd.Stdout = rw
		cmd.Stderr = rw
	}
	out, _ := os.OpenFile(outPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	tests, _ := testcount.NewParser(r.Loop.TestSummaries)

	var matched, tail []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The log is written through a buffer, flushed each time the
		// scanner reads the pipe again: as current as a write per line,
		// without a write per line.
		var log *bufio.Writer
		src := io.Reader(pr)
		if out != nil {
			log = bufio.NewWriter(out)
			src = flushBefore{pr, log}
		}
		sc := bufio.NewScanner(src)
		sc.Buffer(nil, 1<<20) // grows from 4 KiB as long lines need
		for sc.Scan() {
			if tests != nil {
				tests.Line(sc.Bytes())
			}
			line := sc.Text()
			if log != nil {
				log.WriteString(line)
				log.WriteByte('\n')
			}
			if len(line) > 500 {
				line = line[:500] + "…"
			}
			if failLine(line) && len(matched) < SignalLines {
				matched = append(matched, line)
			}
			tail = append(tail, line)
			if len(tail) > SignalLines {
				tail = tail[1:]
			}
		}
		if log != nil {
			log.Flush()
		}
		io.Copy(io.Discard, pr)
	}()
	var err error
	var use sandbox.Usage
	if cmd != nil {
		err = cmd.Run()
		if cleanup != nil {
			// Its processes ended (its cgroup's CPU read), before the
			// figure is taken.
			cleanup()
			cleanup = nil
		}
		use = r.box.Usage(cmd)
	} else {
		use, err = r.runServed(ctx, cctx, command, rw)
	}
	res.CPUMS, res.CPUFrom = use.CPU.Milliseconds(), use.From
	rw.Close()
	pw.Close()
	<-done
	if out != nil {
		out.Close()
	}
	res.DurationMS = time.Since(began).Milliseconds()
	res.ExitCode = 0
	if err != nil {
		var ee *exec.ExitError
		var se servedExit
		if errors.As(err, &ee) {
			res.ExitCode = ee.ExitCode()
		} else if errors.As(err, &se) {
			res.ExitCode = se.code
		} else {
			res.ExitCode = -1
		}
		if res.ExitCode == -1 || res.ExitCode == 0 {
			res.ExitCode = 127
			if cctx.Err() == context.DeadlineExceeded {
				res.TimedOut = true
				res.ExitCode = 124
			}
		}
	}
	res.Pass = res.ExitCode == 0
	if res.Pass && strings.Contains(command, "!") {
		// A negated command that could not run passes under `!`: the
		// check judged nothing, and fails.
		why := checkcmd.NegatedRunFailed(command, readLog(outPath))
		if why == "" && r.Lower == "" && len(r.Put) == 0 && len(r.Setup) == 0 {
			// The tree the check saw is the folder as it is (nothing laid
			// under or placed in its view, no setup before it): a quiet
			// grep's file that is not there was not there for it either.
			why = checkcmd.NegatedGrepMissing(command, dir)
		}
		if why != "" {
			res.Pass, res.ExitCode = false, 1
			res.NegatedNotRun = why
			matched, tail = []string{"the check cannot fail as it ran: " + why}, nil
		}
	}
	if tests != nil {
		res.Tests = tests.Counts()
		if res.Tests.Known {
			res.Check.Tests = &record.TestCounts{Runner: res.Tests.Runner, Passed: res.Tests.Passed, Failed: res.Tests.Failed, Skipped: res.Tests.Skipped}
		}
	}
	if !res.Pass {
		lines := matched
		if len(lines) == 0 {
			lines = tail
		}
		if tests != nil {
			// A runner's output names its failing tests: each with its
			// message, which the lines above often miss.
			if fs, more := tests.Failures(); len(fs) > 0 {
				lines = testFailureLines(fs, more, red)
				for _, f := range fs {
					res.Failed = append(res.Failed, red.String(f.Name))
				}
				res.FailedMore = more
			}
		}
		if res.TimedOut {
			lines = append([]string{"check timed out after " + timeout.String()}, lines...)
			if len(lines) > SignalLines {
				lines = lines[:SignalLines]
			}
		}
		if len(lines) == 0 {
			lines = []string{"(the check printed nothing and exited " + itoa(res.ExitCode) + ")"}
		}
		res.Lines = lines
		res.Signal = strings.Join(lines, "\n")
	}
	return res
}

// flushBefore is a check's output, its log's buffer flushed before each
// read of it.
type flushBefore struct {
	r   io.Reader
	log *bufio.Writer
}

func (f flushBefore) Read(p []byte) (int, error) {
	f.log.Flush()
	return f.r.Read(p)
}

// servedExit is a check's exit status from a box's server.
type servedExit struct{ code int }

func (e servedExit) Error() string { return "exit status " + itoa(e.code) }

// runServed runs command in r's box's server (accounted as the box's
// other checks are), its output to w, until cctx ends: nil when it exited
// 0, a servedExit for another status, another error when it did not run;
// and its CPU (the box's cgroup's across it).
func (r *CheckRequest) runServed(ctx, cctx context.Context, command string, w io.Writer) (sandbox.Usage, error) {
	code, use, err := r.served.RunUsage(cctx, r.Tree, accountedLine(ctx, command), r.Env, w)
	if cctx.Err() != nil {
		return use, cctx.Err() // killed: timed out, or the run ended
	}
	if err != nil {
		fmt.Fprintf(w, "the check's sandbox: %v\n", err)
		return use, err
	}
	if code != 0 {
		return use, servedExit{code}
	}
	return use, nil
}

// testFailureLines is the failure signal of a check whose output names its
// failing tests: "FAIL: name" for each, its message lines under it,
// indented, SignalLines lines in all. The cases of one parametrized test
// (testcount.CaseOf) are grouped: the first two are shown, then one line
// "… and N more cases of NAME (ids …)". Every test shown gets its first
// message line before any gets a second; the tests past the cap are
// counted. The lines were redacted as the output was read; a runner's
// decoded text (go test -json) is redacted again.
func testFailureLines(fs []testcount.Failure, more int, red *redact.Redactor) []string {
	entries := caseEntries(fs)
	shown, tails := len(entries), 0
	for _, e := range entries {
		if e.tail != "" {
			tails++
		}
	}
	for shown > 0 && shown+tails+min(more, 1) > SignalLines {
		shown--
		e := entries[shown]
		more += 1 + e.rest
		if e.tail != "" {
			tails--
		}
	}
	budget := SignalLines - shown - tails - min(more, 1)
	allot := make([]int, shown)
	for budget > 0 {
		gave := false
		for i := 0; i < shown && budget > 0; i++ {
			if allot[i] < len(entries[i].f.Lines) {
				allot[i]++
				budget--
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	var out []string
	for i, e := range entries[:shown] {
		out = append(out, cutLine("FAIL: "+red.String(e.f.Name)))
		for _, l := range e.f.Lines[:allot[i]] {
			out = append(out, cutLine("    "+red.String(l)))
		}
		if e.tail != "" {
			out = append(out, cutLine(red.String(e.tail)))
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("… and %d more failing tests", more))
	}
	return out
}

// caseShown is how many cases of one parametrized test the signal shows in
// full; maxCaseIDs the most bytes of the others' ids it lists.
const (
	caseShown  = 2
	maxCaseIDs = 200
)

// caseEntry is a failing test the signal shows; tail, on the last shown
// case of a parametrized test, counts its rest cases (rest) and names them.
type caseEntry struct {
	f    testcount.Failure
	tail string
	rest int
}

// caseEntries orders the failing tests for the signal: each in the order
// its test first failed, the cases of one parametrized test together, the
// first caseShown of them shown and the rest counted on one line.
func caseEntries(fs []testcount.Failure) []caseEntry {
	type group struct {
		family  string
		members []int
		ids     []string
	}
	var groups []*group
	byFamily := map[string]*group{}
	for i, f := range fs {
		fam, id, ok := testcount.CaseOf(f)
		if !ok {
			groups = append(groups, &group{members: []int{i}})
			continue
		}
		key := f.Runner + "\x00" + fam
		g := byFamily[key]
		if g == nil {
			g = &group{family: fam}
			byFamily[key] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
		g.ids = append(g.ids, id)
	}
	var out []caseEntry
	for _, g := range groups {
		n := min(len(g.members), caseShown)
		for k, i := range g.members[:n] {
			e := caseEntry{f: fs[i]}
			if rest := len(g.members) - n; k == n-1 && rest > 0 {
				e.rest = rest
				e.tail = fmt.Sprintf("… and %d more case%s of %s (ids %s)", rest, plural(rest), g.family, caseIDs(g.ids[n:]))
			}
			out = append(out, e)
		}
	}
	return out
}

// caseIDs lists ids, cut at maxCaseIDs bytes.
func caseIDs(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		if b.Len()+len(id) > maxCaseIDs {
			b.WriteString("…")
			break
		}
		b.WriteString(id)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// cutLine keeps a signal line to 500 bytes.
func cutLine(line string) string {
	if len(line) > 500 {
		return strings.ToValidUTF8(line[:500], "") + "…"
	}
	return line
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?`), "<time>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d(\.\d+)?\b`), "<time>"},
	{regexp.MustCompile(`(/tmp|/var/folders|/private/var|/var/tmp)/\S*`), "<tmp>"},
	{regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`), "<addr>"},
	{regexp.MustCompile(`(?i)\b(pid|process|goroutine)[ =:]*\d+`), "$1 <n>"},
	{regexp.MustCompile(`\[\d+\]`), "[<n>]"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`), "<dur>"},
	{regexp.MustCompile(`\(\d+(\.\d+)?s\)`), "(<dur>)"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

// Normalize removes what changes between two runs of the same failure:
// timestamps, durations, temporary paths, addresses and process ids.
func Normalize(line string) string {
	for _, n := range normalizers {
		line = n.re.ReplaceAllString(line, n.with)
	}
	return strings.TrimSpace(line)
}

// Signature is a short stable hash of a failure signal, normalized.
func Signature(signal string) string {
	var b strings.Builder
	for _, l := range strings.Split(signal, "\n") {
		if n := Normalize(l); n != "" {
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:6])
}

func itoa(n int) string { return strconv.Itoa(n) }

// FailLine says whether a line of a check's output says what failed: it
// names FAIL, Error or not ok.
func FailLine(line string) bool { return failLine(line) }
