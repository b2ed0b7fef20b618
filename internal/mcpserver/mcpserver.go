// Package mcpserver is `looprinter mcp`: a Model Context Protocol server over
// standard input and output (the official Go SDK), so an agent session the
// user runs (Claude Code, Codex, Gemini CLI) can list, inspect, start, steer
// and stop the user's loops.
//
// Every tool does what the command of the same name does: the reading tools
// read the loops' files through internal/ops, answer and guide call
// ops.Answer and ops.Guide, and start, pause, resume and stop run this
// looprinter's own command, so their checks and effects are the CLI's.
//
// Tokens: the server is a child process of the user's own MCP client,
// speaking over pipes, running as the user: it is as local as a terminal,
// so it needs no token (the HTTP server's token rules exist for network
// callers). --read-only leaves out every tool that acts on a loop.
package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spend"
)

// Options configure the server.
type Options struct {
	Version  string
	ReadOnly bool // only the tools and resources that read
	// Self is the looprinter program that start, pause, resume and stop run
	// (default: this one).
	Self string
}

// By names the MCP server as the author of answers and guidance.
const By = "looprinter mcp"

// Tool names.
const (
	ToolList    = "loop_list"
	ToolStatus  = "loop_status"
	ToolRecords = "loop_records"
	ToolCost    = "loop_cost"
	ToolStart   = "loop_start"
	ToolPause   = "loop_pause"
	ToolResume  = "loop_resume"
	ToolStop    = "loop_stop"
	ToolAnswer  = "loop_answer"
	ToolApprove = "approve_plan"
	ToolGuide   = "loop_guide"
)

// ReportURI is the resource template of a loop's report.
const ReportURI = "looprinter://loops/{name}/report"

// New builds the server with its tools and resources.
func New(o Options) *mcp.Server {
	if o.Self == "" {
		o.Self = ops.Self()
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "looprinter", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "looprinter runs loops of headless coding agents judged by checks outside the agent. " +
			"Use loop_list to see the loops on this machine, loop_status for one loop's phase, gates, plan, open question and unacknowledged guidance, " +
			"loop_records for its recent records, loop_cost for its spend. A loop in state waiting has asked a question: answer it with loop_answer.",
	})
	h := &handlers{o: o}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: ToolList, Description: "List the loops this machine knows: name, state (running, waiting, paused, finished …) and the one-line status.", Annotations: ro}, h.list)
	mcp.AddTool(s, &mcp.Tool{Name: ToolStatus, Description: "One loop's status: state, phase, cycle, both gates, plan tasks, spend, outcome, the question it waits on and the guidance not yet acknowledged.", Annotations: ro}, h.status)
	mcp.AddTool(s, &mcp.Tool{Name: ToolRecords, Description: "A loop's most recent records (events of working-records/*.jsonl), each with a readable line.", Annotations: ro}, h.records)
	mcp.AddTool(s, &mcp.Tool{Name: ToolCost, Description: "What a loop has spent so far, by phase and model, from its records.", Annotations: ro}, h.cost)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ReportURI, Name: "loop report", MIMEType: "text/markdown",
		Description: "A loop's report: its status, outcome and evidence, plan, open question and guidance, last records; the review report for the review shape."}, h.report)
	if o.ReadOnly {
		return s
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolStart, Description: "Start a loop in the background (looprinter start): by its loop file, or by the name of a loop that ran before. Returns once the run holds the loop."}, h.start)
	mcp.AddTool(s, &mcp.Tool{Name: ToolPause, Description: "Pause a loop before its next agent run (looprinter pause)."}, h.action("pause"))
	mcp.AddTool(s, &mcp.Tool{Name: ToolResume, Description: "Resume a paused loop (looprinter resume)."}, h.action("resume"))
	mcp.AddTool(s, &mcp.Tool{Name: ToolStop, Description: "Stop a loop (looprinter stop): SIGTERM, the run writes its final record; it can be started again and resumes.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, h.action("stop"))
	mcp.AddTool(s, &mcp.Tool{Name: ToolApprove, Description: "Approve the first plan a loop waits on (plan.approve; looprinter approve): its build runs start. Read the plan first with loop_status."}, h.approve)
	mcp.AddTool(s, &mcp.Tool{Name: ToolAnswer, Description: "Answer the question a waiting loop's agent asked (looprinter answer): the next agent run's prompt carries the answer, labelled as the operator's."}, h.answer)
	mcp.AddTool(s, &mcp.Tool{Name: ToolGuide, Description: "Queue guidance for a loop's next agent run (looprinter guide); runs are told again until one acknowledges it."}, h.guide)
	return s
}

// Serve runs the server over standard input and output until the client
// goes away or ctx ends.
func Serve(ctx context.Context, o Options) error {
	err := New(o).Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func ptr[T any](v T) *T { return &v }

type handlers struct{ o Options }

// LoopArg names a loop.
type LoopArg struct {
	Loop string `json:"loop" jsonschema:"the loop: its name, its registry key, its directory or its loop file"`
}

// LoopLine is one loop in loop_list.
type LoopLine struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	State    string `json:"state"`
	Line     string `json:"line"`
	LoopFile string `json:"loop_file"`
	Outcome  string `json:"outcome,omitempty"`
	Question string `json:"question,omitempty"` // the id of the question it waits on
}

// ListOut is loop_list's result.
type ListOut struct {
	Loops []LoopLine `json:"loops"`
}

func (h *handlers) list(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ListOut, error) {
	entries, err := ops.Entries()
	if err != nil {
		return nil, ListOut{}, err
	}
	out := ListOut{Loops: []LoopLine{}}
	for _, e := range entries {
		s := ops.Inspect(e)
		l := LoopLine{Name: e.Name, Key: e.Key, State: s.State, Line: s.Line, LoopFile: e.LoopFile, Outcome: s.Outcome}
		if s.Question != nil {
			l.Question = s.Question.ID
		}
		out.Loops = append(out.Loops, l)
	}
	return nil, out, nil
}

func find(name string) (ops.Entry, error) {
	if strings.TrimSpace(name) == "" {
		return ops.Entry{}, errors.New("name the loop: its name, key, directory or loop file (loop_list shows them)")
	}
	return ops.Find(name)
}

func (h *handlers) status(ctx context.Context, _ *mcp.CallToolRequest, in LoopArg) (*mcp.CallToolResult, ops.Status, error) {
	e, err := find(in.Loop)
	if err != nil {
		return nil, ops.Status{}, err
	}
	return nil, ops.Inspect(e), nil
}

// RecordsArg asks for a loop's last records.
type RecordsArg struct {
	Loop  string `json:"loop" jsonschema:"the loop: its name, its registry key, its directory or its loop file"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many records, the most recent (default 20, at most 500)"`
	Tools bool   `json:"tools,omitempty" jsonschema:"include the agents' tool calls"`
}

// RecordLine is one record with its readable line.
type RecordLine struct {
	Text   string       `json:"text"`
	Record record.Event `json:"record"`
}

// RecordsOut is loop_records' result.
type RecordsOut struct {
	Records []RecordLine `json:"records"`
}

func (h *handlers) records(ctx context.Context, _ *mcp.CallToolRequest, in RecordsArg) (*mcp.CallToolResult, RecordsOut, error) {
	e, err := find(in.Loop)
	if err != nil {
		return nil, RecordsOut{}, err
	}
	n := in.Limit
	if n <= 0 {
		n = 20
	}
	n = min(n, 500)
	// The last n, read from the records' end: not the whole history.
	evs, _, err := loopdir.Dir(dirOf(e)).Tail(n, func(ev record.Event) bool { return in.Tools || ev.Event != record.ToolCall })
	if err != nil && len(evs) == 0 {
		return nil, RecordsOut{}, err
	}
	out := RecordsOut{Records: []RecordLine{}}
	for _, ev := range evs {
		out.Records = append(out.Records, RecordLine{Text: ops.Summarize(ev), Record: ev})
	}
	return nil, out, nil
}

// CostOut is loop_cost's result (as `looprinter cost --json`).
type CostOut struct {
	Dir string `json:"dir"`
	*spend.Report
}

func (h *handlers) cost(ctx context.Context, _ *mcp.CallToolRequest, in LoopArg) (*mcp.CallToolResult, CostOut, error) {
	e, err := find(in.Loop)
	if err != nil {
		return nil, CostOut{}, err
	}
	r, err := loopdir.Dir(dirOf(e)).SpendUncached()
	if err != nil {
		return nil, CostOut{}, err
	}
	return nil, CostOut{Dir: dirOf(e), Report: r}, nil
}

// StartArg names the loop to start.
type StartArg struct {
	Loop  string `json:"loop" jsonschema:"the loop file to start (absolute, or relative to the server's folder), or the name of a loop that ran before"`
	Fresh bool   `json:"fresh,omitempty" jsonschema:"start the counters again instead of resuming"`
}

// ActionOut is what an action tool did: the command's own words.
type ActionOut struct {
	Loop   string `json:"loop"`
	Output string `json:"output"`
	State  string `json:"state"` // the loop's state afterwards
}

func (h *handlers) start(ctx context.Context, _ *mcp.CallToolRequest, in StartArg) (*mcp.CallToolResult, ActionOut, error) {
	file := strings.TrimSpace(in.Loop)
	if file == "" {
		return nil, ActionOut{}, errors.New("name the loop file to start, or a loop that ran before")
	}
	if e, err := ops.Find(file); err == nil {
		file = e.LoopFile
	} else if abs, aerr := filepath.Abs(file); aerr == nil {
		file = abs
	}
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		file = filepath.Join(file, "loop.yaml")
	}
	if _, err := os.Stat(file); err != nil {
		return nil, ActionOut{}, fmt.Errorf("no loop file at %s", file)
	}
	args := []string{"start", "-f", file}
	if in.Fresh {
		args = append(args, "--fresh")
	}
	out, err := h.run(ctx, filepath.Dir(file), args...)
	res := ActionOut{Loop: strings.TrimSpace(firstLine(out)), Output: out}
	if err != nil {
		return nil, res, fmt.Errorf("looprinter start: %v: %s", err, strings.TrimSpace(out))
	}
	if e, ferr := ops.Find(file); ferr == nil {
		res.Loop, res.State = e.Name, ops.Inspect(e).State
	}
	return nil, res, nil
}

func (h *handlers) action(verb string) mcp.ToolHandlerFor[LoopArg, ActionOut] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in LoopArg) (*mcp.CallToolResult, ActionOut, error) {
		e, err := find(in.Loop)
		if err != nil {
			return nil, ActionOut{}, err
		}
		out, err := h.run(ctx, e.Dir, verb, e.Key)
		res := ActionOut{Loop: e.Name, Output: out}
		if err != nil {
			return nil, res, fmt.Errorf("looprinter %s: %v: %s", verb, err, strings.TrimSpace(out))
		}
		res.State = ops.Inspect(e).State
		return nil, res, nil
	}
}

// run runs this looprinter's own command and returns its output.
func (h *handlers) run(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.o.Self, args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	cmd.Stdin = nil
	err := cmd.Run()
	return b.String(), err
}

// AnswerArg is loop_answer's input.
type AnswerArg struct {
	Loop string `json:"loop" jsonschema:"the loop: its name, its registry key, its directory or its loop file"`
	ID   string `json:"id" jsonschema:"the question's id, as loop_status shows it (question.id)"`
	Text string `json:"text" jsonschema:"the answer"`
}

// DoneOut confirms an answer or guidance.
type DoneOut struct {
	Loop    string `json:"loop"`
	Message string `json:"message"`
}

func (h *handlers) answer(ctx context.Context, _ *mcp.CallToolRequest, in AnswerArg) (*mcp.CallToolResult, DoneOut, error) {
	e, err := find(in.Loop)
	if err != nil {
		return nil, DoneOut{}, err
	}
	if err := ops.Answer(e, in.ID, in.Text, By); err != nil {
		return nil, DoneOut{}, err
	}
	return nil, DoneOut{Loop: e.Name, Message: fmt.Sprintf("answered %s; the loop goes on with the answer in its next prompt", in.ID)}, nil
}

// ApproveArg is approve_plan's input.
type ApproveArg struct {
	Loop string `json:"loop" jsonschema:"the loop: its name, its registry key, its directory or its loop file"`
}

func (h *handlers) approve(ctx context.Context, _ *mcp.CallToolRequest, in ApproveArg) (*mcp.CallToolResult, DoneOut, error) {
	e, err := find(in.Loop)
	if err != nil {
		return nil, DoneOut{}, err
	}
	if err := ops.Approve(e, By); err != nil {
		return nil, DoneOut{}, err
	}
	return nil, DoneOut{Loop: e.Name, Message: "approved the plan; its build runs start"}, nil
}

// GuideArg is loop_guide's input.
type GuideArg struct {
	Loop string `json:"loop" jsonschema:"the loop: its name, its registry key, its directory or its loop file"`
	Text string `json:"text" jsonschema:"the guidance for the next agent run"`
}

func (h *handlers) guide(ctx context.Context, _ *mcp.CallToolRequest, in GuideArg) (*mcp.CallToolResult, DoneOut, error) {
	e, err := find(in.Loop)
	if err != nil {
		return nil, DoneOut{}, err
	}
	if err := ops.Guide(e, in.Text, By); err != nil {
		return nil, DoneOut{}, err
	}
	return nil, DoneOut{Loop: e.Name, Message: "guidance queued for the next agent run"}, nil
}

func (h *handlers) report(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, ok := strings.CutPrefix(uri, "looprinter://loops/")
	name, ok2 := strings.CutSuffix(name, "/report")
	if !ok || !ok2 || name == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	e, err := ops.Find(name)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: Report(e)}}}, nil
}

// Report is a loop's report in Markdown.
func Report(e ops.Entry) string {
	s := ops.Inspect(e)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", e.Name)
	fmt.Fprintf(&b, "- state: %s\n- status: %s\n- loop file: %s\n- runs in: %s\n", s.State, s.Line, e.LoopFile, dirOf(e))
	if st := s.Loop; st != nil {
		fmt.Fprintf(&b, "- phase: %s\n- spent: $%.2f, %d agent runs, %s\n- gates: cycle %s, objective %s\n",
			st.Phase, st.CostUSD, st.AgentRuns, (time.Duration(st.WallMS) * time.Millisecond).Round(time.Second), st.CycleGate, st.ObjectiveGate)
		if st.Outcome != "" {
			fmt.Fprintf(&b, "\n## Outcome: %s (exit %d)\n\n%s\n", loop.Title(st.Outcome), st.ExitCode, st.Summary)
		}
		list(&b, "Evidence", st.Evidence)
		list(&b, "NOT VERIFIED", st.NotVerified)
		list(&b, "Tried without success", st.RuledOut)
	}
	if q := s.Question; q != nil {
		fmt.Fprintf(&b, "\n## Waiting for an answer: %s\n\n%s\n\n(asked by the %s run; answer with loop_answer or `looprinter answer %s %s \"…\"`)\n", q.ID, quote(q.Text), q.Phase, e.Name, q.ID)
	}
	if len(s.Guidance) > 0 {
		b.WriteString("\n## Guidance not acknowledged yet\n\n")
		for _, g := range s.Guidance {
			fmt.Fprintf(&b, "- %s (shown to %d runs): %s\n", g.ID, g.Told, strings.Join(strings.Fields(g.Text), " "))
		}
	}
	if len(s.Tasks) > 0 {
		b.WriteString("\n## Plan\n\n")
		for _, t := range s.Tasks {
			mark := " "
			if t.Passes {
				mark = "x"
			}
			fmt.Fprintf(&b, "- [%s] %s %s\n", mark, t.ID, t.Title)
		}
	}
	if data, err := os.ReadFile(loopdir.Dir(dirOf(e)).ReviewReport()); err == nil {
		b.WriteString("\n## Review report\n\n")
		b.Write(data)
	}
	evs, _, _ := loopdir.Dir(dirOf(e)).Tail(10, func(ev record.Event) bool { return ev.Event != record.ToolCall })
	var last []string
	for _, ev := range evs {
		last = append(last, ops.Summarize(ev))
	}
	if len(last) > 0 {
		b.WriteString("\n## Last records\n\n```\n" + strings.ReplaceAll(strings.Join(last, "\n"), "```", "'''") + "\n```\n")
	}
	return b.String()
}

func list(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "- %s\n", it)
	}
}

func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ")
}

func dirOf(e ops.Entry) string {
	if e.RunDir != "" {
		return e.RunDir
	}
	return e.Dir
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
