package wave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Best of N (docs/design.md "Best of N"): a task's next build run is N
// runs at once, each on a layer of its own over the unchanged loop folder.
// Each attempt's layer is judged on its own; PickBest keeps the passing
// attempt the checks pin best, then with the smallest change; the others
// are kept on refs (CommitRef); when none passes, Failure is the next
// prompt's failure.

// AttemptsFor is how many attempts the next build run of a task gets: the
// plan's attempts from the task's first run, retry's best_of once the task
// failed (failed: its failed tries; same: the same failure in a row),
// whichever is more; 1 is an ordinary run.
func AttemptsFor(l *spec.Loop, attempts, failed, same int) int {
	n := max(attempts, l.RetryBestOf(failed, same), 1)
	return min(n, spec.MaxBestOf)
}

// Attempt is what the engine knows of one attempt once it is judged.
type Attempt struct {
	Index  int        // K, from 0: the attempt's slot in the wave
	Agent  spec.Agent // the agent it ran on (spec.Loop.AttemptAgent)
	Pass   bool       // the task's checks passed on the attempt's layer
	Signal string     // the failing checks' output ("" when it passed)
	Change Change
	Ref    string // where its layer was committed ("" when not)
	// Caught and Judged: its strength pass's mutants (strength.go;
	// Judged 0: not measured).
	Caught, Judged int
}

// Change is how much an attempt's layer changes: lines added and
// removed over the files it changes, and the files.
type Change struct {
	Lines int
	Files int
}

// PickBest chooses the attempt to keep: the passing attempt the checks
// pin best (the highest share of its mutants caught, when measured), then
// with the smallest change (fewest lines added and removed, then fewest
// files, then the lowest index). It returns its position in attempts, or false when no
// attempt passed.
func PickBest(attempts []Attempt) (int, bool) {
	best := -1
	for i, a := range attempts {
		if !a.Pass {
			continue
		}
		if best < 0 || smaller(a, attempts[best]) {
			best = i
		}
	}
	return best, best >= 0
}

func smaller(a, b Attempt) bool {
	if better, ok := stronger(a, b); ok {
		return better
	}
	if a.Change.Lines != b.Change.Lines {
		return a.Change.Lines < b.Change.Lines
	}
	if a.Change.Files != b.Change.Files {
		return a.Change.Files < b.Change.Files
	}
	return a.Index < b.Index
}

// MaxAttemptsFailure bounds the failure text of all attempts together
// (each attempt gets an equal share, its first lines kept).
const MaxAttemptsFailure = 12000

// Failure is the failure of a best-of in which no attempt passed:
// every attempt's failing checks, one after the other under a heading that
// names the attempt and its agent, as one text. The engine keeps it as
// its last failure, which the next build prompt puts in one
// fenced block (fence: defanged, so no attempt's output closes it).
func Failure(task string, attempts []Attempt) string {
	if len(attempts) == 0 {
		return ""
	}
	share := MaxAttemptsFailure / len(attempts)
	var b strings.Builder
	fmt.Fprintf(&b, "%d attempts of %s ran at once; none passed. Each attempt's failing checks:\n", len(attempts), task)
	for _, a := range attempts {
		agent := ""
		if a.Agent.Backend != "" {
			agent = " (" + AgentKey(a.Agent) + ")"
		}
		sig := strings.TrimRight(a.Signal, "\n")
		switch {
		case a.Pass:
			sig = "(passed)"
		case strings.TrimSpace(sig) == "":
			sig = "(the checks failed without output)"
		}
		fmt.Fprintf(&b, "\n## attempt %d%s\n%s\n", a.Index+1, agent, cutText(sig, share))
	}
	return strings.TrimRight(b.String(), "\n")
}

// cutText keeps the first n bytes of s, at a line's end where it can, and
// says how much was left out.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i]
	}
	for len(cut) > 0 && !utf8Start(s[len(cut)]) {
		cut = cut[:len(cut)-1]
	}
	return cut + fmt.Sprintf("\n… (%d more bytes of this attempt's output left out)", len(s)-len(cut))
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// LayerChange measures an attempt's layer (upper, over the loop folder
// dir): lines added and removed over the files it writes, removes or
// replaces (git diff --no-index --numstat for a file both sides hold; a
// new or removed file counts its lines; a binary file one), and the files.
// It reads the layer's files and their counterparts in dir only.
func LayerChange(ctx context.Context, dir, upper string) (Change, error) {
	entries, err := sandbox.LayerEntries(upper)
	if err != nil {
		return Change{}, err
	}
	var size Change
	var opaque []string // replaced folders: nothing of dir below them shows
	hidden := func(rel string) bool {
		for _, o := range opaque {
			if strings.HasPrefix(rel, o+"/") {
				return true
			}
		}
		return false
	}
	for _, e := range entries {
		below := filepath.Join(dir, filepath.FromSlash(e.Rel))
		if hidden(e.Rel) {
			below = "" // the folder's own file does not show through
		}
		switch e.What {
		case "replaced folder":
			if below != "" {
				n, f := treeLines(below)
				size.Lines += n
				size.Files += f
			}
			opaque = append(opaque, e.Rel)
		case "removed":
			if below != "" {
				n, f := treeLines(below)
				size.Lines += n
				size.Files += f
			}
		case "written", "link":
			size.Files++
			n, err := fileChange(ctx, below, filepath.Join(upper, filepath.FromSlash(e.Rel)))
			if err != nil {
				return Change{}, err
			}
			size.Lines += n
		}
	}
	return size, nil
}

// fileChange is the lines added and removed from the file below (a path in
// the loop folder; "" or missing: none) to the file above (in the layer).
func fileChange(ctx context.Context, below, above string) (int, error) {
	bi, err := os.Lstat(below)
	if below == "" || err != nil || !bi.Mode().IsRegular() {
		n := fileLines(above)
		if below != "" && err == nil {
			n += fileLines(below) // a link or folder replaced by a file
		}
		return n, nil
	}
	if ai, err := os.Lstat(above); err != nil || !ai.Mode().IsRegular() {
		return fileLines(below) + 1, nil // a file replaced by a link
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", safegit.Args("diff", "--no-index", "--numstat", "--no-ext-diff", "--no-textconv", "--no-renames", "--", below, above)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return 0, fmt.Errorf("git diff --no-index: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	// "ADDED\tREMOVED\tpath", or "-\t-\tpath" for a binary file.
	f := strings.Fields(out.String())
	if len(f) < 2 {
		return 0, nil // the same content
	}
	if f[0] == "-" {
		return 1, nil
	}
	a, _ := strconv.Atoi(f[0])
	r, _ := strconv.Atoi(f[1])
	return a + r, nil
}

// fileLines counts a file's lines (a last line without a newline too); a
// binary file (a NUL byte) or a link counts one.
func fileLines(p string) int {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0
	}
	if !fi.Mode().IsRegular() {
		return 1
	}
	data, err := os.ReadFile(p)
	if err != nil || len(data) == 0 {
		return 0
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return 1
	}
	n := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// treeLines is the lines and files under p (a file or a folder of the
// loop folder) that a removal takes away.
func treeLines(p string) (lines, files int) {
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		lines += fileLines(q)
		files++
		return nil
	})
	return lines, files
}

// AttemptEvent is the attempt_judged record of attempt a, one of n
// attempts of task; kept says it is the attempt applied. Its message is
// the line the report shows.
func AttemptEvent(task string, n int, a Attempt, kept bool) record.Event {
	kind, verdict := "failed", "failed"
	switch {
	case kept:
		kind, verdict = "kept", "passed, kept"
	case a.Pass:
		kind, verdict = "passed", "passed, not kept (a better pinned or smaller passing change was)"
	}
	msg := fmt.Sprintf("%s attempt %d of %d (%s): %s; %d lines in %d files", task, a.Index+1, n, AgentKey(a.Agent), verdict, a.Change.Lines, a.Change.Files) + StrengthNote(a)
	if a.Ref != "" {
		msg += "; on " + a.Ref
	}
	return record.Event{Event: record.AttemptJudged, Task: task, Attempt: a.Index + 1, Backend: a.Agent.Backend, Model: a.Agent.Model,
		Pass: record.Bool(a.Pass), Kind: kind, Ref: a.Ref, FailureSignal: a.Signal,
		BestOf: &record.BestOf{Of: n, Lines: a.Change.Lines, Files: a.Change.Files}, Message: msg}
}
