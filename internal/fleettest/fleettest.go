// Package fleettest holds the fleet tests' loops and helpers: a project in
// a git repository with a bare clone as the fleet's remote, a local run of
// the same loop to compare with, and the shape of a loop's records. The
// fleet package's tests and the server-backed tests (internal/fleetdev) share
// it.
package fleettest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Project is a loop's files, by name.
type Project map[string]string

// Cycle is the demo's two-gate cycle with a scripted agent that reports
// spend: plan, build, the cycle gate fails, re-plan, build, DONE.
func Cycle(name string) Project {
	return Project{"loop.yaml": fmt.Sprintf(cycleLoop, name, ""), "agent.txt": cycleScript, "objective.sh": objective}
}

// CycleBudget is Cycle with a cost budget it spends before the end.
func CycleBudget(name string) Project {
	return Project{"loop.yaml": fmt.Sprintf(cycleLoop, name, "  cost_usd: 0.25\n"), "agent.txt": cycleScript, "objective.sh": objective}
}

// SlowBuild is Cycle whose build runs write started.txt, then take a few
// seconds: long enough to kill their worker.
func SlowBuild(name string) Project {
	p := Cycle(name)
	p["agent.txt"] = strings.ReplaceAll(cycleScript, "== build\n", "== build\nwrite started.txt yes\nsleep 4s\n")
	return p
}

// Ralph fails its first attempt and passes the second.
func Ralph(name string) Project {
	return Project{"loop.yaml": fmt.Sprintf(ralphLoop, name), "agent.txt": ralphScript}
}

// Review is a review-shape loop and the change it reviews (to be committed
// on top of the project, as the branch's last commit): round 1 finds two
// major problems, the fixer commits fixes, round 2 finds only a minor one.
func Review(name string) (base, change Project) {
	base = Project{"loop.yaml": fmt.Sprintf(reviewLoop, name), "agent.txt": reviewScript, "check.sh": "echo CHECK-RAN\n",
		"calc.sh": "#!/bin/sh\n", "README.md": "# calc\n"}
	change = Project{"calc.sh": "#!/bin/sh\necho $(($1 / $2)) # REVIEWED-CHANGE\n"}
	return base, change
}

const reviewLoop = `version: 1
name: %s
shape: review
objective: "calc.sh divides two numbers safely"
agent:
  backend: command
  command: "looprinter fake-agent --script agent.txt"
  timeout: 1m
verify:
  - sh check.sh
`

const reviewScript = `== reviewer
findings {"findings":[{"id":"F-1","severity":"major","file":"calc.sh","line":2,"title":"division by zero is not handled","detail":"calc.sh 1 0 crashes","kind":"input-validation"},{"id":"F-2","severity":"major","file":"README.md","line":0,"title":"usage is not documented","detail":"README has no usage","kind":"docs"}]}
cost 0.05
== reviewer
findings {"findings":[{"id":"F-1","severity":"minor","file":"calc.sh","line":1,"title":"name the variables","detail":"use a and b","kind":"style"}]}
cost 0.05
== fixer
write calc.sh #!/bin/sh\n[ "$2" -ne 0 ] || exit 3\necho $(($1 / $2))
run git add calc.sh && git -c user.name=fixer -c user.email=f@f commit -qm "fix F-1: guard division by zero"
write README.md # calc\nusage: calc.sh A B
run git add README.md && git -c user.name=fixer -c user.email=f@f commit -qm "docs: usage for F-2"
cost 0.10
`

const cycleLoop = `version: 1
name: %s
shape: cycle
objective: "hello.txt says hello and world.txt says world"
agent:
  backend: command
  command: "looprinter fake-agent --script agent.txt"
  timeout: 1m
budget:
  iterations: 10
  cycles: 4
  wall: 5m
%sverify:
  - grep -q hello hello.txt
  - grep -q world world.txt
objective_verify:
  - sh objective.sh
`

const cycleScript = `== plan
plan T-001:hello.txt
cost 0.10
== build
do hello
cost 0.20
== build
do world
cost 0.20
== replan
plan T-001:world.txt
cost 0.10
`

const objective = `test "$(cat hello.txt)" = hello && test "$(cat world.txt)" = world
`

const ralphLoop = `version: 1
name: %s
shape: ralph
objective: "ralph.txt says done"
agent:
  backend: command
  command: "looprinter fake-agent --script agent.txt"
  timeout: 1m
budget:
  iterations: 5
  wall: 5m
verify:
  - grep -q done ralph.txt
`

const ralphScript = `== ralph
write ralph.txt not yet
cost 0.05
== ralph
write ralph.txt done
cost 0.05
`

// Git runs git in dir (through testkit.Git) and fails the test on an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return testkit.Git(t, dir, args...)
}

// Repo writes p into a new git repository on branch main and returns its
// folder and a bare clone of it, the fleet's remote.
func Repo(t testing.TB, p Project) (src, remote string) {
	t.Helper()
	root := t.TempDir()
	src = filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	for name, text := range p {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, src, "init", "-q", "-b", "main")
	Git(t, src, "add", "-A")
	Git(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
	remote = filepath.Join(root, "remote.git")
	Git(t, root, "clone", "-q", "--bare", src, remote)
	return src, remote
}

// RepoWithChange is Repo with change (when not empty) committed on top of
// p: the branch's last commit is the change (what a review loop reviews).
func RepoWithChange(t testing.TB, p, change Project) (src, remote string) {
	t.Helper()
	src, remote = Repo(t, p)
	if len(change) == 0 {
		return src, remote
	}
	for name, text := range change {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, src, "add", "-A")
	Git(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the change")
	Git(t, src, "push", "-q", remote, "HEAD:main")
	return src, remote
}

// RunLocal runs the loop with the local engine in a copy of src, with the
// hooks `run` gives it (a git commit per passed task and gate), and returns
// its outcome and the shape of its records.
func RunLocal(t testing.TB, src string) (*loop.Outcome, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "local")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	l, err := spec.Load(filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := loop.Run(context.Background(), l, loop.Options{Hooks: cli.RunHooks(l)})
	if err != nil {
		t.Fatal(err)
	}
	return o, Events(t, loopdir.Dir(dir).Records())
}

// Clone checks the remote's main branch out into a new folder.
func Clone(t testing.TB, remote string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "check")
	Git(t, filepath.Dir(dir), "clone", "-q", "-b", "main", remote, dir)
	return dir
}

// Events is the shape of a loop's records: each event with its phase, task
// and verdict, in order, without times, paths or warnings.
func Events(t testing.TB, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Strings(files)
	var out []string
	for _, f := range files {
		evs, err := record.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Event == record.Warning {
				continue
			}
			pass := ""
			if e.Pass != nil {
				pass = fmt.Sprint(*e.Pass)
			}
			out = append(out, strings.Join([]string{e.Event, e.Phase, e.Task, pass, e.Reason}, "|"))
		}
	}
	return out
}

// RecordsMention says whether any record file of dir holds text.
func RecordsMention(dir, text string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, p := range files {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), text) {
			return true
		}
	}
	return false
}
