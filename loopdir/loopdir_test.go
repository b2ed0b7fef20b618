package loopdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
)

// Only the record files the engine created (and so indexed) are the loop's:
// a file an agent drops into working-records is never read, tailed,
// followed or counted in the spend.
func TestRecordsReadOnlyIndexedFiles(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	d := Dir(t.TempDir())
	// No index yet (a loop from before the index): every file counts.
	if err := os.MkdirAll(d.Records(), 0o700); err != nil {
		t.Fatal(err)
	}
	early := filepath.Join(d.Records(), "00000000T000000Z-loop-old.jsonl")
	os.WriteFile(early, []byte(`{"event":"warning","message":"old"}`+"\n"), 0o600)
	if files, _ := d.RecordFiles(); len(files) != 1 || files[0] != early {
		t.Fatalf("without an index, RecordFiles = %v, want the one file", files)
	}

	w, err := d.CreateRecords("r1", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(record.Event{Event: record.AgentEnd, CostUSD: 0.5})
	w.Write(record.Event{Event: record.LoopStop, Reason: "done"})
	w.Close()
	forged := filepath.Join(d.Records(), "99999999T000000Z-loop-forged.jsonl")
	os.WriteFile(forged, []byte(`{"event":"agent_end","cost_usd":100}`+"\n"+`{"event":"loop_stop","reason":"forged"}`+"\n"), 0o600)

	files, err := d.RecordFiles()
	if err != nil || len(files) != 1 || files[0] != w.Path() {
		t.Fatalf("RecordFiles = %v %v, want only %s", files, err, w.Path())
	}
	evs, _ := d.ReadRecords()
	if len(evs) != 2 {
		t.Errorf("ReadRecords read %d events, want the engine's 2", len(evs))
	}
	tail, offsets, _ := d.Tail(1, nil)
	if len(tail) != 1 || tail[0].Reason != "done" {
		t.Errorf("Tail = %+v, want the engine's loop_stop", tail)
	}
	if _, ok := offsets[forged]; ok {
		t.Error("Tail read the forged file")
	}
	fl := d.FollowAt(offsets)
	w2, _ := d.CreateRecords("r2", "command", time.Now().Add(time.Second))
	w2.Write(record.Event{Event: record.Warning, Message: "new"})
	w2.Close()
	os.WriteFile(forged, []byte(`{"event":"warning","message":"forged again"}`+"\n"), 0o600)
	if got := fl.Poll(); len(got) != 1 || got[0].Message != "new" {
		t.Errorf("FollowAt polled %+v, want only the new engine record", got)
	}
	if got := d.Follow(true).Poll(); len(got) != 3 {
		t.Errorf("Follow from the start polled %d events, want 3", len(got))
	}
	for name, spend := range map[string]func() (float64, error){
		"Spend":         func() (float64, error) { r, err := d.Spend(); return r.Total.CostUSD, err },
		"SpendUncached": func() (float64, error) { r, err := d.SpendUncached(); return r.Total.CostUSD, err },
	} {
		if got, err := spend(); err != nil || got != 0.5 {
			t.Errorf("%s = %v %v, want 0.5 (the forged $100 left out)", name, got, err)
		}
	}
	if _, err := os.Stat(d.Private().Tally()); err != nil {
		t.Errorf("Spend saved no tally: %v", err)
	}
}

// A loop is found by its folder: the same folder, however it is named,
// has one private folder; another folder has another.
func TestPrivateOf(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", "/state")
	a := PrivateOf("/work/a")
	if a != PrivateOf("/work/x/../a/") {
		t.Error("one folder, two private folders")
	}
	if a == PrivateOf("/work/b") {
		t.Error("two folders, one private folder")
	}
	if filepath.Dir(string(a)) != "/state/engine" {
		t.Errorf("private folder %s is not under the state root", a)
	}
	t.Setenv("LOOPRINTER_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "/xdg")
	if StateRoot() != "/xdg/looprinter" {
		t.Errorf("StateRoot = %s", StateRoot())
	}
}

// A loop folder's engine state belongs to one loop: the first name claims
// it, the same name again is welcome, another name is refused unless it
// starts afresh, and then it holds the folder.
func TestClaim(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	d := Dir(t.TempDir())
	if err := d.Claim("one", false); err != nil {
		t.Fatal(err)
	}
	if err := d.Claim("one", false); err != nil {
		t.Errorf("the same loop again: %v", err)
	}
	err := d.Claim("two", false)
	var other *ErrOtherLoop
	if !errors.As(err, &other) || other.Holds != "one" || other.Wants != "two" {
		t.Fatalf("another loop: %v", err)
	}
	if err := d.Claim("two", true); err != nil {
		t.Fatalf("another loop, fresh: %v", err)
	}
	if err := d.Claim("one", false); err == nil {
		t.Error("after the fresh start the folder is still the first loop's")
	}
}

// A loop folder removed and made again at its path is another folder: its
// old state is set aside once; a folder a fleet carried state into is
// adopted.
func TestRecreated(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "proj")
	os.Mkdir(dir, 0o755)
	d := Dir(dir)
	if aside, err := d.Recreated(); err != nil || aside != "" {
		t.Fatalf("first run: %q %v", aside, err)
	}
	os.WriteFile(d.Private().State(), []byte("{}"), 0o600)
	if aside, err := d.Recreated(); err != nil || aside != "" {
		t.Fatalf("same folder: %q %v", aside, err)
	}
	os.RemoveAll(dir) // at once: the same inode may well come back
	os.Mkdir(dir, 0o755)
	aside, err := d.Recreated()
	if err != nil || aside == "" {
		t.Fatalf("re-created folder: %q %v", aside, err)
	}
	if _, err := os.Stat(filepath.Join(aside, "state.json")); err != nil {
		t.Errorf("the old state is not where it was set aside: %v", err)
	}
	if _, err := os.Stat(d.Private().State()); err == nil {
		t.Error("the new loop starts with the old one's state")
	}
	if aside, err := d.Recreated(); err != nil || aside != "" {
		t.Fatalf("the same new folder again: %q %v", aside, err)
	}
	// A fleet's worker: the state came from another machine.
	os.WriteFile(d.Private().FleetStart(), []byte("abc\n"), 0o600)
	os.RemoveAll(dir)
	os.Mkdir(dir, 0o755)
	if aside, err := d.Recreated(); err != nil || aside != "" {
		t.Fatalf("fleet: %q %v", aside, err)
	}
}

// A status probe holding the lock for a moment (Locked, which writes no
// pid) does not make a starting run fail as if another run held the loop.
func TestAcquireLockWaitsOutAProbe(t *testing.T) {
	dir := t.TempDir()
	first, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	f, err := os.OpenFile(Dir(dir).LockFile(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := proc.TryLock(f); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		proc.Unlock(f)
	}()
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("a run starting during a probe was refused: %v", err)
	}
	defer l.Release()
	if got := LockHolder(dir); got != os.Getpid() {
		t.Fatalf("lock holder %d, want %d", got, os.Getpid())
	}
}

// A run that holds the loop (its pid written) refuses a second at once.
func TestAcquireLockRefusesALiveRun(t *testing.T) {
	dir := t.TempDir()
	first, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	start := time.Now()
	_, err = AcquireLock(dir)
	var locked *ErrLocked
	if !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("second acquire: %v", err)
	}
	if d := time.Since(start); d > probeWait/2 {
		t.Fatalf("refusing a live run took %v", d)
	}
}
