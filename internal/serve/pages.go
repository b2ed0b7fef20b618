package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

type pages struct {
	t map[string]*template.Template
}

var funcs = template.FuncMap{
	"usd": func(v float64) string { return fmt.Sprintf("$%.2f", v) },
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		d := time.Since(t).Round(time.Second)
		switch {
		case d < time.Minute:
			return fmt.Sprintf("%ds ago", int(d.Seconds()))
		case d < time.Hour:
			return fmt.Sprintf("%dm ago", int(d.Minutes()))
		case d < 48*time.Hour:
			return fmt.Sprintf("%dh ago", int(d.Hours()))
		}
		return t.Local().Format("2006-01-02")
	},
	"clock":     func(t time.Time) string { return t.Local().Format("15:04:05") },
	"wave":      loop.WaveInFlight,
	"inc":       func(n int) int { return n + 1 },
	"summarize": func(e record.Event) string { return ops.Summarize(e) },
	"title":     loop.Title,
	"gateClass": func(g string) string {
		switch g {
		case "pass":
			return "pass"
		case "fail":
			return "fail"
		case "NOT VERIFIED", "not_verified":
			return "warn"
		case "—":
			return "none" // not in the loop's shape, or never reached
		}
		return "pending"
	},
	"firstLines": func(s string, n int) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if len(lines) > n {
			lines = append(lines[:n], fmt.Sprintf("… %d more lines", len(lines)-n))
		}
		return strings.Join(lines, "\n")
	},
	"dur": func(ms int64) string {
		return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
	},
	"deref": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
}

func loadPages() (*pages, error) {
	p := &pages{t: map[string]*template.Template{}}
	for _, name := range []string{"list.html", "loop.html", "run.html", "login.html", "history.html"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/"+name)
		if err != nil {
			return nil, err
		}
		p.t[name] = t
	}
	return p, nil
}

// render draws a page (or, with block, one of its parts) through the
// redactor.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data map[string]any) {
	s.renderBlock(w, r, name, "layout", data)
}

func (s *Server) renderBlock(w http.ResponseWriter, r *http.Request, name, block string, data map[string]any) {
	c := whoOf(r)
	data["Who"] = c
	data["CanAct"] = c.Scope == ScopeAdmin
	data["Loopback"] = s.loopback
	if c.Scope == ScopeAdmin && c.Cookie {
		data["CSRF"] = s.cfg.Tokens.CSRF(c.TokenID)
	}
	var buf bytes.Buffer
	if err := s.pages.t[name].ExecuteTemplate(&buf, block, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(s.redactFor(r)(buf.Bytes()))
}

// GET /: the loop list; ?part=rows is its table body alone (the page
// refreshes it when /api/loops/stream says the list changed).
func (s *Server) listPage(w http.ResponseWriter, r *http.Request) {
	rows, _ := listRows()
	all := len(rows)
	state, text := r.URL.Query().Get("state"), r.URL.Query().Get("q")
	rows = filterRows(rows, state, text)
	data := map[string]any{"Title": "Loops", "Rows": rows, "All": all, "State": state, "Q": text}
	if r.URL.Query().Get("part") == "rows" {
		s.renderBlock(w, r, "list.html", "rows", data)
		return
	}
	s.render(w, r, "list.html", data)
}

// GET /loops/{name}: one loop; ?part=live is its live part alone.
func (s *Server) loopPage(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	v := loopView(e)
	unit := "cycle"
	if v.Ralph {
		unit = "attempt"
	}
	budget := 0.0
	if v.Detail.Budget != nil {
		budget = v.Detail.Budget.CostUSD
	}
	data := map[string]any{
		"Title":     e.Name,
		"V":         v,
		"E":         e,
		"Unit":      unit,
		"CostChart": costChart(v.CostPts, budget),
		"FailChart": failuresChart(v.FailPts, unit),
		"Done":      doneAction(r.URL.Query().Get("done")),
	}
	if r.URL.Query().Get("part") == "live" {
		s.renderBlock(w, r, "loop.html", "live", data)
		return
	}
	s.render(w, r, "loop.html", data)
}

// GET /loops/{name}/runs/{n}: one agent run.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	run, count, err := runOfLoop(e, n)
	if err != nil {
		httpError(w, r, http.StatusNotFound, err.Error())
		return
	}
	rd, err := runDetail(e, run)
	if err != nil {
		httpError(w, r, http.StatusNotFound, err.Error())
		return
	}
	s.render(w, r, "run.html", map[string]any{"Title": e.Name + ": " + rd.Run.Title(), "E": e, "R": rd, "Prev": n - 1, "Next": n + 1, "Count": count})
}

// GET /loops/{name}/history: the older part of a loop's history, a page at
// a time: ?runs=N the agent runs before run N, ?records=CURSOR the records
// (tool calls left out) before the cursor the page before gave.
func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	d := loopdir.Dir(ops.RunDirOf(e))
	q := r.URL.Query()
	data := map[string]any{"Title": e.Name + ": history", "E": e}
	switch {
	case q.Get("runs") != "":
		before, err := strconv.Atoi(q.Get("runs"))
		if err != nil || before < 1 {
			httpError(w, r, http.StatusBadRequest, fmt.Sprintf("runs=%q: give a run number, 1 or more", q.Get("runs")))
			return
		}
		sum, err := d.Summary()
		if err != nil {
			httpError(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		before = min(before, sum.Runs+1)
		runs := runsBetween(d, sum, before-pageRuns, before-1)
		data["Runs"], data["Before"], data["Total"] = runs, before, sum.Runs
		if len(runs) > 0 {
			data["First"], data["Last"] = runs[0].N, runs[len(runs)-1].N
			if runs[0].N > 1 {
				data["OlderRuns"] = runs[0].N
			}
		}
	case q.Get("records") != "":
		c, err := decodeCursor(d, q.Get("records"))
		if err != nil {
			httpError(w, r, http.StatusBadRequest, err.Error())
			return
		}
		sum, _ := d.Summary()
		ps, err := d.RecordsBefore(c, sum, pageRecords, notToolCall)
		if err != nil {
			httpError(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		evs := make([]record.Event, len(ps))
		for i, p := range ps {
			evs[i] = p.Event
		}
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].TS.Before(evs[j].TS) })
		data["Records"] = evs
		if len(ps) == pageRecords {
			data["OlderRecords"] = encodeCursor(loopdir.At(ps[0]))
		}
	default:
		httpError(w, r, http.StatusBadRequest, "name the page: ?runs=N (the agent runs before run N) or ?records=CURSOR")
		return
	}
	s.render(w, r, "history.html", data)
}

// doneAction is the action the page reports as done after its redirect:
// only an action's name, never other text a link could carry.
func doneAction(s string) string {
	switch s {
	case "pause", "resume", "stop", "answer", "guide", "approve":
		return s
	}
	return ""
}
