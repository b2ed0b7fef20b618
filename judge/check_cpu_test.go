package judge

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// cpuDaemon is a check that double-forks a CPU-burning daemon (setsid, its
// parent exits at once: neither the engine nor the check waits for it),
// waits with sleep for it to finish and prints its own CPU in clock ticks
// (its /proc/self/stat, read by the daemon's shell itself).
const cpuDaemon = `out="${TMPDIR:-/tmp}/burnt"
( setsid sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; read -r st < /proc/self/stat; set -- ${st##*") "}; echo "$((${12} + ${13}))" > "$0.tmp"; mv "$0.tmp" "$0"' "$out" </dev/null >/dev/null 2>&1 & )
n=0
while [ ! -s "$out" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done
echo "burnt $(cat "$out")"`

// needCPUCgroup skips where the machine gives this process no cgroup of
// its own: there a check's CPU is only its process tree's (rusage).
func needCPUCgroup(t *testing.T) {
	t.Helper()
	if err := sandbox.CgroupProbe(); err != nil {
		t.Skipf("this machine gives this process no cgroup of its own, so no check's CPU can be read from one (it is the process tree's): %v", err)
	}
}

// A gate's check whose code double-forks a CPU-burning daemon: the check's
// record carries the daemon's CPU (cpu_ms), read from the check's cgroup
// (Landlock: one per check) or its box's (bubblewrap: a gate's checks in
// one box), and says where it came from.
func TestCheckCPUCountsDaemon(t *testing.T) {
	needCPUCgroup(t)
	for _, kind := range []string{sandbox.Bwrap, sandbox.Landlock} {
		t.Run(kind, func(t *testing.T) {
			needBox(t, kind)
			j, _ := newJudge(t, &spec.Loop{Sandbox: kind})
			rs := j.RunChecks(context.Background(), "cycle", []string{cpuDaemon})
			if len(rs) != 1 || !rs[0].Pass {
				t.Fatalf("the check: %+v", rs)
			}
			log, _ := os.ReadFile(rs[0].Output)
			daemon := time.Duration(0)
			for _, line := range strings.Split(string(log), "\n") {
				if v, ok := strings.CutPrefix(line, "burnt "); ok {
					n, _ := strconv.Atoi(strings.TrimSpace(v))
					daemon = time.Duration(n) * 10 * time.Millisecond
				}
			}
			if daemon <= 0 {
				t.Fatalf("the daemon did not report its CPU:\n%s", log)
			}
			cpu := time.Duration(rs[0].CPUMS) * time.Millisecond
			t.Logf("%s: the daemon burnt %s; the check's record says %s (%s)", kind, daemon, cpu, rs[0].CPUFrom)
			if want := map[string]string{sandbox.Bwrap: sandbox.UsageBox, sandbox.Landlock: sandbox.UsageCgroup}[kind]; rs[0].CPUFrom != want {
				t.Fatalf("the figure came from %q, want %q", rs[0].CPUFrom, want)
			}
			if cpu+20*time.Millisecond < daemon {
				t.Fatalf("the check's CPU %s misses the daemon's %s", cpu, daemon)
			}
		})
	}
}

// The strength pass's record carries its checks' CPU, a daemon each of
// them double-forked included: every run (the control and five mutants)
// burns at least 100ms in a daemon the checks never wait for.
func TestStrengthCPUCountsDaemons(t *testing.T) {
	needCPUCgroup(t)
	for _, kind := range []string{sandbox.Bwrap, sandbox.Landlock} {
		t.Run(kind, func(t *testing.T) {
			needBox(t, kind)
			j, evs, base := strengthLoop(t)
			check := cpuDaemon + ` >/dev/null; grep -q 'x < lo' calc.py && grep -q 'x > hi' calc.py && grep -q 'return x' calc.py`
			s := j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{check}, Kind: kind, Workers: 2})
			if s.Error != "" || s.Mutants != 5 || s.Caught != 3 {
				t.Fatalf("strength %+v", s)
			}
			runs := time.Duration(s.Mutants + 1)
			t.Logf("%s: the pass's checks used %dms of CPU (%s) for %d mutants", kind, s.CPUMS, s.CPUFrom, s.Mutants)
			if time.Duration(s.CPUMS)*time.Millisecond < runs*100*time.Millisecond {
				t.Fatalf("the pass's CPU %dms misses its daemons' (at least 100ms in each of %d runs)", s.CPUMS, runs)
			}
			if s.CPUFrom != sandbox.UsageBox && s.CPUFrom != sandbox.UsageCgroup {
				t.Fatalf("the pass's CPU came from %q", s.CPUFrom)
			}
			var rec *record.Strength
			for _, ev := range *evs {
				if ev.Event == record.VerifyStrength {
					rec = ev.Strength
				}
			}
			if rec == nil || rec.CPUMS != s.CPUMS {
				t.Fatalf("the verify_strength record: %+v", rec)
			}
		})
	}
}
