package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/spec"
)

func init() {
	register(newAnswerCmd)
	register(newGuideCmd)
}

// operatorText is TEXT, or standard input when TEXT is "-".
func operatorText(in io.Reader, text string) (string, error) {
	if text != "-" {
		return text, nil
	}
	b, err := io.ReadAll(io.LimitReader(in, operator.MaxText+1))
	return strings.TrimRight(string(b), "\n"), err
}

func newAnswerCmd(io *IO) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "answer [NAME] ID TEXT",
		Short: "Answer the question a loop's agent asked",
		Long: `Answer the question a loop waits on. An agent asks by ending its final
message with <ask id="q1">question</ask>; the loop then waits (state
waiting, shown by status and watch) until you answer or ask_timeout passes.
The answer goes into the next agent run's prompt, fenced and labelled as
the operator's answer, and the loop goes on. TEXT "-" reads the answer from
standard input.`,
		Example: `  looprinter answer fix-tests q1 "Use the v2 API; v1 is going away."
  looprinter answer q1 - < answer.txt`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			var name []string
			if len(args) == 3 {
				name, args = args[:1], args[1:]
			}
			e, err := resolveLoop(name, file)
			if err != nil {
				return remoteUnsupported(cmd.Context(), name, file, err, cmd.Name())
			}
			text, err := operatorText(io.In, args[1])
			if err != nil {
				return err
			}
			if err := ops.Answer(e, args[0], text, "looprinter answer"); err != nil {
				if errors.Is(err, ops.ErrNoQuestion) {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				return err
			}
			fmt.Fprintf(io.Err, "answered %s of %s; the loop goes on with the answer in its next prompt\n", args[0], e.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	return cmd
}

// isLoopName tells whether s is the name or key of a loop this machine
// knows, or the name of the loop file here (file, or ./loop.yaml), which
// need not have run yet (a file path is not asked about: any word may
// name a file).
func isLoopName(s, file string) bool {
	entries, _ := ops.Entries()
	for _, e := range entries {
		if e.Name == s || e.Key == s {
			return true
		}
	}
	if file == "" {
		file = "loop.yaml"
	}
	if l, err := spec.Load(file); err == nil && l.Name == s {
		return true
	}
	return false
}

func newGuideCmd(io *IO) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "guide [NAME] TEXT",
		Short: "Queue guidance for a loop's next agent run",
		Long: `Queue guidance for a loop: the next agent run's prompt carries it, fenced
and labelled as operator guidance, and asks the agent to put <ack/> on a line
of its own in its final message. A run that does not acknowledge it is told
again by the next one; status shows the guidance no run has acknowledged
yet. TEXT "-" reads the guidance from standard input.`,
		Example: `  looprinter guide fix-tests "Do not touch the public API of package parser."`,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var name []string
			if len(args) == 2 {
				name, args = args[:1], args[1:]
			} else if isLoopName(args[0], file) {
				// `guide NAME` alone: the text is missing, not the name;
				// queueing the name as guidance would tell the agent nothing.
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s is a loop, and the guidance text is missing: looprinter guide %s TEXT (TEXT - reads it from standard input)", args[0], args[0])}
			}
			e, err := resolveLoop(name, file)
			if err != nil {
				return remoteUnsupported(cmd.Context(), name, file, err, cmd.Name())
			}
			text, err := operatorText(io.In, args[0])
			if err != nil {
				return err
			}
			if err := ops.Guide(e, text, "looprinter guide"); err != nil {
				return err
			}
			fmt.Fprintf(io.Err, "guidance queued for the next agent run of %s\n", e.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	return cmd
}
