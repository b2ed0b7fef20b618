package forge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Work is a loop's work on one issue: the issue, read and its author
// checked before anything starts, and the branch the work goes on.
type Work struct {
	F      Forge
	Issue  Issue
	Branch string
}

// ErrNotAllowed is an issue that may not start work (a stranger's, a
// closed one, a pull request).
var ErrNotAllowed = errors.New("not allowed to start work")

// Begin reads issue n and checks that it may start work: an open issue
// (not a pull request) whose author allow names. Nothing is written to
// the forge: a stranger's issue gets no answer.
func Begin(ctx context.Context, f Forge, n int, allow Allow) (Work, error) {
	if n < 1 {
		return Work{}, fmt.Errorf("issue %d: want an issue number from 1", n)
	}
	is, err := f.Issue(ctx, n)
	if err != nil {
		return Work{}, err
	}
	switch {
	case is.IsPull:
		return Work{}, fmt.Errorf("%s#%d is a pull request, not an issue: %w", f.Repo(), n, ErrNotAllowed)
	case is.State != "open":
		return Work{}, fmt.Errorf("%s#%d is %s: %w", f.Repo(), n, is.State, ErrNotAllowed)
	}
	if ok, why := allow.Allowed(is.Author, is.Association); !ok {
		return Work{}, fmt.Errorf("%s#%d: %s: %w", f.Repo(), n, why, ErrNotAllowed)
	}
	return Work{F: f, Issue: is, Branch: fmt.Sprintf("looprinter/issue-%d", n)}, nil
}

// Objective is the loop's objective for the issue: the loop file's own
// (the user's words, trusted), then the issue fenced as untrusted text.
func (w Work) Objective(own, nonce string) string {
	own = strings.TrimSpace(own)
	block := IssueBlock(w.F.Repo(), w.Issue, nonce)
	if own == "" {
		return block
	}
	return own + "\n\n" + block
}

// Started tells the issue that a loop works on it: a comment and the
// running label.
func (w Work) Started(ctx context.Context, loopName, branch string) error {
	body := fmt.Sprintf("looprinter started work on this issue: loop `%s`, branch `%s`. It comments here again when the loop stops, with its verdict and the pull request.", loopName, branch)
	if _, err := w.F.Comment(ctx, w.Issue.Number, body); err != nil {
		return err
	}
	for _, l := range []string{LabelDone, LabelBlocked} {
		if err := w.F.RemoveLabel(ctx, w.Issue.Number, l); err != nil {
			return err
		}
	}
	return w.F.AddLabels(ctx, w.Issue.Number, LabelRunning)
}

// Failed tells the issue that the loop could not run (why is the
// engine's message, redacted by the caller) and labels it blocked.
func (w Work) Failed(ctx context.Context, why string) error {
	body := "looprinter could not run the loop:\n\n" + codeBlock(why)
	_, err := w.F.Comment(ctx, w.Issue.Number, body)
	for _, l := range []string{LabelRunning, LabelDone} {
		if e := w.F.RemoveLabel(ctx, w.Issue.Number, l); err == nil {
			err = e
		}
	}
	if e := w.F.AddLabels(ctx, w.Issue.Number, LabelBlocked); err == nil {
		err = e
	}
	return err
}

// Stop is how a loop on an issue stopped, as Finish needs it.
type Stop struct {
	Verdict string // DONE, BUDGET SPENT …
	Done    bool
	// Report is the engine's final report, redacted.
	Report string
	// Push: the branch has work to show (always on DONE; on another stop,
	// when the best state kept is ahead of where the loop started).
	Push bool
	// Dir is the repository the branch is pushed from; Base the branch the
	// pull request is for ("": the forge's default branch).
	Dir, Base string
	// Gate, when set, waits for the CI of SHA (the pushed commit) once the
	// pull request is there: the issue is done only when it is green.
	Gate *CIGate
	SHA  string
	// Redact is applied to what the CI's logs put in a comment.
	Redact func(string) string
}

// CIGate is forge.ci: how long to wait, what must be there, how often to
// look.
type CIGate struct {
	Required      []string
	Timeout, Poll time.Duration
}

// Finished is what Finish did.
type Finished struct {
	Pull    *PullRequest
	Created bool // a new pull request (else the one open was updated)
	CI      *CI  // what the CI said, when it is a gate and the push was made
}

// Done says whether the issue is done: the loop DONE and, where CI is a
// gate, the CI green.
func (f Finished) Done(s Stop) bool {
	return s.Done && (s.Gate == nil || (f.CI != nil && f.CI.Green()))
}

// Finish pushes the loop's branch and opens or updates its one pull
// request (a draft unless the loop is DONE), then comments the verdict on
// the issue and sets its label. Every step is tried; the first error is
// returned.
func (w Work) Finish(ctx context.Context, s Stop) (Finished, error) {
	fin, errs := w.Deliver(ctx, s)
	return fin, w.Report(ctx, s, fin, errs)
}

// Deliver pushes the loop's branch, opens or updates its pull request
// and, where CI is a gate and the loop is DONE, waits for the CI of the
// pushed commit. It writes nothing on the issue (Report does).
func (w Work) Deliver(ctx context.Context, s Stop) (Finished, []error) {
	var fin Finished
	var errs []error
	if s.Push {
		pr, created, err := w.pull(ctx, s)
		if err != nil {
			errs = append(errs, err)
		}
		fin.Pull, fin.Created = pr, created
		if err == nil && s.Done && s.Gate != nil && s.SHA != "" {
			ci, err := WaitCI(ctx, w.F, s.SHA, s.Gate.Required, s.Gate.Timeout, s.Gate.Poll)
			if err != nil {
				errs = append(errs, err)
			} else {
				fin.CI = &ci
			}
		}
	}
	return fin, errs
}

// Report comments the verdict on the issue (with what Deliver did and
// the errors it met) and sets the issue's label. The first error is
// returned.
func (w Work) Report(ctx context.Context, s Stop, fin Finished, errs []error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "looprinter stopped: **%s**.", s.Verdict)
	switch {
	case fin.Pull != nil && s.Done:
		fmt.Fprintf(&b, " The work and its evidence are in %s.", fin.Pull.URL)
	case fin.Pull != nil:
		fmt.Fprintf(&b, " The best state kept is in the draft %s, with the report.", fin.Pull.URL)
	case len(errs) > 0:
		fmt.Fprintf(&b, " The pull request could not be opened: %v", errs[0])
	default:
		b.WriteString(" No work to show; the report:\n\n" + codeBlock(s.Report))
	}
	if s.Gate != nil && s.Push && s.Done {
		text := "CI NOT VERIFIED: the CI was not waited for (the push or the pull request failed)\n"
		if fin.CI != nil {
			text = fin.CI.Text()
		}
		if s.Redact != nil {
			text = s.Redact(text)
		}
		b.WriteString("\n\n" + text)
	}
	if _, err := w.F.Comment(ctx, w.Issue.Number, b.String()); err != nil {
		errs = append(errs, err)
	}
	label, other := LabelBlocked, LabelDone
	if fin.Done(s) {
		label, other = LabelDone, LabelBlocked
	}
	for _, l := range []string{LabelRunning, other} {
		if err := w.F.RemoveLabel(ctx, w.Issue.Number, l); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.F.AddLabels(ctx, w.Issue.Number, label); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// pull pushes the branch and opens its pull request, or updates the one
// open from it: one pull request per branch, whatever the number of runs.
func (w Work) pull(ctx context.Context, s Stop) (*PullRequest, bool, error) {
	if err := w.F.Push(ctx, s.Dir, "refs/heads/"+w.Branch, w.Branch); err != nil {
		return nil, false, err
	}
	in := PullInput{Title: PullTitle(w.Issue), Body: PullBody(w.Issue.Number, s), Head: w.Branch, Base: s.Base, Draft: !s.Done}
	open, err := w.F.FindPull(ctx, w.Branch)
	if err != nil {
		return nil, false, err
	}
	if open != nil {
		pr, err := w.F.UpdatePull(ctx, open.Number, in)
		if err != nil {
			return nil, false, err
		}
		return &pr, false, nil
	}
	if in.Base == "" {
		if in.Base, err = w.F.DefaultBranch(ctx); err != nil {
			return nil, false, err
		}
	}
	pr, err := w.F.CreatePull(ctx, in)
	if err != nil {
		return nil, false, err
	}
	return &pr, true, nil
}

// PullTitle is the pull request's title: the issue's, on one line.
func PullTitle(is Issue) string {
	t := strings.Join(strings.Fields(is.Title), " ")
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
	}
	return t
}

// maxReport bounds the report in a pull request's body (GitHub takes
// 65,536 characters).
const maxReport = 60000

// PullBody is the pull request's description: what it resolves, the
// verdict, and the engine's report as it printed it, as code (no Markdown
// of an agent's or a check's words is rendered).
func PullBody(issue int, s Stop) string {
	var b strings.Builder
	if s.Done {
		fmt.Fprintf(&b, "Resolves #%d.\n\n", issue)
	} else {
		fmt.Fprintf(&b, "Work on #%d, not done: the loop stopped %s; this draft holds the best state it kept.\n\n", issue, s.Verdict)
	}
	report := s.Report
	if len(report) > maxReport {
		report = report[:maxReport] + "\n… (cut: the whole report is in the loop's records)"
	}
	fmt.Fprintf(&b, "looprinter's verdict: **%s**. The report:\n\n%s", s.Verdict, codeBlock(report))
	return b.String()
}

// codeBlock fences text as code with a fence longer than any run of
// backticks in it.
func codeBlock(text string) string {
	n := 3
	for run, i := 0, 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", n)
	return fence + "text\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

// Next is the number of the next issue to work on among open (oldest
// first): the first that is not a pull request, whose author allow names,
// and that carries none of the engine's state labels (running, done,
// blocked); 0 when there is none. A stranger's labelled issue is passed
// over, never answered.
func Next(open []Issue, allow Allow) int {
	for _, is := range open {
		busy := false
		for _, l := range is.Labels {
			busy = busy || l == LabelRunning || l == LabelDone || l == LabelBlocked
		}
		ok, _ := allow.Allowed(is.Author, is.Association)
		if !is.IsPull && is.State != "closed" && !busy && ok {
			return is.Number
		}
	}
	return 0
}
