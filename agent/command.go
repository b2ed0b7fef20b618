package agent

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/google/shlex"
)

func init() { Register("command", func() Adapter { return commandAdapter{} }) }

// commandAdapter runs any program: the prompt on stdin (and in
// LOOPRINTER_PROMPT_FILE), its standard output is the transcript, and signals
// are read from that output.
type commandAdapter struct{}

func (commandAdapter) Name() string { return "command" }

func (commandAdapter) Invocation(req Request) (Invocation, error) {
	argv, err := shlex.Split(req.Command)
	if err != nil {
		return Invocation{}, fmt.Errorf("agent.command: %w", err)
	}
	if len(argv) == 0 {
		return Invocation{}, fmt.Errorf("agent.command is empty: the command backend needs a program to run")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return Invocation{}, fmt.Errorf("agent.command: %q not found: %w", argv[0], err)
	}
	args := append(argv[1:], req.Args...)
	return Invocation{Path: path, Args: args, Env: ChildEnv(req), Stdin: req.Prompt}, nil
}

func (commandAdapter) NewParser(req Request) Parser {
	return &commandParser{prompt: req.Prompt}
}

// commandParser keeps only what it needs from the stream: the signals and
// the last lines, never the whole output.
type commandParser struct {
	usage   Result // spend the program reported on ::looprinter lines
	prompt  string
	promise string
	blocked string
	signals *signalScanner
	tail    [commandTailLines][]byte
	n       int // lines seen
}

const commandTailLines = 20

func (p *commandParser) Line(line []byte) []ToolEvent {
	if bytes.HasPrefix(line, []byte("::looprinter ")) {
		p.report(string(line))
		return nil
	}
	p.n++
	if len(line) > 2000 {
		line = line[:2000]
	}
	// The tail is a ring: no allocation per line once it is full.
	slot := &p.tail[p.n%commandTailLines]
	*slot = append((*slot)[:0], line...)
	if bytes.Contains(line, []byte("<promise>")) || bytes.Contains(line, []byte("<blocked>")) {
		// Only tag lines are scanned (output can be huge); the line before,
		// which tells an echoed prompt block apart, comes from the tail ring.
		if p.signals == nil {
			p.signals = newSignalScanner(p.prompt)
		}
		p.signals.prev = p.previousLine()
		p.signals.line(string(line))
		p.promise, p.blocked = p.signals.promise, p.signals.blocked
	}
	return nil
}

// previousLine is the last non-empty line before the current one, unquoted.
func (p *commandParser) previousLine() string {
	for i := p.n - 1; i >= 1 && i > p.n-commandTailLines; i-- {
		if l := unquote(string(p.tail[i%commandTailLines])); l != "" {
			return l
		}
	}
	return ""
}

// lastLines returns the ring's lines, oldest first.
func (p *commandParser) lastLines() string {
	var lines []string
	for i := p.n - commandTailLines + 1; i <= p.n; i++ {
		if i >= 1 {
			lines = append(lines, string(p.tail[i%commandTailLines]))
		}
	}
	return strings.Join(lines, "\n")
}

func (p *commandParser) Finish(exit Exit) Result {
	res := p.usage
	res.ExitCode, res.Promise, res.Blocked = exit.Code, p.promise, p.blocked
	res.FinalMessage = p.lastLines()
	switch {
	case exit.StartErr != nil:
		res.Status = StatusBlocked
		res.Error = exit.StartErr.Error()
		res.Fix = "check agent.command in the loop file: the program must exist and be executable"
	case exit.Killed != "":
		res.Status = exit.Killed
		res.Error = "stopped by the engine: " + string(exit.Killed)
	case p.blocked != "":
		res.Status = StatusBlocked
		res.Error = "the agent asked for a human: " + p.blocked
	case exit.Code == 0:
		res.Status = StatusOK
	default:
		res.Status = StatusFailed
		res.Error = fmt.Sprintf("the agent exited with code %d", exit.Code)
		if t := strings.TrimSpace(lastLines(exit.StderrTail, 5)); t != "" {
			res.Error += ": " + t
		}
	}
	return res
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// report reads a usage line a command agent may print:
//
//	::looprinter cost_usd=0.42 input_tokens=1200 output_tokens=300 cached_tokens=0 turns=3
//
// Values add up over several lines.
func (p *commandParser) report(line string) {
	for _, f := range strings.Fields(strings.TrimPrefix(line, "::looprinter ")) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "cost_usd":
			p.usage.CostUSD += n
		case "input_tokens":
			p.usage.InputTokens += int64(n)
		case "output_tokens":
			p.usage.OutputTokens += int64(n)
		case "cached_tokens":
			p.usage.CachedTokens += int64(n)
		case "turns":
			p.usage.Turns += int(n)
		}
	}
}
