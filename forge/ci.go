package forge

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// CI is what the forge's CI said of a commit, once every check finished
// or the wait ran out.
type CI struct {
	// Reported: at least one check run or status came.
	Reported bool
	Checks   []Check
	// Failing are the red checks, each with the failing lines of its log
	// (check runs only: a status has no log).
	Failing []FailingJob
	// Missing are required checks that never came; Pending those that had
	// not finished when the wait ran out.
	Missing, Pending []string
}

// FailingJob is a red check and the lines of its log that say why.
type FailingJob struct {
	Name  string
	URL   string
	Lines []string
}

// Green says whether the CI is a pass: something reported, nothing red,
// nothing pending, nothing required missing.
func (c CI) Green() bool {
	return c.Reported && len(c.Failing) == 0 && len(c.Missing) == 0 && len(c.Pending) == 0
}

// Verdict is the CI in a few words.
func (c CI) Verdict() string {
	switch {
	case len(c.Failing) > 0:
		var names []string
		for _, f := range c.Failing {
			names = append(names, f.Name)
		}
		return "CI RED: " + strings.Join(names, ", ")
	case !c.Reported:
		return "CI NOT VERIFIED: no check run or status reported"
	case len(c.Missing) > 0:
		return "CI NOT VERIFIED: required checks never reported: " + strings.Join(c.Missing, ", ")
	case len(c.Pending) > 0:
		return "CI NOT VERIFIED: still running when the wait ended: " + strings.Join(c.Pending, ", ")
	}
	return "CI GREEN"
}

// Text is the CI's verdict and each failing job with its lines, for a
// comment (as code: the lines are a log's).
func (c CI) Text() string {
	var b strings.Builder
	b.WriteString(c.Verdict() + "\n")
	for _, f := range c.Failing {
		fmt.Fprintf(&b, "\n%s (%s):\n", f.Name, f.URL)
		if len(f.Lines) > 0 {
			b.WriteString(codeBlock(strings.Join(f.Lines, "\n")))
		}
	}
	return b.String()
}

// WaitCI waits up to timeout for the check runs and statuses of sha to
// finish, looking every poll, then fetches the logs of the red ones.
// required are check or status names that must be there (and green).
func WaitCI(ctx context.Context, f Forge, sha string, required []string, timeout, poll time.Duration) (CI, error) {
	deadline := time.Now().Add(timeout)
	var checks []Check
	for {
		var err error
		checks, err = f.Checks(ctx, sha)
		if err != nil {
			return CI{}, err
		}
		if settled(checks, required) || !time.Now().Add(poll).Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return CI{}, ctx.Err()
		case <-time.After(poll):
		}
	}
	ci := CI{Reported: len(checks) > 0, Checks: checks}
	seen := map[string]bool{}
	for _, c := range checks {
		seen[c.Name] = true
		switch {
		case c.Red():
			job := FailingJob{Name: c.Name, URL: c.URL}
			if !c.Status {
				if log, err := f.JobLog(ctx, c.ID); err == nil {
					job.Lines = FailLines(log, 30)
				}
			}
			ci.Failing = append(ci.Failing, job)
		case c.Pending():
			ci.Pending = append(ci.Pending, c.Name)
		}
	}
	for _, r := range required {
		if !seen[r] {
			ci.Missing = append(ci.Missing, r)
		}
	}
	sort.Strings(ci.Missing)
	return ci, nil
}

// settled: something reported, every required check is there, and none
// is still running.
func settled(checks []Check, required []string) bool {
	if len(checks) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, c := range checks {
		if c.Pending() {
			return false
		}
		seen[c.Name] = true
	}
	for _, r := range required {
		if !seen[r] {
			return false
		}
	}
	return true
}

// failLine is a line of a CI log that says why a job failed.
var failLine = regexp.MustCompile(`(?i)(\bFAIL|\berror\b|error:|panic:|assert|expected|\bwant\b|exit code [1-9]|Traceback|✗|✘)`)

// timestamp is the time GitHub Actions puts before every line of a log.
var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z `)

// FailLines cuts a job's log to the lines that say why it failed (at most
// max, the last ones): lines that name a failure or an error, else the
// log's last lines. Actions' timestamps are taken off.
func FailLines(log string, max int) []string {
	var all, hits []string
	for _, l := range strings.Split(strings.ReplaceAll(log, "\r", ""), "\n") {
		l = timestamp.ReplaceAllString(l, "")
		if strings.TrimSpace(l) == "" {
			continue
		}
		all = append(all, l)
		if failLine.MatchString(l) {
			hits = append(hits, l)
		}
	}
	if len(hits) == 0 {
		hits = all
	}
	if len(hits) > max {
		hits = hits[len(hits)-max:]
	}
	return hits
}

// Signal is the CI's failure as the loop's next failure signal: the
// repository and commit, then each failing job's name and the lines of
// its log that say why (already cut by FailLines). It is data for a
// prompt, fenced there as check output is.
func (c CI) Signal(repo, sha string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The repository's CI (%s) failed on the pushed commit %.12s: %s\n", repo, sha, c.Verdict())
	for _, f := range c.Failing {
		fmt.Fprintf(&b, "\n## job %s\n", f.Name)
		if len(f.Lines) == 0 {
			b.WriteString("(no log: a commit status, or the log could not be read)\n")
		}
		for _, l := range f.Lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// CIRound tells the pull request that its CI is red and the loop starts
// fix round round of rounds, with the failing jobs and their lines.
func (w Work) CIRound(ctx context.Context, pull, round, rounds int, text string) error {
	body := fmt.Sprintf("looprinter: the CI is red on this pull request; fix round %d of %d starts, with the failing jobs as its failure signal.\n\n%s", round, rounds, text)
	_, err := w.F.Comment(ctx, pull, body)
	return err
}
