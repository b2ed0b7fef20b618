// Package cli holds looprinter's commands. Each command is a constructor that
// wires flags into an options struct and a plain function that does the work;
// errors map to exit codes in one place (exitCode).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// Exit codes of looprinter (README.md, "Exit codes of run").
const (
	ExitDone        = 0
	ExitBudget      = 1
	ExitNoProgress  = 2
	ExitTimeCost    = 3
	ExitBlocked     = 4
	ExitUsage       = 64
	ExitLocked      = 75
	ExitBadLoopFile = 78
	ExitInterrupted = 130
)

// ExitError carries an exit code out of a command.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// IO is where a command reads and writes; tests swap it.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	IsTerm bool
}

// registry of subcommand constructors, so each command lives in its own file.
var commands []func(*IO) *cobra.Command

func register(f func(*IO) *cobra.Command) { commands = append(commands, f) }

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "0.1.0-dev"

// NewRoot builds the command tree.
func NewRoot(io *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "looprinter",
		Short: "A loop engine for headless coding agents",
		Long: `looprinter runs loops that prompt a coding agent, verify the result outside
the agent, feed failures back, and stop on evidence or on a budget.

A loop is described in loop.yaml. Start with:
  looprinter init        write a loop file by answering a few questions
  looprinter validate    check it and see what the loop will do
  looprinter run         run it in the foreground
  looprinter demo        see a whole cycle with a built-in scripted agent`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.CompletionOptions.HiddenDefaultCmd = false
	for _, f := range commands {
		root.AddCommand(f(io))
	}
	return root
}

// Main runs the CLI and returns the process exit code.
func Main(args []string) int {
	stdio := &IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, IsTerm: isTerminal(os.Stdout)}
	if len(args) == 0 || args[0] != "fake-agent" { // an agent prints what it likes: the engine redacts it
		// What looprinter prints is redacted too, records written before
		// redaction existed included (docs/operating.md, "Secrets").
		red := redact.New(os.Environ(), nil, nil)
		stdio.Out, stdio.Err = redacted(red, os.Stdout), redacted(red, os.Stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRoot(stdio)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return exitCode(stdio, err)
}

// exitCode is the one place where errors become exit codes.
func exitCode(stdio *IO, err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stdio.Err, "looprinter:", ee.Err)
		}
		return ee.Code
	}
	var se *spec.Error
	if errors.As(err, &se) {
		fmt.Fprintln(stdio.Err, "looprinter:", se)
		return ExitBadLoopFile
	}
	fmt.Fprintln(stdio.Err, "looprinter:", err)
	return ExitUsage
}

// redactOut redacts each write: looprinter writes whole lines, and holding
// text back would delay `logs -F`.
type redactOut struct {
	r *redact.Redactor
	w io.Writer
}

func (o redactOut) Write(p []byte) (int, error) {
	if _, err := o.w.Write(o.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redacted is f behind the redactor. A terminal stays one for a full-screen
// program (the init interview, watch): it reads the window's size from it
// and follows its resizes, instead of drawing 80 columns wide and leaving
// pieces of one screen on the next.
func redacted(r *redact.Redactor, f *os.File) io.Writer {
	if isTerminal(f) {
		return redactTerm{redactOut{r, f}, f}
	}
	return redactOut{r, f}
}

// redactTerm is redactOut over a terminal, with the terminal's descriptor
// (a term.File).
type redactTerm struct {
	redactOut
	f *os.File
}

func (t redactTerm) Fd() uintptr                { return t.f.Fd() }
func (t redactTerm) Read(p []byte) (int, error) { return t.f.Read(p) }
func (t redactTerm) Close() error               { return nil } // the process's own output stays open

func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// loadLoop loads the loop file named by -f (default loop.yaml).
func loadLoop(path string) (*spec.Loop, error) {
	if path == "" {
		path = "loop.yaml"
	}
	if _, err := os.Stat(spec.ExpandHome(path)); err != nil {
		return nil, &ExitError{Code: ExitBadLoopFile, Err: fmt.Errorf("no loop file at %s: write one with `looprinter init`, or name it with -f", path)}
	}
	return spec.Load(path)
}
