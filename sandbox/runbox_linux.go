//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/sandbox/nshelper"
	"golang.org/x/sys/unix"
)

// A loop's agent runs in one box (see nshelper's runserve): bubblewrap and
// the layer helper start once per loop and view, as a server; each run is
// a request to it, laid afresh on a thread of the server's with the run's
// own layer folders, its agent the first process of a PID namespace of
// its own. Wrap returns a BoxedPath for such a run: agent.Run finds the
// BoxedRun by it (TakeBoxedRun) and starts the agent through the box, or,
// where the box cannot serve it, the classic way (Classic: the helper
// and bubblewrap started for the run).
//
// The box is the same view a run's own bubblewrap would build, with two
// differences, each tighter: / and /dev are read-only (the box outlives
// the run; each run's /tmp, /run, /var/tmp, /dev/shm and the layers are
// its own), and the agent has no user namespace of its own but no
// capability either (an empty bounding set, no new privileges), in a
// PID, mount, IPC and network namespace of its own.

// EnvRunBox, set to "off", starts every run's own helper and bubblewrap.
const EnvRunBox = "LOOPRINTER_RUN_BOX"

// boxedPrefix starts the path Wrap returns for a run served by a box.
const boxedPrefix = "looprinter-run-box:"

// runBoxIdle is how long a box no run used stays up.
const runBoxIdle = 2 * time.Minute

// runBoxAnswer is how long a box has to start a run.
const runBoxAnswer = time.Minute

// runBoxMax is how many boxes this process keeps at most (a wave's slots
// each have one); the least recently used is closed past it.
const runBoxMax = 6

// A BoxedRun is one run Wrap prepared for a box.
type BoxedRun struct {
	key          string
	view         []string // bubblewrap's view args (no namespaces, no command)
	targets      []string
	layers       []Layer // the run's layers, with their folders on the host
	net          *Network
	path         string // the agent's program and arguments
	args         []string
	classic      string // the helper, started for the run where no box serves it
	classicExtra []string
}

var boxed struct {
	sync.Mutex
	runs map[string]*BoxedRun
	n    int
	// off: a box could not serve a run here (no /proc of a PID namespace
	// it did not enter: before Linux 6.18): every run the classic way.
	off bool
}

// TakeBoxedRun is the run Wrap returned path for (BoxedPath), nil for
// any other path. Each is taken once.
func TakeBoxedRun(path string) *BoxedRun {
	if !strings.HasPrefix(path, boxedPrefix) {
		return nil
	}
	boxed.Lock()
	defer boxed.Unlock()
	b := boxed.runs[path]
	delete(boxed.runs, path)
	return b
}

// Classic is how the run starts without the box: the layer helper (its
// path) with the environment entries to add.
func (b *BoxedRun) Classic() (string, []string) { return b.classic, b.classicExtra }

// runBoxesOn says whether Wrap offers runs to a box.
func runBoxesOn() bool {
	if os.Getenv(EnvRunBox) == "off" {
		return false
	}
	boxed.Lock()
	defer boxed.Unlock()
	return !boxed.off
}

// boxRun registers a run for a box: bargs are the run's bubblewrap args
// (bwrapArgs, with --uid and --gid first for a user), args the agent's
// own; classic and extra start it without the box. It returns the path to
// give agent.Run, "" where the args are not in the shape a box takes.
func boxRun(layers []Layer, targets []string, bargs []string, path string, args []string, net *Network, classic string, extra []string) string {
	head := []string{"--die-with-parent", "--unshare-pid", "--new-session", "--unshare-user", "--cap-drop", "ALL"}
	a := bargs
	if len(a) >= 4 && a[0] == "--uid" && a[2] == "--gid" {
		a = a[4:]
	}
	tail := len(a) - len(args) - 4
	if len(a) < len(head)+4+len(args) || !slices.Equal(a[:len(head)], head) || tail < len(head) ||
		a[tail] != "--chdir" || a[tail+2] != "--" || a[tail+3] != path {
		return ""
	}
	view := a[len(head):tail]
	b := &BoxedRun{view: view, targets: targets, layers: layers, net: net, path: path, args: args, classic: classic, classicExtra: extra}
	b.key = b.keyOf()
	boxed.Lock()
	defer boxed.Unlock()
	if boxed.runs == nil || len(boxed.runs) >= 256 {
		// A run Wrap prepared is taken at once (agent.Run): what is left
		// this many runs later was never started.
		boxed.runs = map[string]*BoxedRun{}
	}
	boxed.n++
	p := boxedPrefix + strconv.Itoa(boxed.n)
	boxed.runs[p] = b
	return p
}

// keyOf is what a box serves: the view with the identity of each path
// it mounts from or on (viewIDs), the layers' targets and what they keep,
// and the proxy. A small kept file of HOME is copied into the box's base
// once: its content is in the key.
func (b *BoxedRun) keyOf() string {
	var k strings.Builder
	k.WriteString(strconv.Itoa(os.Getuid()))
	viewIDs(&k, b.view)
	for _, d := range b.folders() {
		pathID(&k, d, false)
	}
	for _, l := range b.layers {
		pathID(&k, l.Target, false)
		if l.Built {
			k.WriteString("\x02built")
			for _, x := range l.Keep {
				pathID(&k, x, true)
			}
		}
	}
	if b.net != nil {
		fmt.Fprintf(&k, "\x03%s:%d", b.net.Socket, b.net.Port)
		pathID(&k, b.net.Socket, false)
	}
	return k.String()
}

// folders are the folders holding the run's layer folders (upper, work,
// lower), each bound aside in the box, writable: overlayfs takes only
// folders of the mount namespace it is laid in.
func (b *BoxedRun) folders() []string {
	var out []string
	for _, l := range b.layers {
		for _, d := range append([]string{l.Upper, l.Work}, l.Lower...) {
			if p := filepath.Dir(filepath.Clean(d)); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// layersAside is where the box's view holds the i-th of folders.
func layersAside(i int) string { return filepath.Join(serverStage, "r", strconv.Itoa(i)) }

// agentBox is a running box.
type agentBox struct {
	key   string
	dir   string   // the loop folder
	conn  *os.File // the engine's end of the server's packet socket
	cmd   *exec.Cmd
	files []*os.File
	spare func()
	busy  bool
	last  time.Time
	// g is the box's own cgroup (bubblewrap and the server; each run's
	// agent is moved to its run's): a killed engine's box is ended by the
	// next engine's PruneCgroups. nil where the machine gives none.
	g *Cgroup
}

// boxStarts counts the boxes this process started.
var boxStarts atomic.Int64

var boxes struct {
	sync.Mutex
	all []*agentBox
}

// errBoxOff: the box cannot serve this run; start it the classic way.
var errBoxOff = errors.New("the run box cannot serve this run")

// take is an idle box for b (started if none), marked busy.
func (b *BoxedRun) take() (*agentBox, error) {
	closeIdle()
	boxes.Lock()
	var found *agentBox
	for _, x := range boxes.all {
		if !x.busy && x.key == b.key {
			found = x
			found.busy = true
			break
		}
	}
	boxes.Unlock()
	if found != nil {
		return found, nil
	}
	x, err := b.start()
	if err != nil {
		return nil, err
	}
	x.busy = true
	boxes.Lock()
	boxes.all = append(boxes.all, x)
	var old *agentBox
	if len(boxes.all) > runBoxMax {
		for _, y := range boxes.all {
			if !y.busy && (old == nil || y.last.Before(old.last)) {
				old = y
			}
		}
		if old != nil {
			boxes.all = slices.DeleteFunc(boxes.all, func(y *agentBox) bool { return y == old })
		}
	}
	boxes.Unlock()
	if old != nil {
		old.close()
	}
	return x, nil
}

// put gives a box back after a run; a box whose run broke it is closed.
// One no run takes again within runBoxIdle is closed then.
func (x *agentBox) put(broken bool) {
	time.AfterFunc(runBoxIdle+time.Second, closeIdle)
	boxes.Lock()
	x.busy = false
	x.last = time.Now()
	if broken {
		boxes.all = slices.DeleteFunc(boxes.all, func(y *agentBox) bool { return y == x })
	}
	boxes.Unlock()
	if broken {
		x.close()
	}
}

// CloseRunBoxes ends every box this process started, and the check
// boxes' servers kept for a next gate.
func CloseRunBoxes() {
	closeBoxes(func(*agentBox) bool { return true })
	closeKeptServers(func(*boxServer) bool { return true })
}

// CloseRunBoxesOf ends the boxes of the loop folder dir that no run uses
// (the loop's end), and the check boxes' servers kept for checks there.
func CloseRunBoxesOf(dir string) {
	if d, err := canonical(dir); err == nil {
		dir = d
	}
	closeBoxes(func(x *agentBox) bool { return x.dir == dir && !x.busy })
	closeKeptServers(func(s *boxServer) bool { return Within(s.tree, dir) })
}

// closeIdle ends the boxes no run used for runBoxIdle.
func closeIdle() {
	now := time.Now()
	closeBoxes(func(x *agentBox) bool { return !x.busy && now.Sub(x.last) >= runBoxIdle })
}

func closeBoxes(which func(*agentBox) bool) {
	for _, x := range takeOut(&boxes.Mutex, &boxes.all, which) {
		x.close()
	}
}

func (x *agentBox) close() {
	if x.conn != nil {
		x.conn.Close()
	}
	if x.cmd != nil && x.cmd.Process != nil {
		done := make(chan struct{})
		go func() {
			x.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			x.cmd.Process.Kill()
			<-done
		}
	}
	if x.g != nil {
		x.g.End()
	}
	if x.spare != nil {
		x.spare()
	}
	for _, f := range x.files {
		f.Close()
	}
}

// start starts b's box: bubblewrap with the run's view and the server in
// it (as CheckBox.startServer does for a gate's checks).
func (b *BoxedRun) start() (*agentBox, error) {
	exe, err := nshelper.Path()
	if err != nil {
		return nil, errNoExe
	}
	x := &agentBox{key: b.key, dir: b.targets[0]}
	fail := func(err error) (*agentBox, error) {
		x.close()
		return nil, fmt.Errorf("sandbox: the run box cannot start: %w", err)
	}
	pass := func(p string, flags int) (string, error) {
		fd, err := unix.Open(p, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		x.files = append(x.files, os.NewFile(uintptr(fd), p))
		return "/proc/self/fd/" + strconv.Itoa(nshelper.ServeFD+len(x.files)), nil
	}
	var aside asideBinds
	layers := make([]Layer, len(b.layers))
	for i, l := range b.layers {
		// The run's own folders (upper, work, lower) come with each run.
		layers[i] = Layer{Target: l.Target, Built: l.Built, Keep: l.Keep}
		aside.layer(&layers[i])
	}
	for i, d := range b.folders() {
		aside.args = append(aside.args, "--bind", d, layersAside(i))
	}
	root := os.Getuid() == 0
	spec := nshelper.Serve{Layers: layers, UserNS: !root, Root: b.targets[0], Stage: filepath.Join(serverStage, "s"), Aside: serverStage, Run: true}
	if b.net != nil && b.net.Socket != "" {
		sock, err := pass(b.net.Socket, unix.O_PATH)
		if err != nil {
			return fail(fmt.Errorf("cannot reach the loop's network proxy: %w", err))
		}
		spec.Relay = &nshelper.RelayNet{Socket: sock, Port: b.net.Port}
	}
	spec.Ops = serverOps(b.view, b.targets)
	a := []string{"--die-with-parent", "--unshare-pid", "--new-session", "--cap-add", "ALL"}
	if !root {
		a = append(a, "--unshare-user", "--uid", strconv.Itoa(os.Getuid()), "--gid", strconv.Itoa(os.Getgid()))
	}
	if b.net == nil {
		spec.HostNet = true // network: open
	} else {
		a = append(a, "--unshare-net")
	}
	a = append(a, b.view...)
	a = append(append(a, aside.args...), "--dir", filepath.Join(serverStage, "s"))
	spec.Bases = filepath.Join(serverStage, "b")
	for i, l := range layers {
		if l.Built {
			a = append(a, "--dir", filepath.Join(spec.Bases, strconv.Itoa(i)))
		}
	}
	self, err := pass(exe, unix.O_RDONLY)
	if err != nil {
		return fail(err)
	}
	a = append(a, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/", "--", self)
	x.g = boxCgroup()
	conn, cmd, err := startServe(a, spec, x.files, x.g.FD(), true)
	if err != nil {
		return fail(err)
	}
	x.conn = conn
	x.cmd = cmd
	x.spare = Spare(cmd.Process.Pid)
	boxStarts.Add(1)
	return x, nil
}

// recvWithin receives one message on the packet socket fd within d
// (syscall.EAGAIN past it). A receive with a timeout set is not restarted
// after a signal handler ran (EINTR, where one without is), and this
// process takes signals all the time (a child's end, the Go runtime's
// own): such a receive is made again with what is left of d, never taken
// for the box's end.
func recvWithin(fd int, buf, oob []byte, d time.Duration) (n, oobn int, err error) {
	deadline := time.Now().Add(d)
	defer unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{})
	for {
		// A timeout of zero is none: the last wait is a millisecond.
		left := max(time.Until(deadline), time.Millisecond)
		tv := unix.NsecToTimeval(left.Nanoseconds())
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		n, oobn, _, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			return n, oobn, err
		}
		if time.Now().After(deadline) {
			return 0, 0, syscall.EAGAIN
		}
	}
}

// A BoxedProcess is an agent a box started.
type BoxedProcess struct {
	// Pid is the agent's process in this process's PID namespace: the
	// leader of its process group (a session of its own).
	Pid  int
	box  *agentBox
	conn *os.File
	done chan struct{}
	code int
	sig  syscall.Signal
	err  error
}

// Start starts the agent Wrap was given, with cmd's Env and Dir (Stdin
// nil or a file, Stdout and Stderr files), in b's box, born in the
// cgroup cgroupFD (-1: none). ErrBoxOff (errors.Is): start cmd, the
// classic way, instead.
func (b *BoxedRun) Start(cmd *exec.Cmd, cgroupFD int) (*BoxedProcess, error) {
	files := make([]*os.File, 0, 8)
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	open := func(p string, flags int) (int, error) {
		fd, err := unix.Open(p, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		f := os.NewFile(uintptr(fd), p)
		opened = append(opened, f)
		files = append(files, f)
		return len(files) - 1, nil
	}
	stdio := []any{cmd.Stdin, cmd.Stdout, cmd.Stderr}
	for i, s := range stdio {
		switch f := s.(type) {
		case *os.File:
			files = append(files, f)
		case nil:
			if i == 0 {
				if _, err := open(os.DevNull, unix.O_RDONLY); err != nil {
					return nil, err
				}
				continue
			}
			return nil, errBoxOff
		default:
			return nil, errBoxOff // a reader or writer the engine copies: the classic way
		}
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mine := os.NewFile(uintptr(pair[0]), "run")
	theirs := os.NewFile(uintptr(pair[1]), "run-server")
	opened = append(opened, theirs)
	files = append(files, theirs)
	argv := append([]string{b.path}, b.args...)
	req := nshelper.RunRequest{Argv: argv, Dir: cmd.Dir, Env: cmd.Env, Cgroup: -1}
	if req.Dir == "" {
		req.Dir, _ = os.Getwd()
	}

	folders := b.folders()
	inBox := func(d string) string {
		d = filepath.Clean(d)
		i := slices.Index(folders, filepath.Dir(d))
		return filepath.Join(layersAside(i), filepath.Base(d))
	}
	for _, l := range b.layers {
		rl := nshelper.RunLayer{Upper: inBox(l.Upper), Work: inBox(l.Work)}
		for _, x := range l.Lower {
			rl.Lower = append(rl.Lower, inBox(x))
		}
		req.Layers = append(req.Layers, rl)
	}
	x, err := b.take()
	if err != nil {
		mine.Close()
		return nil, fmt.Errorf("%w: %v", errBoxOff, err)
	}
	fds := make([]int, len(files), len(files)+1)
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	if cgroupFD >= 0 {
		// Not an *os.File: the engine's own, which a finalizer must not close.
		req.Cgroup = len(fds)
		fds = append(fds, cgroupFD)
	}
	js, err := json.Marshal(req)
	if err != nil {
		mine.Close()
		x.put(false)
		return nil, err
	}
	if err := unix.Sendmsg(int(x.conn.Fd()), js, unix.UnixRights(fds...), nil, 0); err != nil {
		mine.Close()
		x.put(true)
		return nil, fmt.Errorf("%w: %v", errBoxOff, err)
	}
	theirs.Close()
	opened = slices.DeleteFunc(opened, func(f *os.File) bool { return f == theirs })
	p := &BoxedProcess{box: x, conn: mine, done: make(chan struct{})}
	buf, oob := make([]byte, 64<<10), make([]byte, unix.CmsgSpace(4))
	// Laying a run's view takes milliseconds; a box that does not answer
	// in runBoxAnswer (a mount hung on a file system) is ended, and the
	// run starts the classic way, under the run's timeout.
	n, oobn, rerr := recvWithin(int(mine.Fd()), buf, oob, runBoxAnswer)
	var st nshelper.RunStarted
	if rerr != nil || n == 0 {
		// The box ended before it answered (bubblewrap could not start
		// it, or it failed): this process starts its runs the classic way.
		mine.Close()
		x.put(true)
		boxed.Lock()
		boxed.off = true
		boxed.Unlock()
		return nil, fmt.Errorf("%w: the box ended", errBoxOff)
	}
	if json.Unmarshal(buf[:n], &st) != nil || !st.Started {
		// Nothing of the agent ran: the classic start does what the box
		// could not, or fails in its own words (a layer overlayfs refuses,
		// a program not found).
		var r nshelper.ServeReply
		json.Unmarshal(buf[:n], &r)
		mine.Close()
		x.put(false)
		if strings.Contains(r.Err, "pidns=") {
			boxed.Lock()
			boxed.off = true
			boxed.Unlock()
		}
		return nil, fmt.Errorf("%w: %s", errBoxOff, r.Err)
	}
	for _, f := range nshelper.ReceivedFDs(oob[:oobn]) {
		if pid := pidOfPidfd(f); pid > 0 {
			p.Pid = pid
		}
		unix.Close(f)
	}
	if p.Pid <= 0 {
		// No pid to signal the agent by: the server ends it (no answer).
		mine.Close()
		x.put(true)
		return nil, errors.New("sandbox: the run box did not say which process the agent is")
	}
	// The agent is held at its start until the engine knows it.
	if _, err := unix.Write(int(mine.Fd()), []byte{1}); err != nil {
		mine.Close()
		x.put(true)
		return nil, fmt.Errorf("sandbox: the run box: %w", err)
	}
	go p.wait(buf)
	return p, nil
}

// ErrBoxOff is Start's error where the run must start the classic way.
var ErrBoxOff = errBoxOff

func (p *BoxedProcess) wait(buf []byte) {
	defer close(p.done)
	n, _, _, _, err := unix.Recvmsg(int(p.conn.Fd()), buf, nil, 0)
	p.conn.Close()
	var r nshelper.ServeReply
	if err != nil || n == 0 || json.Unmarshal(buf[:n], &r) != nil {
		p.code, p.err = -1, errors.New("sandbox: the run box ended")
		p.box.put(true)
		return
	}
	p.box.put(false)
	p.code, p.sig = r.Exit, syscall.Signal(r.Signal)
	if r.Err != "" {
		p.err = errors.New("sandbox: " + r.Err)
	}
}

// Wait waits for the agent's end: its exit code, or the signal that
// ended it.
func (p *BoxedProcess) Wait() (code int, sig syscall.Signal, err error) {
	<-p.done
	return p.code, p.sig, p.err
}

// Signal sends sig to the agent's process group. The agent is the first
// process of its PID namespace, which the kernel spares a signal it has
// no handler for: where it would have ended the agent (SIGTERM, SIGINT,
// SIGHUP by default), the agent gets SIGKILL, as if it had not been the
// first.
func (p *BoxedProcess) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		// The agent ended, and with it its PID namespace: nothing of the
		// run is left, and its pid may be another's by now.
		return syscall.ESRCH
	default:
	}
	err := syscall.Kill(-p.Pid, sig)
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		if !catches(p.Pid, sig) {
			syscall.Kill(p.Pid, syscall.SIGKILL)
		}
	}
	return err
}

// catches says whether process pid has a handler for sig, or ignores it
// (its /proc status): either way the signal would not end it.
func catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true // gone, or unknown: leave it to the signal sent
	}
	bit := uint64(1) << (uint(sig) - 1)
	for _, line := range strings.Split(string(b), "\n") {
		for _, f := range []string{"SigCgt:", "SigIgn:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&bit != 0 {
					return true
				}
			}
		}
	}
	return false
}

// pidOfPidfd is the process a pidfd refers to, in this process's PID
// namespace (its fdinfo's Pid), 0 when unknown.
func pidOfPidfd(fd int) int {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
