package agent

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/shlex"
)

func init() { RegisterBackend(commandBackend) }

// commandBackend runs any program (agent.command): no CLI to install or log
// in, no model families, and it reports its own usage limits on
// ::looprinter rate_limited lines (see report), so no LimitReset.
var commandBackend = Backend{
	Name: "command", Label: "command",
	New:        func() Adapter { return commandAdapter{} },
	MetersCost: true,
}

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
	path, err := lookPathIn(argv[0], req.Dir, childPath(req))
	if err != nil && argv[0] == "looprinter" {
		// `looprinter fake-agent …` (the demo's agent) when looprinter is not
		// on PATH (go run, a binary run by its path): this very program.
		if self, serr := os.Executable(); serr == nil {
			path, err = self, nil
		}
	}
	if err != nil {
		return Invocation{}, fmt.Errorf("agent.command: %q not found: %w", argv[0], err)
	}
	args := append(argv[1:], req.Args...)
	return Invocation{Path: path, Args: args, Env: ChildEnv(req), Stdin: req.Prompt}, nil
}

func (commandAdapter) NewParser(req Request) Parser {
	return &commandParser{prompt: req.Prompt}
}

// commandParser keeps only what it needs from the stream: the usage lines,
// the last lines and the last non-empty lines, never the whole output.
type commandParser struct {
	usage  Result // spend the program reported on ::looprinter lines
	prompt string
	tail   [commandTailLines][]byte
	n      int // lines seen
	// The last SignalLines+1 non-empty lines, a ring: the signals are read
	// from the last SignalLines of them, the one before tells an echoed
	// prompt block apart.
	final [CommandSignalLines + 1][]byte
	nf    int

	rateLimited bool
	apiError    bool
	retryAfter  time.Duration
	reason      string
}

const commandTailLines = 20

// CommandSignalLines is how many of a command agent's last non-empty output
// lines (::looprinter lines left out) are its final message: <promise> and
// <blocked> are read from them only, as they are read from a CLI agent's
// final message only.
const CommandSignalLines = 3

func (p *commandParser) Line(line []byte) []ToolEvent {
	if bytes.HasPrefix(line, []byte("::looprinter ")) {
		p.report(string(line))
		return nil
	}
	p.n++
	if len(line) > 2000 {
		line = line[:2000]
	}
	// The rings: no allocation per line once they are full.
	slot := &p.tail[p.n%commandTailLines]
	*slot = append((*slot)[:0], line...)
	if len(bytes.TrimSpace(line)) > 0 {
		p.nf++
		f := &p.final[p.nf%len(p.final)]
		*f = append((*f)[:0], line...)
	}
	return nil
}

// signals reads <promise> and <blocked> from the final message: the last
// CommandSignalLines non-empty lines.
func (p *commandParser) signals() (promise, blocked string) {
	sc := newSignalScanner(p.prompt)
	first := p.nf - CommandSignalLines
	if first >= 1 {
		sc.prev = unquote(string(p.final[first%len(p.final)]))
	}
	for i := max(first+1, 1); i <= p.nf; i++ {
		sc.line(string(p.final[i%len(p.final)]))
	}
	return sc.promise, sc.blocked
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

// Spent is what the run reported it spent so far (its cost_usd lines).
func (p *commandParser) Spent() float64 { return p.usage.CostUSD }

func (p *commandParser) Finish(exit Exit) Result {
	res := p.usage
	promise, blocked := p.signals()
	res.ExitCode, res.Promise, res.Blocked = exit.Code, promise, blocked
	res.FinalMessage = p.lastLines()
	switch {
	case exit.StartErr != nil:
		res.Status = StatusBlocked
		res.Error = exit.StartErr.Error()
		res.Fix = "check agent.command in the loop file: the program must exist and be executable"
	case exit.Killed != "":
		res.Status = exit.Killed
		res.Error = "stopped by the engine: " + string(exit.Killed)
	case blocked != "":
		res.Status = StatusBlocked
		res.Error = "the agent asked for a human: " + blocked
	case p.rateLimited:
		res.Status = StatusRateLimited
		res.RetryAfter = p.retryAfter
		res.Error = firstNonEmpty(p.reason, "the agent reported a rate limit")
	case p.apiError:
		res.Status = StatusAPIError
		res.Error = firstNonEmpty(p.reason, "the agent reported a transient API error")
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

// report reads a line a command agent may print to report its usage or an
// API condition:
//
//	::looprinter cost_usd=0.42 input_tokens=1200 output_tokens=300 cached_tokens=0 turns=3
//	::looprinter rate_limited retry_after=30s
//	::looprinter api_error
//
// Usage values add up over several lines. rate_limited (with retry_after in
// seconds or as a duration such as 2m, optional) makes the run rate_limited:
// the engine waits and runs the step again without counting an attempt.
// api_error makes it api_error: retried with backoff. Any words after the
// key=value fields are kept as the reason.
func (p *commandParser) report(line string) {
	fields := strings.Fields(strings.TrimPrefix(line, "::looprinter "))
	for i, f := range fields {
		switch f {
		case "rate_limited":
			p.rateLimited = true
			continue
		case "api_error":
			p.apiError = true
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			if p.rateLimited || p.apiError {
				p.reason = strings.Join(fields[i:], " ")
				return
			}
			continue
		}
		if k == "retry_after" {
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				p.retryAfter = d
			} else if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 && n < 1e6 {
				p.retryAfter = time.Duration(n * float64(time.Second))
			}
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 || n != n || n > 1e12 {
			continue
		}
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
