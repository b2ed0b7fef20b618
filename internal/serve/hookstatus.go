package serve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/looprinter/looprinter/forge"
	"github.com/looprinter/looprinter/forge/github"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// commentTimeout bounds the answer of a /looprinter command on the forge
// (GitHub gives a delivery 10 seconds).
const commentTimeout = 8 * time.Second

// commentOn is the default Actions.Comment: a comment on issue (or pull
// request) n of the loop's forge, with the token `serve` finds as a run
// does (forge.Lookup: the environment, then gh's login). The variables
// stay in serve's environment: the runs it starts read them.
func commentOn(l *spec.Loop, n int, body string) error {
	g := l.Forge.GitHub
	ctx, cancel := context.WithTimeout(context.Background(), commentTimeout)
	defer cancel()
	tok, err := forge.Lookup(ctx, github.Host(g.BaseURL))
	if err != nil {
		return err
	}
	c, err := github.New(g.Repo, g.BaseURL, tok)
	if err != nil {
		return err
	}
	_, err = c.Comment(ctx, n, body)
	return err
}

// answerStatus is "/looprinter status": the loop's state as a comment on
// the issue or pull request the command was on; what the delivery's
// answer says.
func (s *Server) answerStatus(e ops.Entry, l *spec.Loop, n int, by string) (string, error) {
	text := string(s.cfg.Redact(e.LoopFile, []byte(statusText(e, l))))
	if n < 1 {
		return "", fmt.Errorf("/looprinter status: the delivery names no issue to answer on")
	}
	if err := s.cfg.Actions.Comment(l, n, text); err != nil {
		return "", fmt.Errorf("/looprinter status: the answer could not be posted on #%d: %v", n, err)
	}
	return fmt.Sprintf("answered /looprinter status on #%d, asked by %s: %s", n, by, statusLine(e)), nil
}

// statusText is a loop's state as the status comment says it: running or
// stopped, its last stop and verdict, its cycle, iteration, agent run,
// task and cost figures. It names no path, command, check output, process
// or secret: a comment is read by anyone who can read the issue.
func statusText(e ops.Entry, l *spec.Loop) string {
	st := ops.Inspect(e)
	var b strings.Builder
	word := "stopped"
	if live(st.State) || st.State == ops.StateStarting {
		word = "running"
	}
	fmt.Fprintf(&b, "looprinter: the loop `%s` is **%s** (%s).\n\n", mdCode(e.Name), word, st.State)
	if st.Outcome != "" {
		fmt.Fprintf(&b, "- last stop: **%s**", loop.Title(st.Outcome))
		if st.ExitCode != nil {
			fmt.Fprintf(&b, " (exit %d)", *st.ExitCode)
		}
		if sum, err := loopdir.Dir(ops.RunDirOf(e)).Summary(); err == nil && sum != nil && sum.Stop != nil && !sum.Stop.TS.IsZero() {
			fmt.Fprintf(&b, " at %s", sum.Stop.TS.UTC().Format(time.RFC3339))
		}
		b.WriteString("\n")
	} else if word == "stopped" {
		b.WriteString("- last stop: none recorded\n")
	}
	ls := st.Loop
	if ls == nil {
		b.WriteString("- not started yet\n")
		return b.String()
	}
	passed := 0
	for _, t := range st.Tasks {
		if t.Passes {
			passed++
		}
	}
	fmt.Fprintf(&b, "- cycle %d, %d iterations, %d agent runs", ls.Cycle, ls.Iterations, ls.AgentRuns)
	if len(st.Tasks) > 0 {
		fmt.Fprintf(&b, ", %d of %d tasks passed", passed, len(st.Tasks))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- cycle gate: %s; objective gate: %s\n", gateWord(ls.CycleGate), gateWord(ls.ObjectiveGate))
	fmt.Fprintf(&b, "- cost: $%.2f", ls.CostUSD)
	if l.Budget.CostUSD > 0 {
		fmt.Fprintf(&b, " of a $%.2f budget", l.Budget.CostUSD)
	}
	fmt.Fprintf(&b, "; time: %s\n", (time.Duration(ls.WallMS) * time.Millisecond).Round(time.Second))
	return b.String()
}

// mdCode keeps a name inside its code span.
func mdCode(s string) string { return strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s) }
