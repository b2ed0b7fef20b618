package cli

import (
	"context"
	"errors"
	"fmt"
	stdio "io"
	"strings"
	"time"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/forge/github"
	"github.com/looprinter/looprinter/internal/gitops"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/spec"
)

// issueRun is `run --issue N` around one run: before it, the issue read
// and its author checked (nothing starts otherwise), the objective with
// the issue fenced as untrusted text, the loop's branch; once the loop has
// started, a comment and a label on the issue; after the stop, the push,
// the pull request, the verdict and the label.
type issueRun struct {
	work   forge.Work
	base   string // the commit the loop started from
	branch string
	// What deliver did last: the stop, the push, pull request and CI, the
	// errors met.
	stop forge.Stop
	fin  forge.Finished
	errs []error
	// key is the loop's in the registry, where the dashboard finds the
	// issue's and the pull request's links.
	key string
}

// openIssue reads the engine's token, checks issue n and makes l work on
// it. The token is held by the client alone from here on: it is out of
// the engine's environment, so no agent, check or hook inherits it.
func openIssue(ctx context.Context, l *spec.Loop, n int, next bool) (*issueRun, error) {
	if !l.Forge.On() {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--issue: %s names no forge: add forge: {github: {repo: OWNER/NAME}} (docs/forge.md)", l.Path)}
	}
	if n < 1 && !next {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--issue %d: want an issue number from 1", n)}
	}
	if gitops.TopLevel(l.Dir) == "" {
		return nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("--issue: %s is not in a git repository: the work is pushed from a branch", l.Dir)}
	}
	g := l.Forge.GitHub
	token, err := forge.Token(ctx, github.Host(g.BaseURL))
	if err != nil {
		return nil, &ExitError{Code: ExitBlocked, Err: err}
	}
	c, err := github.New(g.Repo, g.BaseURL, token)
	if err != nil {
		return nil, &ExitError{Code: ExitBadLoopFile, Err: err}
	}
	if l.Git.Remote != "" {
		c.Remote = gitops.PushTarget(l.Dir, l.Git.Remote)
	}
	allow := g.Allowed()
	if next {
		label, what := g.StartLabel(), "--next-issue"
		if l.Source.On() {
			label, what = l.Source.IssueLabel(), "source.github"
		}
		open, err := c.OpenIssues(ctx, label)
		if err != nil {
			return nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("%s: %w", what, err)}
		}
		if n = forge.Next(open, forge.Allow{Logins: allow.Logins, Associations: allow.Associations}); n == 0 {
			return nil, errNoIssue{label: label, what: what}
		}
	}
	w, err := forge.Begin(ctx, c, n, forge.Allow{Logins: allow.Logins, Associations: allow.Associations})
	if err != nil {
		if errors.Is(err, forge.ErrNotAllowed) {
			return nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("--issue: nothing started: %w", err)}
		}
		return nil, &ExitError{Code: ExitBlocked, Err: fmt.Errorf("--issue: %w", err)}
	}
	if l.Git.Branch == "" {
		l.Git.Branch = w.Branch
	}
	l.Objective = w.Objective(l.Objective, forge.Nonce())
	base, _ := gitops.Git(l.Dir, "rev-parse", "--verify", "-q", "HEAD")
	return &issueRun{work: w, base: base}, nil
}

// started tells the issue the loop started, on the branch run is on.
func (r *issueRun) started(ctx context.Context, io *IO, l, run *spec.Loop) error {
	if b := gitops.CurrentBranch(run.Dir); b != "" {
		r.branch = b
	} else {
		r.branch = l.Git.Branch
	}
	r.work.Branch = r.branch
	r.key = ops.KeyFor(l.Name, l.Path)
	ops.Update(ops.Entry{Key: r.key, Name: l.Name, LoopFile: l.Path, Dir: l.Dir}, func(e *ops.Entry) { e.Issue = r.work.Issue.URL })
	if err := r.work.Started(ctx, l.Name, r.branch); err != nil {
		return &ExitError{Code: ExitBlocked, Err: fmt.Errorf("--issue: the issue could not be told the loop starts: %w", err)}
	}
	fmt.Fprintf(io.Err, "looprinter: working on %s#%d on branch %s\n", r.work.F.Repo(), r.work.Issue.Number, r.branch)
	return nil
}

// deliver pushes the loop's branch and opens or updates its pull
// request, then waits for the CI where it is a gate. A red CI with fix
// rounds left (forge.ci.rounds) is a failed gate: the pull request is
// told, and the loop runs again from a re-plan whose failure signal is
// the failing jobs and their log lines. Once the CI passes, review
// comments by allowed reviewers that no reply answers yet start a review
// round (forge.review.rounds) the same way; once its work is delivered,
// each comment gets a reply, and its thread is resolved where the round
// changed its file. It returns the last outcome; what was delivered is
// kept for finish.
func (r *issueRun) deliver(ctx context.Context, io *IO, l *spec.Loop, opts loop.Options, out *loop.Outcome) (*loop.Outcome, error) {
	ciRounds, reviewRounds := l.Forge.CI.MaxRounds(), l.Forge.Review.MaxRounds()
	ciRound, reviewRound := 0, 0
	red := loop.Redactor(l).String
	var answering []forge.ReviewComment
	from := ""
	for out != nil {
		stop := r.stopOf(io, l, out)
		fin, errs := r.work.Deliver(ctx, stop)
		r.stop, r.fin, r.errs = stop, fin, errs
		if fin.Pull != nil {
			ops.Update(ops.Entry{Key: r.key}, func(e *ops.Entry) { e.Pull = fin.Pull.URL })
			verb := "updated"
			if fin.Created {
				verb = "opened"
			}
			fmt.Fprintf(io.Err, "looprinter: pull request %s: %s\n", verb, fin.Pull.URL)
		}
		if fin.CI != nil {
			fmt.Fprintf(io.Err, "looprinter: %s\n", termtext.Line(fin.CI.Verdict()))
		}
		if answering != nil && fin.Pull != nil {
			r.answer(ctx, io, l, fin.Pull.Number, stop, pendingRound{from: from, comments: answering})
			answering = nil
		}
		if len(errs) > 0 || fin.Pull == nil {
			return out, nil
		}
		var reopen *loop.Reopen
		switch {
		case fin.CI != nil && len(fin.CI.Failing) > 0:
			if ciRound >= ciRounds {
				fmt.Fprintf(io.Err, "looprinter: the CI is still red after %d fix rounds (forge.ci.rounds)\n", ciRounds)
				return out, nil
			}
			ciRound++
			if err := r.work.CIRound(ctx, fin.Pull.Number, ciRound, ciRounds, red(fin.CI.Text())); err != nil {
				r.errs = append(r.errs, err)
				return out, nil
			}
			fmt.Fprintf(io.Err, "looprinter: CI red: fix round %d of %d, with the failing jobs as the failure signal\n", ciRound, ciRounds)
			reopen = &loop.Reopen{Gate: "ci", Signal: red(fin.CI.Signal(r.work.F.Repo(), stop.SHA)), Message: fin.CI.Verdict()}
		case !fin.Done(stop):
			return out, nil
		default:
			pending, err := r.pendingReviews(ctx, l, fin.Pull.Number)
			if err != nil {
				r.errs = append(r.errs, err)
				return out, nil
			}
			if len(pending) == 0 {
				return out, nil
			}
			if reviewRound >= reviewRounds {
				fmt.Fprintf(io.Err, "looprinter: %d review comments wait, but the review rounds are spent (forge.review.rounds: %d)\n", len(pending), reviewRounds)
				return out, nil
			}
			reviewRound++
			fmt.Fprintf(io.Err, "looprinter: %d review comments: review round %d of %d\n", len(pending), reviewRound, reviewRounds)
			answering, from = pending, stop.SHA
			reopen = &loop.Reopen{Gate: "pr-review", Signal: red(forge.ReviewSignal(r.work.F.Repo(), fin.Pull.Number, pending, forge.Nonce())),
				Message: fmt.Sprintf("%d review comments on %s", len(pending), fin.Pull.URL)}
		}
		o := opts
		o.Reopen = reopen
		var err error
		if out, err = loop.Run(ctx, l, o); err != nil {
			return out, err
		}
	}
	return out, nil
}

// pendingReviews are the review comments of the pull request that start
// a round: by reviewers forge.github.allow names, not answered yet.
func (r *issueRun) pendingReviews(ctx context.Context, l *spec.Loop, pull int) ([]forge.ReviewComment, error) {
	all, err := r.work.F.ReviewComments(ctx, pull)
	if err != nil {
		return nil, err
	}
	a := l.Forge.GitHub.Allowed()
	return forge.PendingReviews(all, forge.Allow{Logins: a.Logins, Associations: a.Associations}), nil
}

// pendingRound is a review round's comments and the commit it started
// from.
type pendingRound struct {
	from     string
	comments []forge.ReviewComment
}

// answer replies to the comments of a review round once its work is
// delivered: the commit, where the round changed the comment's file.
func (r *issueRun) answer(ctx context.Context, io *IO, l *spec.Loop, pull int, stop forge.Stop, rr pendingRound) {
	from, cs := rr.from, rr.comments
	changed := map[string]bool{}
	if from != "" && stop.SHA != "" && from != stop.SHA {
		if names, err := gitops.Git(l.Dir, "diff", "--name-only", from, stop.SHA); err == nil {
			for _, n := range strings.Split(strings.TrimSpace(names), "\n") {
				changed[n] = true
			}
		}
	}
	var as []forge.Answered
	for _, c := range cs {
		as = append(as, forge.Answered{Comment: c, Changed: changed[c.Path]})
	}
	if err := r.work.AnswerReviews(ctx, pull, stop.SHA, stop.Verdict, stop.Done, as); err != nil {
		r.errs = append(r.errs, err)
		return
	}
	fmt.Fprintf(io.Err, "looprinter: answered %d review comments\n", len(cs))
}

// stopOf is how the loop stopped, as the forge needs it: the verdict,
// the report, whether there is work to push and the CI gate.
func (r *issueRun) stopOf(io *IO, l *spec.Loop, out *loop.Outcome) forge.Stop {
	done := out.Reason == loop.ReasonDone
	head, _ := gitops.Git(l.Dir, "rev-parse", "--verify", "-q", "refs/heads/"+r.branch)
	ahead := head != "" && head != r.base
	if r.base != "" && ahead {
		if n, err := gitops.Git(l.Dir, "rev-list", "--count", r.base+".."+head); err == nil && strings.TrimSpace(n) == "0" {
			ahead = false
		}
	}
	stop := forge.Stop{Verdict: loop.Title(out.Reason), Done: done, Report: reportText(l, out),
		Push: head != "" && (done || ahead), Dir: l.Dir, Base: l.Git.Base, SHA: head, Redact: loop.Redactor(l).String}
	if ci := l.Forge.CI; ci.On() {
		stop.Gate = &forge.CIGate{Required: ci.Required, Timeout: ci.Timeout.D(), Poll: ciPoll(ci.Timeout.D())}
		if done {
			fmt.Fprintf(io.Err, "looprinter: waiting up to %s for the CI of %.12s\n", ci.Timeout, head)
		}
	}
	return stop
}

// finish comments the verdict on the issue and labels it, from what
// deliver did and the final outcome; it says what it did on io.Err. A
// forge that failed turns the exit code BLOCKED: the work did not reach
// where it lives.
func (r *issueRun) finish(ctx context.Context, io *IO, l *spec.Loop, out *loop.Outcome) error {
	if out == nil {
		return nil
	}
	stop := r.stop
	// A landing after the run may have turned the outcome.
	stop.Verdict, stop.Done, stop.Report = loop.Title(out.Reason), out.Reason == loop.ReasonDone, reportText(l, out)
	if err := r.work.Report(ctx, stop, r.fin, r.errs); err != nil {
		fmt.Fprintf(io.Err, "looprinter: --issue: the loop stopped %s, but the forge failed: %v\n", loop.Title(out.Reason), err)
		return &ExitError{Code: ExitBlocked}
	}
	if stop.Done && stop.Gate != nil && !r.fin.Done(stop) {
		fmt.Fprintf(io.Err, "looprinter: --issue: the loop is DONE here, but the CI gate is not passed: the issue is labelled %s\n", forge.LabelBlocked)
		return &ExitError{Code: ExitBlocked}
	}
	return nil
}

// ciPoll is how often the CI is looked at: a tenth of the wait, from
// 100ms to 15s.
func ciPoll(timeout time.Duration) time.Duration {
	return min(max(timeout/10, 100*time.Millisecond), 15*time.Second)
}

// failed tells the issue the loop could not run (another run holds it, a
// broken sandbox …).
func (r *issueRun) failed(ctx context.Context, io *IO, l *spec.Loop, err error) {
	if ferr := r.work.Failed(ctx, loop.Redactor(l).String(err.Error())); ferr != nil {
		fmt.Fprintf(io.Err, "looprinter: --issue: the issue could not be told: %v\n", ferr)
	}
}

// printForge says, for validate, where the work goes and who may start it.
func printForge(w stdio.Writer, l *spec.Loop) {
	if !l.Forge.On() {
		return
	}
	g := l.Forge.GitHub
	where := "github.com"
	if g.BaseURL != "" {
		where = github.Host(g.BaseURL)
	}
	a := g.Allowed()
	who := []string{}
	if len(a.Logins) > 0 {
		who = append(who, "logins "+strings.Join(a.Logins, ", "))
	}
	if len(a.Associations) > 0 {
		who = append(who, "associations "+strings.Join(a.Associations, ", "))
	}
	fmt.Fprintf(w, "forge:      %s on %s; `run --issue N` starts on issues by %s\n", g.Repo, where, strings.Join(who, "; "))
	if l.Source.On() {
		fmt.Fprintf(w, "source:     a run without --issue works on the oldest open issue of %s labelled %s\n", g.Repo, l.Source.IssueLabel())
	}
	if ci := l.Forge.CI; ci.On() {
		line := fmt.Sprintf("after the push of a DONE loop, wait up to %s for the commit's CI", spec.FormatDuration(ci.Timeout.D()))
		if len(ci.Required) > 0 {
			line += "; required: " + strings.Join(ci.Required, ", ")
		}
		fmt.Fprintf(w, "forge ci:   %s\n", line)
	}
}

// errNoIssue: --next-issue found no issue to work on; nothing ran.
type errNoIssue struct{ label, what string }

func (e errNoIssue) Error() string {
	return fmt.Sprintf("%s: no open issue labelled %s waits (one labelled %s, %s or %s is taken)", e.what, e.label, forge.LabelRunning, forge.LabelDone, forge.LabelBlocked)
}
