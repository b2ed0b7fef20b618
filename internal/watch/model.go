package watch

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
)

// Actions are what the keys do to a loop; tests replace them.
type Actions interface {
	Stop(e ops.Entry) (string, error)
	Pause(e ops.Entry) (string, error)
	Resume(e ops.Entry) (string, error)
}

// FileActions act through the loop's files and processes, as the stop,
// pause and resume commands do.
type FileActions struct{}

func runDir(e ops.Entry) string {
	if e.RunDir != "" {
		return e.RunDir
	}
	return e.Dir
}

// Stop stops the run cleanly (SIGTERM; the engine writes its final record).
func (FileActions) Stop(e ops.Entry) (string, error) {
	res, err := ops.Stop(runDir(e), false, 30*time.Second)
	if err != nil {
		return "", err
	}
	if res.PID == 0 {
		return e.Name + " is not running", nil
	}
	return fmt.Sprintf("stopped %s (pid %d)", e.Name, res.PID), nil
}

// Pause makes the loop wait before its next agent run.
func (FileActions) Pause(e ops.Entry) (string, error) {
	if _, err := ops.Pause(e, "looprinter watch"); err != nil {
		return "", err
	}
	return e.Name + " pauses before its next agent run", nil
}

// Resume lets a paused loop go on.
func (FileActions) Resume(e ops.Entry) (string, error) {
	was, err := ops.Resume(e)
	if err != nil {
		return "", err
	}
	if !was {
		return e.Name + " was not paused", nil
	}
	return e.Name + " resumes", nil
}

// Messages.
type (
	// SnapshotMsg carries freshly read loop views.
	SnapshotMsg []LoopView
	tickMsg     time.Time
	actionMsg   struct {
		text string
		err  error
	}
)

// Model is the watch view's state.
type Model struct {
	poll     func() []LoopView
	interval time.Duration
	actions  Actions
	loops    []LoopView
	sel      int
	width    int
	height   int
	msg      string
	confirm  bool // s was pressed once: the next s stops
	loaded   bool
}

// New returns a model that polls with poll every interval.
func New(poll func() []LoopView, interval time.Duration, actions Actions) Model {
	return Model{poll: poll, interval: interval, actions: actions, width: 100, height: 40}
}

// Init reads the files at once.
func (m Model) Init() tea.Cmd { return m.load() }

func (m Model) load() tea.Cmd {
	poll := m.poll
	return func() tea.Msg { return SnapshotMsg(poll()) }
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(m.interval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Selected is the loop the view shows in detail.
func (m Model) Selected() (LoopView, bool) {
	if m.sel < 0 || m.sel >= len(m.loops) {
		return LoopView{}, false
	}
	return m.loops[m.sel], true
}

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case SnapshotMsg:
		first := !m.loaded
		m.loops, m.loaded = msg, true
		if m.sel >= len(m.loops) {
			m.sel = max(0, len(m.loops)-1)
		}
		if first {
			return m, m.tick()
		}
		return m, nil
	case tickMsg:
		return m, tea.Batch(m.load(), m.tick())
	case actionMsg:
		if msg.err != nil {
			m.msg = "error: " + msg.err.Error()
		} else {
			m.msg = msg.text
		}
		return m, m.load()
	case tea.KeyMsg:
		return m.key(msg.String())
	}
	return m, nil
}

func (m Model) key(k string) (tea.Model, tea.Cmd) {
	confirm := m.confirm
	m.confirm = false
	switch k {
	case "q", "ctrl+c", "esc":
		return m, tea.Quit
	case "tab", "right", "j", "down":
		if len(m.loops) > 0 {
			m.sel = (m.sel + 1) % len(m.loops)
		}
		m.msg = ""
	case "shift+tab", "left", "k", "up":
		if len(m.loops) > 0 {
			m.sel = (m.sel + len(m.loops) - 1) % len(m.loops)
		}
		m.msg = ""
	case "p", "r", "s":
		v, ok := m.Selected()
		if !ok {
			return m, nil
		}
		e := v.Status.Entry
		var act func(ops.Entry) (string, error)
		switch k {
		case "p":
			act = m.actions.Pause
		case "r":
			act = m.actions.Resume
		case "s":
			if !confirm {
				m.confirm = true
				m.msg = fmt.Sprintf("stop %s? press s again to stop it, any other key to cancel", e.Name)
				return m, nil
			}
			act = m.actions.Stop
			m.msg = "stopping " + e.Name + "…"
		}
		return m, func() tea.Msg {
			text, err := act(e)
			return actionMsg{text: text, err: err}
		}
	default:
		if confirm {
			m.msg = "stop cancelled"
		}
	}
	return m, nil
}

var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	dimStyle   = lipgloss.NewStyle().Faint(true)
	selStyle   = lipgloss.NewStyle().Reverse(true)
	passStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	failStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
)

// View renders the screen.
func (m Model) View() string {
	var b strings.Builder
	line := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		b.WriteString(ansi.Truncate(s, m.width, "…"))
		b.WriteByte('\n')
	}
	n := len(m.loops)
	line("%s", titleStyle.Render(fmt.Sprintf("looprinter watch — %d loop%s", n, plural(n)))+
		dimStyle.Render("   tab next · p pause · r resume · s stop · q quit"))
	if !m.loaded {
		line("reading…")
		return b.String()
	}
	if n == 0 {
		line("no loops yet: `looprinter start` runs one in the background")
		return b.String()
	}
	if n > 1 {
		nw := 4
		for _, v := range m.loops {
			nw = max(nw, len(v.Status.Name))
		}
		for i, v := range m.loops {
			s := fmt.Sprintf(" %-*s  %-8s %s", nw, oneLine(v.Status.Name), v.Status.State, oneLine(v.Status.Line))
			s = ansi.Truncate(s, m.width-1, "…")
			if i == m.sel {
				s = selStyle.Render(">" + s[1:])
			}
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	line("%s", strings.Repeat("─", max(10, min(m.width, 100))))
	v, _ := m.Selected()
	m.detail(&b, line, v)
	if m.msg != "" {
		line("")
		line("%s", titleStyle.Render(m.msg))
	}
	return b.String()
}

func (m Model) detail(b *strings.Builder, line func(string, ...any), v LoopView) {
	s := v.Status
	state := strings.ToUpper(s.State)
	if s.PID != 0 && (s.State == ops.StateRunning || s.State == ops.StatePaused || s.State == ops.StateStarting || s.State == ops.StateWaiting) {
		state += fmt.Sprintf(" (pid %d)", s.PID)
	}
	if s.PausePending && s.State == ops.StateRunning {
		state += " — pausing after this agent run"
	}
	line("%s  %s  %s", titleStyle.Render(oneLine(s.Name)), state, dimStyle.Render(oneLine(runDir(s.Entry))))
	st := s.Loop
	if st == nil {
		line("not started yet")
		return
	}
	phase := oneLine(st.Phase)
	switch busy := loop.TasksInProgress(st); len(busy) {
	case 0:
	case 1:
		phase += " " + oneLine(busy[0])
		for _, t := range s.Tasks {
			if t.ID == busy[0] {
				phase += " " + oneLine(t.Title)
			}
		}
	default:
		phase += " " + oneLine(strings.Join(busy, ", "))
	}
	bud := v.Budget
	if bud != nil {
		line("cycle %d of %d   phase %s", st.Cycle, bud.Cycles, phase)
	} else {
		line("cycle %d   phase %s", st.Cycle, phase)
	}
	// A wave's runs (parallel, best of N): each in flight, with its slot.
	for _, f := range loop.WaveInFlight(st) {
		task := oneLine(f.Task)
		if f.Attempt > 0 {
			task += fmt.Sprintf(" attempt %d", f.Attempt)
		}
		line("in flight %s   slot %d   %s   %s", task, f.Slot+1, oneLine(f.Backend), time.Since(f.Started).Round(time.Second))
	}
	line("gates     cycle: %s   objective: %s", gate(st.CycleGate), gate(st.ObjectiveGate))
	wall := time.Duration(st.WallMS) * time.Millisecond
	if bud != nil {
		line("budget    iterations %s %d/%d   cycles %s %d/%d", bar(st.Iterations, bud.Iterations), st.Iterations, bud.Iterations,
			bar(st.Cycle, bud.Cycles), st.Cycle, bud.Cycles)
		line("          cost %s $%.2f/$%.2f   time %s %s/%s", barF(st.CostUSD, bud.CostUSD), st.CostUSD, bud.CostUSD,
			barF(float64(wall), float64(bud.Wall)), wall.Round(time.Second), bud.Wall)
	} else {
		line("spent     %d build run%s, $%.2f, %s", st.Iterations, plural(st.Iterations), st.CostUSD, wall.Round(time.Second))
	}
	if st.Outcome != "" {
		line("stopped   %s (exit %d): %s", loop.Title(st.Outcome), st.ExitCode, oneLine(st.Summary))
	}
	if q := s.Question; q != nil {
		line("QUESTION  %s: %s", oneLine(q.ID), oneLine(q.Text))
		line("          answer: looprinter answer %s %s \"…\"", oneLine(s.Name), oneLine(q.ID))
	}
	for _, g := range s.Guidance {
		line("guidance  %s not acknowledged yet: %s", oneLine(g.ID), oneLine(g.Text))
	}
	if len(s.Tasks) > 0 {
		done := 0
		for _, t := range s.Tasks {
			if t.Passes {
				done++
			}
		}
		line("plan      %d of %d tasks pass", done, len(s.Tasks))
		max := m.height - 22
		if max < 3 {
			max = 3
		}
		for i, t := range s.Tasks {
			if i == max && len(s.Tasks) > max+1 {
				line("  … %d more", len(s.Tasks)-max)
				break
			}
			mark := "[ ]"
			switch {
			case t.Passes:
				mark = passStyle.Render("[x]")
			case t.Active:
				mark = "[>]"
			}
			line("  %s %s %s", mark, oneLine(t.ID), oneLine(t.Title))
		}
	}
	if a := v.Agent; a != nil {
		what := oneLine(a.Phase)
		if a.Task != "" {
			what += " " + oneLine(a.Task)
		}
		model := oneLine(a.Model)
		if model == "" {
			model = "-"
		}
		if v.Ended != nil {
			line("agent     %s (%s/%s) ended %s, %.1fs, $%.4f", what, oneLine(a.Backend), model, oneLine(v.Ended.Status), float64(v.Ended.DurationMS)/1000, v.Ended.CostUSD)
		} else {
			line("agent     %s (%s/%s) running since %s", what, oneLine(a.Backend), model, clock(a.TS))
		}
	}
	if len(v.Tools) > 0 {
		line("tool calls")
		for _, t := range v.Tools {
			line("  %s %s %s", dimStyle.Render(clock(t.TS)), oneLine(t.Tool), oneLine(t.Message))
		}
	}
	if len(v.Last) > 0 {
		line("records")
		for _, e := range v.Last {
			line("  %s %s", dimStyle.Render(clock(e.TS)), oneLine(ops.Describe(e)))
		}
	}
}

func clock(t time.Time) string { return t.Local().Format("15:04:05") }

func gate(g string) string {
	switch g {
	case "pass":
		return passStyle.Render("PASS")
	case "fail":
		return failStyle.Render("FAIL")
	case "not_verified":
		return failStyle.Render("NOT VERIFIED")
	case "":
		return "pending"
	}
	return g
}

func bar(n, of int) string { return barF(float64(n), float64(of)) }

// barF is a ten-cell gauge of used against budget.
func barF(used, budget float64) string {
	const cells = 10
	k := 0
	if budget > 0 {
		k = int(used / budget * cells)
	}
	k = min(max(k, 0), cells)
	return "[" + strings.Repeat("#", k) + strings.Repeat("·", cells-k) + "]"
}

// oneLine puts untrusted text (plan titles, agent text, records) on one line
// with its control characters escaped (termtext.Clean): nothing an agent
// writes can move the cursor, clear the screen or retitle the terminal.
func oneLine(s string) string { return strings.Join(strings.Fields(termtext.Clean(s)), " ") }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
