package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/notify"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spend"
)

// apiError is the body of every error answer.
type apiError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

func httpError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if wantsHTML(r) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "%d %s: %s\n", status, http.StatusText(status), msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(apiError{Error: msg, Status: status})
}

// writeJSON answers v as indented JSON, through the redactor of the loop
// the request names.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.redactFor(r)(buf.Bytes()))
}

// redactFor is the redactor for what a request answers: the loop's own
// (its loop file's redact: settings) when the request names a loop, else
// the server's.
func (s *Server) redactFor(r *http.Request) func([]byte) []byte {
	file := ""
	if name := r.PathValue("name"); name != "" {
		if e, err := findLoop(name); err == nil {
			file = loopFile(e)
		}
	}
	return func(b []byte) []byte { return s.cfg.Redact(file, b) }
}

// entry resolves {name}, answering 404 (or 409 for an ambiguous name).
func entry(w http.ResponseWriter, r *http.Request) (ops.Entry, bool) {
	e, err := findLoop(r.PathValue("name"))
	if err != nil {
		status := http.StatusNotFound
		if !errors.Is(err, ops.ErrNotFound) {
			status = http.StatusConflict
		}
		httpError(w, r, status, err.Error())
		return e, false
	}
	return e, true
}

// GET /api/loops: what `status --json` prints with no name.
func (s *Server) apiLoops(w http.ResponseWriter, r *http.Request) {
	_, sts := listRows()
	if sts == nil {
		sts = []ops.Status{}
	}
	s.writeJSON(w, r, sts)
}

// GET /api/loops/{name}: what `status --json NAME` prints.
func (s *Server) apiLoop(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	d, _ := ops.DetailOf(e)
	s.writeJSON(w, r, d)
}

// GET /api/loops/{name}/records: what `logs --json` prints, a page at a
// time: ?n=N keeps the last N (at most maxRecordsN; read from the records'
// end), ?before=CURSOR the N before a cursor (the X-Older-Cursor header of
// an answer names the one before its first record), ?tools=0 leaves out
// tool calls, ?format=text prints `logs` lines. With neither n nor before,
// the last page (pageRecords): what a request reads and holds does not grow
// with the history.
func (s *Server) apiRecords(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	d := loopdir.Dir(ops.RunDirOf(e))
	q := r.URL.Query()
	var keep func(record.Event) bool
	if q.Get("tools") == "0" {
		keep = notToolCall
	}
	n := 0
	if v := q.Get("n"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxRecordsN {
			httpError(w, r, http.StatusBadRequest, fmt.Sprintf("n=%q: give a number of records from 1 to %d (older ones: page with before=, the X-Older-Cursor header)", v, maxRecordsN))
			return
		}
	}
	var evs []record.Event
	{
		c := loopdir.Cursor{}
		if before := q.Get("before"); before != "" {
			var err error
			if c, err = decodeCursor(d, before); err != nil {
				httpError(w, r, http.StatusBadRequest, err.Error())
				return
			}
		}
		if n == 0 {
			n = pageRecords
		}
		sum, _ := d.Summary() // when each file's newest record was written
		ps, err := d.RecordsBefore(c, sum, n, keep)
		if err != nil {
			httpError(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		for _, p := range ps {
			evs = append(evs, p.Event)
		}
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].TS.Before(evs[j].TS) })
		if len(ps) > 0 {
			w.Header().Set("X-Older-Cursor", encodeCursor(loopdir.At(ps[0])))
		}
	}
	if q.Get("format") == "text" {
		var b bytes.Buffer
		for _, ev := range evs {
			b.WriteString(ops.Summarize(ev) + "\n")
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(s.redactFor(r)(b.Bytes()))
		return
	}
	if evs == nil {
		evs = []record.Event{}
	}
	s.writeJSON(w, r, evs)
}

// GET /api/loops/{name}/cost: what `cost --json` prints.
func (s *Server) apiCost(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	dir := ops.RunDirOf(e)
	if files, _ := loopdir.Dir(dir).RecordFiles(); len(files) == 0 {
		httpError(w, r, http.StatusNotFound, "no records in "+loopdir.Dir(dir).Records()+": the loop has not run yet")
		return
	}
	rep, err := loopdir.Dir(dir).Spend() // the tally: what was written since it was saved
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.writeJSON(w, r, struct {
		Dir string `json:"dir"`
		*spend.Report
	}{dir, rep})
}

// runJSON is one agent run in the API.
type runJSON struct {
	N      int           `json:"n"`
	Phase  string        `json:"phase"`
	Task   string        `json:"task,omitempty"`
	Status string        `json:"status"`
	Commit string        `json:"commit,omitempty"`
	Start  record.Event  `json:"start"`
	End    *record.Event `json:"end,omitempty"`
}

func runOf(v RunView) runJSON {
	return runJSON{N: v.N, Phase: v.Start.Phase, Task: v.Start.Task, Status: v.Status(), Commit: v.Commit, Start: v.Start, End: v.End}
}

// GET /api/loops/{name}/runs: the last 100 agent runs, oldest first;
// ?before=N the 100 before run N, ?n= another number (at most 1,000).
func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	d := loopdir.Dir(ops.RunDirOf(e))
	sum, err := d.Summary()
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	q := r.URL.Query()
	n, before := 100, sum.Runs+1
	if v := q.Get("n"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 1000 {
			httpError(w, r, http.StatusBadRequest, fmt.Sprintf("n=%q: give a number of runs from 1 to 1000", v))
			return
		}
	}
	if v := q.Get("before"); v != "" {
		if before, err = strconv.Atoi(v); err != nil || before < 1 {
			httpError(w, r, http.StatusBadRequest, fmt.Sprintf("before=%q: give a run number, 1 or more", v))
			return
		}
	}
	out := []runJSON{}
	for _, rv := range runsBetween(d, sum, before-n, min(before-1, sum.Runs)) {
		out = append(out, runOf(rv))
	}
	s.writeJSON(w, r, out)
}

// GET /api/loops/{name}/runs/{n}: one run's prompt, transcript and diff.
func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	run, _, err := runOfLoop(e, n)
	if err != nil {
		httpError(w, r, http.StatusNotFound, err.Error())
		return
	}
	rd, err := runDetail(e, run)
	if err != nil {
		httpError(w, r, http.StatusNotFound, err.Error())
		return
	}
	s.writeJSON(w, r, struct {
		runJSON
		Prompt     string  `json:"prompt"`
		Transcript []Block `json:"transcript"`
		Diff       string  `json:"diff,omitempty"`
		DiffNote   string  `json:"diff_note,omitempty"`
	}{runOf(rd.Run), rd.Prompt, rd.Transcript, rd.Diff, rd.DiffNote})
}

// GET /api/loops/{name}/report: the final report (the last loop_stop
// record), the review report and the review findings.
func (s *Server) apiReport(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	v := loopView(e)
	type rep struct {
		Title    string        `json:"title,omitempty"`
		Stop     *record.Event `json:"stop"`
		Review   string        `json:"review_report,omitempty"`
		Findings []RoundView   `json:"findings,omitempty"`
	}
	out := rep{Stop: v.Stop, Review: v.Review, Findings: v.Rounds}
	if v.Stop != nil {
		out.Title = loop.Title(v.Stop.Reason)
	}
	s.writeJSON(w, r, out)
}

// GET /api/loops/{name}/files/{path...}: a file of working-records
// (transcripts/…, checks/…), at most its last 2 MiB, redacted.
func (s *Server) apiFile(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	rel := filepath.Clean(r.PathValue("path"))
	if rel == "lock" || rel == "pause" {
		httpError(w, r, http.StatusNotFound, "not a record file")
		return
	}
	b, err := readCapped(loopdir.Dir(ops.RunDirOf(e)).Records(), rel, maxShown)
	if err != nil {
		httpError(w, r, http.StatusNotFound, "no such file in working-records: "+rel)
		return
	}
	ct := "text/plain; charset=utf-8"
	if strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, ".jsonl") {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Write(s.redactFor(r)(b))
}

// GET /api/audit: the last 200 entries of the audit log (admin only).
func (s *Server) apiAudit(w http.ResponseWriter, r *http.Request) {
	out := s.cfg.Audit.Read(200)
	if out == nil {
		out = []AuditEntry{}
	}
	s.writeJSON(w, r, out)
}

// actionInput is an action's body: JSON or a form.
type actionInput struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Now  bool   `json:"now"`
	// Objective and Issue are the start action's.
	Objective string `json:"objective"`
	Issue     int    `json:"issue"`
}

func readAction(r *http.Request) (actionInput, error) {
	var in actionInput
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			return in, fmt.Errorf("the body is not the JSON this action takes: %w", err)
		}
	case "", "application/x-www-form-urlencoded", "multipart/form-data":
		if err := r.ParseForm(); err != nil {
			return in, err
		}
		in.ID, in.Text = r.PostFormValue("id"), r.PostFormValue("text")
		in.Now = r.PostFormValue("now") == "1" || r.PostFormValue("now") == "true"
		in.Objective = r.PostFormValue("objective")
		in.Issue, _ = strconv.Atoi(r.PostFormValue("issue"))
	default:
		return in, fmt.Errorf("unsupported Content-Type %q: send JSON or a form", ct)
	}
	return in, nil
}

// action is POST /api/loops/{name}/{what}: checked (token, CSRF), done,
// audited. A form from the dashboard is answered with a redirect to the
// loop's page.
func (s *Server) action(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := whoOf(r)
		audit := AuditEntry{TokenID: c.TokenID, Action: what, Loop: r.PathValue("name"), Remote: r.RemoteAddr}
		fail := func(status int, msg string) {
			audit.Status, audit.Message = status, msg
			s.cfg.Audit.Write(audit)
			httpError(w, r, status, msg)
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if status, why := s.mayAct(r); status != 0 {
			fail(status, why)
			return
		}
		e, err := findLoop(r.PathValue("name"))
		if err != nil {
			fail(http.StatusNotFound, err.Error())
			return
		}
		audit.Loop = e.Key
		in, err := readAction(r)
		if err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		msg, status, err := s.do(what, e, in, "serve token "+c.TokenID)
		if err != nil {
			fail(status, err.Error())
			return
		}
		audit.Status, audit.Message = http.StatusOK, msg
		s.cfg.Audit.Write(audit)
		if r.PostFormValue("from") == "page" {
			// Back at the actions, where the user was, not at the top.
			http.Redirect(w, r, "/loops/"+e.Key+"?done="+what+"#actions", http.StatusSeeOther)
			return
		}
		s.writeJSON(w, r, map[string]any{"ok": true, "action": what, "loop": e.Name, "message": msg})
	}
}

// do performs one action, with the same effect as the CLI command.
func (s *Server) do(what string, e ops.Entry, in actionInput, by string) (string, int, error) {
	switch what {
	case "pause":
		running, err := ops.Pause(e, "looprinter serve")
		if err != nil {
			return "", http.StatusInternalServerError, err
		}
		if running {
			return e.Name + " will pause before its next agent run", 0, nil
		}
		return e.Name + " is not running; it will pause before its first agent run when started", 0, nil
	case "resume":
		was, err := ops.Resume(e)
		if err != nil {
			return "", http.StatusInternalServerError, err
		}
		if !was {
			return e.Name + " was not paused", 0, nil
		}
		return e.Name + " resumes", 0, nil
	case "stop":
		res, e, err := ops.StopEntry(e, in.Now, s.cfg.StopTimeout)
		if err != nil {
			return "", http.StatusInternalServerError, err
		}
		if !res.Clean && len(res.Killed) > 0 {
			notify.Killed(e, ops.RunDirOf(e))
		}
		switch {
		case res.PID == 0 && len(res.Killed) == 0:
			return e.Name + " is not running", 0, nil
		case res.Clean:
			return fmt.Sprintf("stopped %s (pid %d): it wrote its final record", e.Name, res.PID), 0, nil
		}
		return fmt.Sprintf("killed %s and %d process(es) of its run; final record written", e.Name, len(res.Killed)), 0, nil
	case "answer":
		if strings.TrimSpace(in.ID) == "" {
			return "", http.StatusBadRequest, errors.New("answer needs id (the question's id, e.g. q1) and text")
		}
		if err := operator.CheckText("answer", in.Text); err != nil {
			return "", http.StatusBadRequest, err
		}
		msg, err := s.cfg.Actions.Answer(e, in.ID, in.Text, by)
		return msg, actionStatus(err), err
	case "start":
		return s.startAction(e, in, by)
	case "approve":
		if err := ops.Approve(e, by); err != nil {
			return "", actionStatus(err), err
		}
		return "approved the plan of " + e.Name + "; its build runs start", 0, nil
	case "guide":
		if err := operator.CheckText("guidance", in.Text); err != nil {
			return "", http.StatusBadRequest, err
		}
		msg, err := s.cfg.Actions.Guide(e, in.Text, by)
		return msg, actionStatus(err), err
	}
	return "", http.StatusNotFound, fmt.Errorf("no action %q", what)
}

func actionStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ops.ErrNoQuestion), errors.Is(err, ops.ErrNotWaitingApproval):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// answerLoop is the answer action: ops.Answer, as `looprinter answer`.
func answerLoop(e ops.Entry, id, text, by string) (string, error) {
	if err := ops.Answer(e, id, text, by); err != nil {
		return "", err
	}
	return fmt.Sprintf("answered %s of %s; the loop goes on with the answer in its next prompt", id, e.Name), nil
}

// guideLoop is the guide action: ops.Guide, as `looprinter guide`.
func guideLoop(e ops.Entry, text, by string) (string, error) {
	if err := ops.Guide(e, text, by); err != nil {
		return "", err
	}
	return "guidance queued for the next agent run of " + e.Name, nil
}

// sse starts a Server-Sent Events answer.
func sse(w http.ResponseWriter) (func(event, id string, data []byte) bool, bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	return func(event, id string, data []byte) bool {
		var b bytes.Buffer
		if event != "" {
			fmt.Fprintf(&b, "event: %s\n", event)
		}
		if id != "" {
			fmt.Fprintf(&b, "id: %s\n", id)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			fmt.Fprintf(&b, "data: %s\n", line)
		}
		b.WriteString("\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			return false
		}
		fl.Flush()
		return true
	}, true
}

// GET /api/loops/{name}/records/stream: the loop's records as Server-Sent
// Events ("record", data: one record as JSON with "text", the line `logs`
// prints for it; id: its number), the last
// ?n= (default 200) first, then each new one as the records follower sees
// it. ?tools=0 leaves out tool calls. ?after=N (or a reconnect's
// Last-Event-ID: N) skips the first N records and sends every one after
// them: the dashboard renders the records it has, then streams the rest
// without a gap.
func (s *Server) apiRecordsStream(w http.ResponseWriter, r *http.Request) {
	e, ok := entry(w, r)
	if !ok {
		return
	}
	noTools := r.URL.Query().Get("tools") == "0"
	back := 200
	if n, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && n >= 0 {
		back = min(n, maxRecordsN)
	}
	after := -1
	if id, err := strconv.Atoi(r.URL.Query().Get("after")); err == nil && id >= 0 {
		after = id
	}
	if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil && id >= 0 {
		after = id
	}
	// The backlog is read before the answer starts: a record appended once
	// the client has the answer's headers is a new one, never taken for
	// backlog (and, with ?n=0, never left out). It is read from the end of
	// the records the loop's summary counts; the follower goes on from
	// there, and the summary's count numbers them.
	d := loopdir.Dir(ops.RunDirOf(e))
	sum, err := d.Summary()
	if err != nil || sum == nil {
		httpError(w, r, http.StatusInternalServerError, fmt.Sprintf("read the records: %v", err))
		return
	}
	total := sum.Records
	var keep func(record.Event) bool
	if noTools {
		total, keep = sum.Seen(), notToolCall
	}
	need := back
	if after >= 0 {
		// At most maxRecordsN of the missed records are read (the last
		// ones): a client that missed more is told how many it misses.
		need = min(max(total-after, 0), maxRecordsN)
	}
	var backlog []record.Event
	if need > 0 {
		ps, err := d.RecordsUpTo(sum, need, keep)
		if err != nil {
			httpError(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		for _, p := range ps {
			backlog = append(backlog, p.Event)
		}
	}
	fl := d.FollowAt(sum.Offsets)
	send, ok := sse(w)
	if !ok {
		httpError(w, r, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	red := s.redactFor(r)
	seq := total - len(backlog)
	emit := func(evs []record.Event, first bool) bool {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].TS.Before(evs[j].TS) })
		kept := evs[:0]
		for _, ev := range evs {
			if !(noTools && ev.Event == record.ToolCall) {
				kept = append(kept, ev)
			}
		}
		start := 0
		if first && after < 0 && len(kept) > back {
			start = len(kept) - back
		}
		for i, ev := range kept {
			seq++
			if i < start || seq <= after {
				continue
			}
			b, _ := json.Marshal(struct {
				record.Event
				Text string `json:"text"`
			}{ev, ops.Summarize(ev)})
			if !send("record", strconv.Itoa(seq), red(b)) {
				return false
			}
		}
		return true
	}
	if gap := total - len(backlog) - after; after >= 0 && gap > 0 && len(backlog) == maxRecordsN {
		// The records between the client's last one and the backlog are
		// not sent: it can page them with GET …/records?before=.
		if !send("gap", "", []byte(fmt.Sprintf(`{"after":%d,"missed":%d}`, after, gap))) {
			return
		}
	}
	if !emit(backlog, true) {
		return
	}
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	beat := time.Now()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		evs := fl.Poll()
		if len(evs) > 0 {
			if !emit(evs, false) {
				return
			}
			beat = time.Now()
		} else if time.Since(beat) > 15*time.Second {
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			beat = time.Now()
		}
	}
}

// GET /api/loops/stream: the list of loops (as GET /api/loops) as a
// "loops" event at once and whenever it changes.
func (s *Server) apiLoopsStream(w http.ResponseWriter, r *http.Request) {
	send, ok := sse(w)
	if !ok {
		httpError(w, r, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	var last []byte
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	beat := time.Now()
	for {
		_, sts := listRows()
		if sts == nil {
			sts = []ops.Status{}
		}
		b, _ := json.Marshal(sts)
		b = s.cfg.Redact("", b)
		if !bytes.Equal(b, last) {
			if !send("loops", "", b) {
				return
			}
			last, beat = b, time.Now()
		} else if time.Since(beat) > 15*time.Second {
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			beat = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
