package proc

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// A run's tree as macOS's table shows it after the run's agent (pid 100,
// leader of session and group 100, started at 1000) did its worst.
func fixture() []Entry {
	return []Entry{
		{PID: 1, PPID: 0, PGID: 1, SID: 1, Start: 1},            // launchd
		{PID: 50, PPID: 1, PGID: 50, SID: 50, Start: 500},       // the engine's shell
		{PID: 60, PPID: 50, PGID: 60, SID: 50, Start: 600},      // the engine
		{PID: 100, PPID: 60, PGID: 100, SID: 100, Start: 1000},  // the agent, setsid by the engine
		{PID: 101, PPID: 100, PGID: 100, SID: 100, Start: 1001}, // its child
		{PID: 102, PPID: 101, PGID: 102, SID: 100, Start: 1002}, // a grandchild in a group of its own
		{PID: 103, PPID: 1, PGID: 100, SID: 100, Start: 1003},   // double fork, no setsid: parent died
		{PID: 104, PPID: 1, PGID: 104, SID: 104, Start: 1004},   // setsid daemon, parent died: marked
		{PID: 105, PPID: 104, PGID: 104, SID: 104, Start: 1005}, // the daemon's worker
		{PID: 106, PPID: 105, PGID: 106, SID: 106, Start: 1006}, // its own setsid child, parent alive
		{PID: 107, PPID: 101, PGID: 100, SID: 100, Start: 1007, Zombie: true},
		{PID: 200, PPID: 1, PGID: 200, SID: 200, Start: 1010}, // a launchd service started meanwhile: not marked
		{PID: 201, PPID: 1, PGID: 201, SID: 201, Start: 900},  // marked but older than the run: a reused pid
		{PID: 202, PPID: 60, PGID: 60, SID: 50, Start: 1020},  // the engine's other child (a check)
		{PID: 203, PPID: 50, PGID: 100, SID: 50, Start: 999},  // group 100 before the run: impossible, but older than root
	}
}

func markedSet(pids ...int) func(Entry) bool {
	m := map[int]bool{}
	for _, p := range pids {
		m[p] = true
	}
	return func(e Entry) bool { return m[e.PID] }
}

func TestMembersFindsTheSetsidDaemon(t *testing.T) {
	got := PIDs(Members(fixture(), 100, 1000, markedSet(104, 201)))
	want := []int{100, 101, 102, 103, 104, 105, 106, 107}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %v, want %v", got, want)
	}
}

func TestMembersWithoutMarkMissesOnlyTheDaemon(t *testing.T) {
	got := PIDs(Members(fixture(), 100, 1000, nil))
	want := []int{100, 101, 102, 103, 107}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %v, want %v", got, want)
	}
}

func TestMembersAfterTheLeaderDied(t *testing.T) {
	var table []Entry
	for _, e := range fixture() {
		if e.PID != 100 {
			table = append(table, e)
		}
	}
	for i := range table {
		if table[i].PPID == 100 {
			table[i].PPID = 1 // re-parented
		}
	}
	got := PIDs(Members(table, 100, 1000, markedSet(104)))
	want := []int{101, 102, 103, 104, 105, 106, 107}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %v, want %v", got, want)
	}
}

func TestMembersLeaderPidReused(t *testing.T) {
	// The run is gone; pid 100 is another program's, leading group 100.
	table := []Entry{
		{PID: 1, PGID: 1, SID: 1, Start: 1},
		{PID: 100, PPID: 1, PGID: 100, SID: 100, Start: 5000},
		{PID: 101, PPID: 100, PGID: 100, SID: 100, Start: 5001},
		{PID: 104, PPID: 1, PGID: 104, SID: 104, Start: 1004},
	}
	got := PIDs(Members(table, 100, 1000, markedSet(104)))
	if want := []int{104}; !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %v, want %v", got, want)
	}
}

func TestMembersAsksOnlyOrphansStartedSinceTheRun(t *testing.T) {
	var asked []int
	Members(fixture(), 100, 1000, func(e Entry) bool { asked = append(asked, e.PID); return false })
	for _, p := range asked {
		if p != 104 && p != 200 {
			t.Errorf("asked about %d", p)
		}
	}
	if len(asked) != 2 {
		t.Errorf("asked about %v, want 104 and 200 once each", asked)
	}
}

func procargs(argc uint32, parts ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, argc)
	for _, p := range parts {
		b = append(b, p...)
		b = append(b, 0)
	}
	return b
}

func TestParseProcArgs(t *testing.T) {
	b := procargs(2, "/bin/sleep", "", "", "sleep", "60", "A=1", "LOOPRINTER_OWNER=60.600", "", "junk")
	args, env, err := parseProcArgs(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(args, []string{"sleep", "60"}) {
		t.Errorf("args = %q", args)
	}
	if string(env) != "A=1\x00LOOPRINTER_OWNER=60.600\x00" {
		t.Errorf("env = %q", env)
	}
	if !EnvHas(env, "LOOPRINTER_OWNER=60.600") || EnvHas(env, "LOOPRINTER_OWNER=60.60") || EnvHas(env, "junk") {
		t.Error("EnvHas")
	}
	if _, _, err := parseProcArgs(procargs(3, "/bin/x", "a")); err == nil {
		t.Error("arguments cut short: no error")
	}
	if _, _, err := parseProcArgs([]byte{1}); err == nil {
		t.Error("too short: no error")
	}
}

// The engine (60) was started by a shell in a pipeline: its group holds
// the pipeline's other command (61), which it did not start. Sweeping the
// engine's descendants must not touch it.
func TestMembersOfAnEngineSparesItsPipeline(t *testing.T) {
	table := []Entry{
		{PID: 1, PGID: 1, SID: 1, Start: 1},
		{PID: 50, PPID: 1, PGID: 50, SID: 50, Start: 500},
		{PID: 60, PPID: 50, PGID: 60, SID: 50, Start: 600},
		{PID: 61, PPID: 50, PGID: 60, SID: 50, Start: 601}, // | tee log
		{PID: 70, PPID: 60, PGID: 70, SID: 70, Start: 700}, // an agent
		{PID: 71, PPID: 1, PGID: 70, SID: 70, Start: 701},  // its orphan
		{PID: 72, PPID: 1, PGID: 72, SID: 72, Start: 702},  // its setsid daemon
	}
	got := PIDs(Members(table, 60, 600, markedSet(72)))
	if want := []int{60, 70, 71, 72}; !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %v, want %v", got, want)
	}
}

func TestVictimsSpareTheKeptSubtree(t *testing.T) {
	members := []Entry{
		{PID: 60, PPID: 50},
		{PID: 70, PPID: 60},               // kept (a running agent)
		{PID: 71, PPID: 70},               // below it: spared
		{PID: 72, PPID: 71},               // further below: spared
		{PID: 80, PPID: 60},               // left over: killed
		{PID: 81, PPID: 1},                // a daemon: killed
		{PID: 82, PPID: 60, Zombie: true}, // reaped
		{PID: 83, PPID: 80, Zombie: true}, // someone else's to reap
	}
	live, zombies := Victims(members, 60, []int{70})
	if got := PIDs(live); !reflect.DeepEqual(got, []int{80, 81}) {
		t.Errorf("live = %v, want [80 81]", got)
	}
	if got := PIDs(zombies); !reflect.DeepEqual(got, []int{82}) {
		t.Errorf("zombies = %v, want [82]", got)
	}
}
