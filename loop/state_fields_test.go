package loop

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/statefile"
)

// State's members are all ones the field encoder writes as json.Marshal.
func TestStateFieldsAreKnown(t *testing.T) {
	if !stateFieldsOK || len(stateFields) < 60 {
		t.Fatalf("%d fields, ok %v", len(stateFields), stateFieldsOK)
	}
}

// A state saved field by field, its members encoded again only when their
// value changed, writes the public copy byte for byte as the whole state
// redacted, marshalled and indented did, and its journal reads back as that
// state: whatever changed, in place or not, deep in a map or a pointer.
func TestStateSavedByFieldIsTheWholeState(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	t.Setenv("LOOP_TEST_API_TOKEN", "sekrit-value-0123456789")
	dir := t.TempDir()
	priv, err := loopdir.PrivateOf(dir).Ensure()
	if err != nil {
		t.Fatal(err)
	}
	j, err := statefile.OpenJournal(priv)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	red := Redactor(nil).Memo()
	st := longState()
	st.Tried[2] = "printed sekrit-value-0123456789 to the log"
	var enc stateEncoder
	for i, change := range []func(){
		func() {},
		func() { st.Tried[3] = "changed in place" },
		func() { st.TaskFails["c1/T-001"]++ },
		func() { st.Judged.Tasks[5].Passes = !st.Judged.Tasks[5].Passes },
		func() { st.TaskRepeats["T-003"].Count++ },
		func() { st.TaskRepeats["T-004"].Tried = append(st.TaskRepeats["T-004"].Tried, "x") },
		func() { st.InFlight.Ended = time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC) },
		func() { st.InFlight = nil },
		func() { st.Tried = nil },
		func() { st.Tried = []string{} },
		func() { st.Touched = append(st.Touched, "new/file.go") },
		func() { st.Outside = []string{"notes.txt"} },
		func() { st.Baseline["go test ./pkg0/..."][0] = "another line with sekrit-value-0123456789" },
		func() { st.CostUSD += 0.25; st.Phase = PhaseCycleGate },
		func() { st.Review = nil; st.Judged = nil; st.Outside = nil },
		func() {},
	} {
		change()
		st.UpdatedAt = time.Now().UTC()
		fields, err := enc.encode(st, red)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := statefile.SaveFields(dir, j, fields, i%3 == 0, true)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(redact.Value(red, st))
		if !bytes.Equal(pub, statefile.Indented(want)) {
			t.Fatalf("change %d: the public copy differs from the whole state's:\n%s\nwant:\n%s", i, pub, statefile.Indented(want))
		}
		if bytes.Contains(pub, []byte("sekrit")) {
			t.Fatalf("change %d: a secret reached the public copy", i)
		}
		s, _, ok := statefile.ReadJournal(priv)
		if !ok {
			t.Fatal("no state in the journal")
		}
		got, err := decodeState(s.Payload)
		if err != nil {
			t.Fatal(err)
		}
		wantSt, _ := decodeState(want)
		if !reflect.DeepEqual(got, wantSt) {
			g, _ := json.Marshal(got)
			t.Fatalf("change %d: the journal reads\n%s\nwant\n%s", i, g, want)
		}
	}
}

// A record of the journal that does not check out when the engine opens
// it is recorded (a warning saying which save was left out); the state
// is the save before it.
func TestDroppedJournalRecordIsRecorded(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	priv, _ := loopdir.PrivateOf(dir).Ensure()
	j, _ := statefile.OpenJournal(priv)
	st := freshState()
	var enc stateEncoder
	for n := 1; n <= 4; n++ {
		st.Iterations = n
		if _, err := st.save(dir, j, &enc, nil, n <= 3, false); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	_, idx, _ := statefile.ReadJournal(priv)
	path := loopdir.Private(priv).Journal(idx)
	data, _ := os.ReadFile(path)
	at := bytes.LastIndex(data, []byte(`"iterations":4`))
	data[at+len(`"iterations":`)] = '9' // save 4 damaged after it was written
	os.WriteFile(path, data, 0o600)
	j, err := statefile.OpenJournal(priv)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var evs []record.Event
	s := &store{jr: j, emit: func(ev record.Event) { evs = append(evs, ev) }}
	s.noteDeadWall()
	if len(evs) != 1 || evs[0].Event != record.Warning || evs[0].Kind != "state_journal_dropped" || !strings.Contains(evs[0].Message, "save 4") || !strings.Contains(evs[0].Message, path) {
		t.Fatalf("recorded: %+v", evs)
	}
	if got, err := ReadState(dir); err != nil || got.Iterations != 3 {
		t.Fatalf("the state read: %+v %v", got, err)
	}
}
