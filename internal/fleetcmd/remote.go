package fleetcmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/looprinter/looprinter/fleet"
	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/gitops"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/schedule"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
)

func init() { cli.Remote = remoteLoops }

// remoteLoops is the fleet the ordinary commands reach: nil, nil unless a
// frontend is configured ($LOOPRINTER_TEMPORAL, or a running `fleet dev`),
// so that a machine without a fleet never waits on one.
func remoteLoops() (cli.RemoteLoops, error) {
	var f connFlags
	c, ok := f.resolve()
	if !ok {
		return nil, nil
	}
	cl, err := fleet.Dial(c)
	if err != nil {
		return nil, err
	}
	return &remote{c: cl, conn: c}, nil
}

type remote struct {
	c    client.Client
	conn fleet.Conn
}

func (r *remote) Close() { r.c.Close() }

func (r *remote) Where() string {
	return fmt.Sprintf("Temporal %s, namespace %s", r.conn.HostPort, r.conn.Namespace)
}

func (r *remote) Find(ctx context.Context, name string) (*cli.RemoteStatus, error) {
	s, id, err := fleet.LoopStatusAt(ctx, r.c, name)
	if err != nil {
		if errors.Is(err, fleet.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s", cli.ErrNoRemoteLoop, name)
		}
		return nil, err
	}
	rs := remoteStatus(name, s)
	rs.Workflow = id
	rs.From = "query"
	if s.Outcome != "" {
		rs.From = "result"
	}
	if in, err := fleet.LoopInputOf(ctx, r.c, name); err == nil {
		rs.Remote, rs.Branch = in.Remote, in.Branch
	}
	return rs, nil
}

func (r *remote) List(ctx context.Context) ([]cli.RemoteStatus, error) {
	ls, err := fleet.List(ctx, r.c)
	if err != nil {
		return nil, err
	}
	out := make([]cli.RemoteStatus, 0, len(ls))
	for _, l := range ls {
		if l.Status == nil {
			rs := cli.RemoteStatus{Status: ops.Status{Entry: ops.Entry{Key: "fleet:" + l.Name, Name: l.Name}, State: "unknown", Line: l.Err},
				Fleet: true, Workflow: fleet.WorkflowID(l.Name), Err: l.Err}
			out = append(out, rs)
			continue
		}
		rs := remoteStatus(l.Name, l.Status)
		rs.Workflow, rs.From = l.ID, l.From
		out = append(out, *rs)
	}
	return out, nil
}

// localResume is how the status line of a stopped local loop says to
// resume it; fleetResume is the fleet's way: a stopped fleet loop is not
// resumed (its state lives in the ended workflow), a new submit runs it
// again from its branch.
const (
	localResume = "`looprinter start` resumes it."
	fleetResume = "the fleet does not resume a stopped loop: `looprinter submit` runs it again on its branch, as a new run."
)

// remoteStatus is a fleet status as the ordinary commands show a loop.
func remoteStatus(name string, s *fleet.Status) *cli.RemoteStatus {
	st := &loop.State{Loop: name, Shape: s.Shape, Phase: s.Phase, Cycle: s.Cycle, Iterations: s.Iterations, AgentRuns: s.AgentRuns,
		TasksPassed: s.TasksPassed, CostUSD: s.CostUSD, WallMS: s.WallMS, CycleGate: s.CycleGate, ObjectiveGate: s.ObjectiveGate,
		Outcome: s.Outcome, ExitCode: s.ExitCode, Summary: s.Summary, StartedAt: time.Unix(0, 1)}
	state := ops.StateRunning
	switch {
	case s.Outcome == loop.ReasonInterrupted:
		state = ops.StateInterrupted
	case s.Outcome != "":
		state = ops.StateFinished
	case s.Paused:
		state = ops.StatePaused
	}
	line := ops.Line(st, nil, state)
	// A local loop's way back (`looprinter start`) is not the fleet's.
	line = strings.Replace(line, localResume, fleetResume, 1)
	ost := ops.Status{Entry: ops.Entry{Key: "fleet:" + name, Name: name}, State: state, Loop: st, Line: line}
	if s.Outcome != "" {
		code := s.ExitCode
		ost.Outcome, ost.ExitCode = s.Outcome, &code
	}
	return &cli.RemoteStatus{Status: ost, Fleet: true, Workflow: fleet.WorkflowID(name), Steps: s.Steps, Worker: s.Worker, Commit: s.Commit,
		Notes: s.Notes, Stopping: s.Stopping}
}

func (r *remote) Control(ctx context.Context, name, action string) error {
	switch action {
	case "pause", "resume", "stop":
	default:
		return fmt.Errorf("unknown action %q", action)
	}
	return fleet.Signal(ctx, r.c, name, action)
}

// Records fetches the loop's branch and copies the record files of its
// working-records/ (regular files only: the branch holds what agents
// wrote) into the state folder's fleet/records/NAME/working-records.
func (r *remote) Records(ctx context.Context, name string) (string, error) {
	in, err := fleet.LoopInputOf(ctx, r.c, name)
	if err != nil {
		return "", err
	}
	dir := recordsCache(name)
	repo := filepath.Join(dir, "git")
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
		if err := os.MkdirAll(repo, 0o700); err != nil {
			return "", err
		}
		if _, err := gitops.Git(repo, "init", "-q", "--bare"); err != nil {
			return "", err
		}
	}
	const ref = "refs/looprinter/records"
	if _, err := gitCtx(ctx, repo, "fetch", "-q", "--no-tags", "--", in.Remote, "+refs/heads/"+in.Branch+":"+ref); err != nil {
		return "", fmt.Errorf("git fetch %s %s: %w", in.Remote, in.Branch, err)
	}
	sub := path.Join(path.Dir(in.LoopFile), loopdir.RecordsDir)
	if !filepath.IsLocal(sub) && sub != loopdir.RecordsDir {
		return "", fmt.Errorf("the loop file's path %q is outside its repository", in.LoopFile)
	}
	out := loopdir.Dir(dir).Records()
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", err
	}
	list, err := gitCtx(ctx, repo, "ls-tree", ref, sub+"/")
	if err != nil {
		return "", err
	}
	index := map[string]string{} // file → blob already copied
	idxPath := filepath.Join(dir, "blobs.json")
	if b, err := os.ReadFile(idxPath); err == nil {
		json.Unmarshal(b, &index)
	}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		// <mode> SP <type> SP <object> TAB <file>
		meta, file, ok := strings.Cut(line, "\t")
		fs := strings.Fields(meta)
		if !ok || len(fs) != 3 || fs[1] != "blob" || (fs[0] != "100644" && fs[0] != "100755") {
			continue
		}
		base := path.Base(file)
		if !recordFile.MatchString(base) || index[base] == fs[2] {
			continue
		}
		data, err := gitCtx(ctx, repo, "cat-file", "blob", fs[2])
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(out, base), []byte(data), 0o600); err != nil {
			return "", err
		}
		index[base] = fs[2]
	}
	if b, err := json.Marshal(index); err == nil {
		os.WriteFile(idxPath, b, 0o600)
	}
	return dir, nil
}

// recordFile is a record file's name; nothing else on the branch is copied.
var recordFile = regexp.MustCompile(`^[A-Za-z0-9._-]+\.jsonl$`)

// recordsCache is where a fleet loop's records are copied: a folder per
// name, named so that no loop name can point elsewhere.
func recordsCache(name string) string {
	sum := sha256.Sum256([]byte(name))
	safe := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(name, "_")
	if len(safe) > 40 {
		safe = safe[:40]
	}
	return filepath.Join(loopdir.StateRoot(), "fleet", "records", strings.Trim(safe, ".")+"-"+hex.EncodeToString(sum[:6]))
}

// gitCtx runs git in dir, bounded by ctx, and returns its exact output.
func gitCtx(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", safegit.Args(args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (r *remote) Schedule(ctx context.Context, req cli.RemoteScheduleRequest) (string, error) {
	in, queue, err := loopInput(ctx, r.c, r.conn, loopRequest{file: req.File, remote: req.Remote, branch: req.Branch, queue: req.TaskQueue})
	if err != nil {
		return "", err
	}
	l, err := loadLoop(req.File)
	if err != nil {
		return "", err
	}
	sch, err := schedule.Of(l, req.Every, req.Cron)
	if err != nil {
		return "", &ExitError{Code: cli.ExitUsage, Err: err}
	}
	w := fleet.When{Every: sch.Every, Cron: sch.Cron}
	if err := fleet.CreateSchedule(ctx, r.c, queue, *in, w); err != nil {
		return "", &ExitError{Code: ExitBlocked, Err: err}
	}
	return fmt.Sprintf("scheduled %s on the fleet (%s): Temporal Schedule %s, %s; a firing while the loop still runs is skipped", in.Name, r.Where(), fleet.ScheduleID(in.Name), w), nil
}

func (r *remote) Schedules(ctx context.Context) ([]cli.RemoteSchedule, error) {
	ss, err := fleet.Schedules(ctx, r.c)
	if err != nil {
		return nil, err
	}
	out := make([]cli.RemoteSchedule, 0, len(ss))
	for _, s := range ss {
		out = append(out, cli.RemoteSchedule{Loop: s.Loop, ID: s.ID, When: s.When, Paused: s.Paused, Next: s.Next, Actions: s.Actions, Skipped: s.Skipped, Running: s.Running})
	}
	return out, nil
}

func (r *remote) Unschedule(ctx context.Context, name string) error {
	return fleet.DeleteSchedule(ctx, r.c, name)
}
