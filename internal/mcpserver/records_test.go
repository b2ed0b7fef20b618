package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/histgen"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// loop_records and the report's last records are the loop's last records
// (tool calls left out unless asked), read from the records' end: what
// they read does not grow with the history.
func TestLastRecordsReadFromTheEnd(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := histgen.Write(dir, histgen.Options{Name: "h", Iterations: 3000, PerFile: 5000}); err != nil {
		t.Fatal(err)
	}
	all, _ := loopdir.Dir(dir).ReadRecordsInOrder()
	var kept []record.Event
	for _, ev := range all {
		if ev.Event != record.ToolCall {
			kept = append(kept, ev)
		}
	}
	h := &handlers{}
	before := record.BytesRead.Load()
	_, out, err := h.records(context.Background(), nil, RecordsArg{Loop: "h", Limit: 7})
	if read := record.BytesRead.Load() - before; read > 256<<10 {
		t.Errorf("loop_records read %d bytes", read)
	}
	if err != nil || len(out.Records) != 7 {
		t.Fatalf("%d records %v", len(out.Records), err)
	}
	for i, r := range out.Records {
		if w := kept[len(kept)-7+i]; r.Record.Event != w.Event || !r.Record.TS.Equal(w.TS) {
			t.Fatalf("record %d: %s %v, want %s %v", i, r.Record.Event, r.Record.TS, w.Event, w.TS)
		}
	}
	_, out, _ = h.records(context.Background(), nil, RecordsArg{Loop: "h", Limit: 3, Tools: true})
	if len(out.Records) != 3 || out.Records[2].Record.TS != all[len(all)-1].TS {
		t.Fatalf("with tools: %d records", len(out.Records))
	}
	e, _ := find("h")
	if rep := Report(e); !strings.Contains(rep, ops.Summarize(kept[len(kept)-1])) {
		t.Fatalf("the report lacks the last record:\n%s", rep)
	}
}
