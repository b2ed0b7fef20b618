package review

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/textcut"
)

// askReviewer runs a reviewer (a fresh process) for a JSON answer, and asks
// once more when the answer is invalid. parse validates the JSON.
func (s *Shape) askReviewer(ctx context.Context, task, prompt, keepRel string, parse func([]byte) []string) (ok bool, invalid []string, err error) {
	return s.AskJSON(ctx, "reviewer", task, prompt, keepRel, parse)
}

// AskJSON runs a fresh agent of phase (a reviewer, the auditor) for a
// JSON answer, and asks once more when the answer is invalid. parse
// validates the JSON; a valid answer is kept at keepRel (under the
// engine's records). ok says an answer was valid; invalid is why the last
// one was refused.
func (s *Shape) AskJSON(ctx context.Context, phase, task, prompt, keepRel string, parse func([]byte) []string) (ok bool, invalid []string, err error) {
	// The reviewer writes where agents may write (output/review/); a valid
	// answer is kept in the engine's records, where they may not.
	outRel := AgentOutput(keepRel)
	out := s.path(outRel)
	os.MkdirAll(filepath.Dir(out), 0o755)
	os.MkdirAll(filepath.Dir(s.path(keepRel)), 0o700)
	for attempt := 1; attempt <= 2; attempt++ {
		if _, err := os.Stat(out); err == nil {
			os.Rename(out, loopdir.UniquePath(strings.TrimSuffix(out, ".json")+".stale.json"))
		}
		p, t := prompt, task
		if attempt == 2 {
			p += retryNote(invalid, outRel)
			t += "-again"
		}
		run, err := s.h.RunAgent(ctx, phase, t, p)
		if err != nil {
			return false, invalid, err
		}
		var changed []string
		tmp, _ := guard.RelInside(s.dir, sandbox.TempDir(s.dir))
		for _, f := range run.Changed {
			if f != filepath.ToSlash(outRel) && (tmp == "" || f != tmp+"/" && !strings.HasPrefix(f, tmp+"/")) {
				changed = append(changed, f) // its answer is the one file it writes; its temporary folder is its own
			}
		}
		if len(changed) > 0 {
			s.h.Emit(record.Event{Event: record.Warning, Phase: phase, Task: t, FilesChanged: changed,
				Message: "the " + phase + " changed files it should only read: " + strings.Join(changed, ", ")})
		}
		data, _ := os.ReadFile(out)
		source := outRel
		if len(strings.TrimSpace(string(data))) == 0 {
			data = extractJSON(reviewerText(run.Result))
			source = "the final message"
		}
		errs := parse(data)
		if len(errs) == 0 {
			guard.WriteFileAtomic(s.path(keepRel), s.h.Redactor().Bytes(append(bytes.TrimRight(data, "\n"), '\n')))
			return true, nil, nil
		}
		invalid = errs
		if len(data) > 0 {
			os.WriteFile(loopdir.UniquePath(strings.TrimSuffix(s.path(keepRel), ".json")+fmt.Sprintf(".invalid-%d.txt", attempt)), s.h.Redactor().Bytes(data), 0o600)
			os.Remove(out)
		}
		s.h.Emit(record.Event{Event: record.Review, Kind: "invalid", Phase: phase, Task: t, Attempt: attempt, Errors: errs,
			Message: fmt.Sprintf("the %s's output (from %s) is not valid: %s; %s", phase, source, textcut.Cut(strings.Join(errs, "; "), 300),
				map[bool]string{true: "asking again", false: "giving up on this review"}[attempt == 1])})
	}
	return false, invalid, nil
}

// AgentOutput is where a reviewer writes the answer the engine keeps at
// keepRel (under working-records/, which agents cannot write).
func AgentOutput(keepRel string) string {
	name := strings.TrimPrefix(filepath.ToSlash(keepRel), loopdir.RecordsDir+"/"+loopdir.ReviewDir+"/")
	return filepath.Join(loopdir.OutputDir, "review", strings.ReplaceAll(name, "/", "-"))
}

func reviewerText(r agent.Result) string { return r.FinalMessage }
