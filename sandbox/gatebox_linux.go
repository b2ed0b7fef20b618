//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/sandbox/nshelper"
	"golang.org/x/sys/unix"
)

// A gate's checks in one box: a bubblewrap box's first check (Run) starts
// bubblewrap once, with the layer helper as a small server inside it
// (nshelper.Serve); every check of the box is then a request to it, run
// in fresh mount, PID, IPC (and network) namespaces with fresh layers
// over the tree, HOME and the caches and fresh /tmp, /var/tmp, /run and
// /dev/shm, all of it gone before the next check. Close ends the server.

// serverStage is the folder of the view where the server makes each
// check's layers' folders (on a tmpfs of the check's), empty and
// read-only to the check.
const serverStage = "/.looprinter-layers"

// boxServer is the running server of a box.
type boxServer struct {
	conn  *os.File // the engine's end of the packet socket
	cmd   *exec.Cmd
	g     *Cgroup
	env   []string // the environment the view was built for
	files []*os.File
	reply []byte // the buffer a check's reply is read into (one at a time)
	// key is what the server serves (serverKey; "" for a server no other
	// box takes: one laying its box's base), tree the checks' tree; noBase:
	// it lays no base (none was written when it started).
	key, tree string
	noBase    bool
	broken    atomic.Bool   // it did not answer a check: never kept
	last      time.Time     // kept since
	mark      time.Duration // its cgroup's CPU at its last check's end
	spare     func()        // its release from the sweeps (Spare)
}

// Serves says whether the box runs a check with env in its server (Run),
// rather than as a process of its own (Command): a bubblewrap box whose
// checks reach no proxy and write to no cache layer, every check with the
// environment of the first.
func (b *CheckBox) Serves(env []string) bool {
	if b.opts.Kind != Bwrap || b.opts.Proxy != nil || (b.opts.Cache != nil && b.opts.Cache.Warm) || b.scratch == "" {
		return false
	}
	if os.Getenv("LOOPRINTER_CHECK_BOX_SERVER") == "off" {
		return false
	}
	return b.server == nil || slices.Equal(b.server.env, env)
}

// Run runs shellLine with /bin/sh -c in dir under the box's server (see
// Serves), its output (stdout and stderr) written to out, until it ends
// or ctx does (then it is killed). It returns the shell's exit status
// (128+signal when killed).
func (b *CheckBox) Run(ctx context.Context, dir, shellLine string, env []string, out io.Writer) (int, error) {
	code, _, err := b.RunUsage(ctx, dir, shellLine, env, out)
	return code, err
}

// RunUsage is Run that also says what CPU the check used: the difference
// of the box's cgroup's figure across it (UsageBox; the box's start is
// the first check's; a server kept from an earlier box counts from its
// last check), nothing where the box has no cgroup (its
// processes are not the engine's children: no process tree to read). A
// box's checks run one at a time: do not call Run or RunUsage of one box
// at once.
func (b *CheckBox) RunUsage(ctx context.Context, dir, shellLine string, env []string, out io.Writer) (int, Usage, error) {
	if !b.Serves(env) {
		return -1, Usage{}, errors.New("sandbox: this box runs each check as a process of its own")
	}
	cdir, err := canonical(dir)
	if err != nil || !Within(cdir, b.tree) {
		return -1, Usage{}, fmt.Errorf("sandbox: the check's folder %s is outside the checks' tree %s", dir, b.tree)
	}
	if b.server == nil {
		if err := b.startServer(env); err != nil {
			return -1, Usage{}, err
		}
	}
	// The cgroup's figure at the end of the server's last check (0 for a
	// new one: its start is its first check's); what the server spent
	// between checks is the next one's.
	s := b.server
	before := s.mark
	code, err := b.runServed(ctx, cdir, shellLine, env, out)
	var u Usage
	if after, ok := s.cpu(); ok && after >= before {
		u = Usage{CPU: after - before, From: UsageBox}
		s.mark = after
	}
	return code, u, err
}

// cpu is the box's cgroup's CPU so far (false: no cgroup, or ended).
func (s *boxServer) cpu() (time.Duration, bool) {
	if s == nil || s.g == nil {
		return 0, false
	}
	return s.g.CPU()
}

// runServed sends one check to the box's server and waits for its end.
func (b *CheckBox) runServed(ctx context.Context, cdir, shellLine string, env []string, out io.Writer) (int, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer pr.Close()
	req, _ := json.Marshal(nshelper.ServeRequest{Line: shellLine, Dir: cdir, Env: b.serverEnv(env)})
	err = unix.Sendmsg(int(b.server.conn.Fd()), req, unix.UnixRights(int(pw.Fd())), nil, 0)
	pw.Close()
	if err != nil {
		return -1, fmt.Errorf("sandbox: the check box's server: %w", err)
	}
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr)
		close(copied)
	}()
	// Past ctx the server kills the check; a server that does not answer
	// in a moment (stopped by what a check ran) is ended with the whole
	// box, whose later checks then fail.
	srv := b.server
	var mu sync.Mutex
	var gone *time.Timer
	answered := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if answered {
			return
		}
		k, _ := json.Marshal(nshelper.ServeRequest{Kill: true})
		unix.Sendmsg(int(srv.conn.Fd()), k, nil, nil, 0)
		gone = time.AfterFunc(serverGrace, srv.kill)
	})
	if srv.reply == nil {
		srv.reply = make([]byte, 64<<10)
	}
	buf := srv.reply
	n, _, _, _, rerr := unix.Recvmsg(int(srv.conn.Fd()), buf, nil, 0)
	stop()
	mu.Lock()
	answered = true
	if gone != nil {
		gone.Stop()
	}
	mu.Unlock()
	<-copied
	var r nshelper.ServeReply
	if rerr != nil || n == 0 || json.Unmarshal(buf[:n], &r) != nil {
		srv.broken.Store(true)
		return -1, errors.New("sandbox: the check box's server ended")
	}
	if r.Err != "" {
		return r.Exit, errors.New("sandbox: " + r.Err)
	}
	return r.Exit, nil
}

// serverEnv is a check's environment in the box: the caller's without the
// services', then the box's own entries.
func (b *CheckBox) serverEnv(env []string) []string {
	e := append(append(DropServiceEnv(env), "TMPDIR=/tmp"), checkPythonEnv("/tmp/.looprinter-pycache")...)
	return append(e, b.cacheEnv(env, false)...)
}

// startServer starts the box's bubblewrap with the server inside: the
// view a check sees, with the real targets bound where the layers go,
// every writable mount laid again for each check, / and /dev read-only.
// The folders the layers lay under the check's (the setups' layer, the
// cache layer, Lower) and the files placed in the view are given to it
// as descriptors: in the view they are hidden.
func (b *CheckBox) startServer(env []string) error {
	exe, err := nshelper.Path()
	if err != nil {
		return errNoExe
	}
	s := &boxServer{env: env}
	fail := func(err error) error {
		s.close()
		return fmt.Errorf("sandbox: the check box cannot start: %w", err)
	}
	fds := map[string]string{}
	pass := func(p string) (string, error) {
		if v, ok := fds[p]; ok {
			return v, nil
		}
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		s.files = append(s.files, f)
		v := "/proc/self/fd/" + strconv.Itoa(nshelper.ServeFD+len(s.files))
		fds[p] = v
		return v, nil
	}
	// A base no setup wrote is laid by no server: such a server serves
	// the next box's checks as well (gatebox_keep_linux.go).
	base := !emptyDir(b.base.Upper)
	var layers []Layer
	for _, t := range b.targets {
		l := Layer{Target: t}
		if t == b.tree {
			l.Lower = slices.Clone(b.opts.Lower)
			if base {
				l.Lower = append([]string{b.base.Upper}, l.Lower...)
			}
		}
		if err := b.cacheLayer(&l, t, false); err != nil {
			return fail(err)
		}
		layers = append(layers, l)
	}
	m := b.manifest(env)
	b.buildHome(layers, m, env)
	// The folders laid under the checks' layers are bound aside in the
	// view (overlayfs takes a lower folder of its own mount namespace
	// only); each check's view covers them.
	var aside asideBinds
	for i := range layers {
		aside.layer(&layers[i])
	}
	// As root the server lays the layers as stage 2 does (trusted
	// attributes, which the setups' and the runs' layers are written
	// with): it runs with root's capabilities, in no user namespace;
	// each check gives up every one before its shell starts.
	root := os.Getuid() == 0
	spec := nshelper.Serve{Layers: layers, UserNS: !root, Root: b.tree, Stage: filepath.Join(serverStage, "s"), Aside: serverStage, NewNet: b.opts.Network != CheckNetworkHost}
	for _, p := range b.opts.Put {
		from, err := pass(p.From)
		if err != nil {
			return fail(err)
		}
		spec.Put = append(spec.Put, ViewFile{From: from, To: filepath.Join(b.tree, filepath.FromSlash(p.To)), Mode: p.Mode})
	}
	for _, r := range b.opts.Remove {
		spec.Hide = append(spec.Hide, filepath.Join(b.tree, filepath.FromSlash(r)))
	}
	view := b.viewBwrap(m, false)
	spec.Ops = serverOps(view, b.targets)
	// A file laid where none is inside a layer's target: bound aside once,
	// laid in each check's layer (never made in the host's folder).
	inLayer, _ := splitOver(b.opts.Over, b.targets)
	for i, o := range inLayer {
		at := filepath.Join(overAside, "f", strconv.Itoa(i))
		view = append(view, "--ro-bind", o.From, at)
		spec.Ops = append(spec.Ops, nshelper.Op{Kind: "bind", Path: o.To, Target: at})
	}
	a := []string{"--die-with-parent", "--unshare-pid", "--new-session", "--cap-add", "ALL"}
	if !root {
		a = append(a, "--unshare-user", "--uid", strconv.Itoa(os.Getuid()), "--gid", strconv.Itoa(os.Getgid()))
	}
	if spec.NewNet {
		a = append(a, "--unshare-net")
	}
	a = append(a, view...)
	a = append(append(a, aside.args...), "--dir", filepath.Join(serverStage, "s"))
	spec.Bases = filepath.Join(serverStage, "b")
	for i, l := range layers {
		if l.Built {
			a = append(a, "--dir", filepath.Join(spec.Bases, strconv.Itoa(i)))
		}
	}
	// The helper is started by its descriptor: the view need not hold it.
	self, err := pass(exe)
	if err != nil {
		return fail(err)
	}
	a = append(a, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/", "--", self)
	if !base && !slices.ContainsFunc(a, func(x string) bool { return Within(x, b.scratch) }) {
		passed := []string{exe}
		for _, p := range b.opts.Put {
			passed = append(passed, p.From)
		}
		s.key = serverKey(a, spec, env, passed)
		if kept := takeServer(s.key); kept != nil {
			s.close()
			b.server = kept
			return nil
		}
	}
	s.tree, s.noBase = b.tree, !base
	s.g = boxCgroup()
	conn, cmd, err := startServe(a, spec, s.files, s.g.FD(), false)
	if err != nil {
		return fail(err)
	}
	s.conn, s.cmd = conn, cmd
	s.spare = Spare(cmd.Process.Pid)
	b.server = s
	return nil
}

// boxCgroup is the cgroup a box is born in, named for this engine
// (CgroupPrefix+PID+"-box-…"): nil where the machine gives none. Its
// End ends the box whole; a box a killed engine left is ended by the
// next engine's PruneCgroups.
func boxCgroup() *Cgroup {
	if CgroupProbe() != nil {
		return nil
	}
	g, err := NewCgroup(strconv.Itoa(os.Getpid()) + "-box")
	if err != nil {
		return nil
	}
	return g
}

// startServe starts bubblewrap with args a, which end in the layer
// helper's start: the helper serves spec, its connection to the engine
// (conn, a unix packet socket) its descriptor 3 and files the ones after
// it (spec.Keep names them). cgroupFD, when not -1, is the cgroup the box
// is born in; dieWith: the box ends with the thread that starts it (a
// box that outlives a gate).
func startServe(a []string, spec nshelper.Serve, files []*os.File, cgroupFD int, dieWith bool) (*os.File, *exec.Cmd, error) {
	for i := range files {
		spec.Keep = append(spec.Keep, nshelper.ServeFD+1+i)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	conn := os.NewFile(uintptr(pair[0]), "box")
	theirs := os.NewFile(uintptr(pair[1]), "box-server")
	defer theirs.Close()
	cmd := exec.Command(bwrapOnce.path, a...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", nshelper.EnvServe + "=" + string(js)}
	cmd.ExtraFiles = append([]*os.File{theirs}, files...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if dieWith {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if cgroupFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = cgroupFD
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, cmd, nil
}

// asideBinds are the folders a box's server reads under its layers,
// each bound read-only aside in the box's view (serverStage/l/N, which
// every check's or run's view covers): args are bubblewrap's binds.
type asideBinds struct {
	args []string
	at   map[string]string
}

// bind is where the box's view holds the folder p.
func (a *asideBinds) bind(p string) string {
	if a.at == nil {
		a.at = map[string]string{}
	}
	if _, ok := a.at[p]; !ok {
		a.at[p] = filepath.Join(serverStage, "l", strconv.Itoa(len(a.at)))
		a.args = append(a.args, "--ro-bind", p, a.at[p])
	}
	return a.at[p]
}

// layer reads l's lower folders and the real folders under it through
// binds aside: the target, or for a built layer each kept folder (a
// layer of its own). As an ordinary user each check's or run's mount
// namespace is made in a user namespace (bubblewrap's second) that does
// not own the view's mounts, so every mount it copies is locked, and
// overlayfs refuses a lower folder holding one (HOME or a cache bound
// inside the tree, a cache inside a kept folder). Bound aside, a folder
// holds none.
func (a *asideBinds) layer(l *Layer) {
	for j, x := range l.Lower {
		l.Lower[j] = a.bind(x)
	}
	if !l.Built {
		l.From = a.bind(l.Target)
		return
	}
	for _, k := range l.Keep {
		if fi, err := os.Lstat(k); err == nil && fi.IsDir() {
			if l.KeepFrom == nil {
				l.KeepFrom = map[string]string{}
			}
			l.KeepFrom[filepath.Clean(k)] = a.bind(k)
		}
	}
}

// serverOps are the mounts of bubblewrap's view args the server lays
// again for each check, in their order: every tmpfs (fresh), the targets
// (the layers, once), and every bind and link inside a folder laid again
// (a copy of bubblewrap's, over the fresh one).
func serverOps(args []string, targets []string) []nshelper.Op {
	var ops []nshelper.Op
	var again []string
	layered := false
	seen := map[string]bool{} // targets bound: a second bind lays the layer again
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--tmpfs":
			d := args[i+1]
			ops, again = append(ops, nshelper.Op{Kind: "tmpfs", Path: d}), append(again, d)
			i++
		case "--bind", "--ro-bind", "--dev-bind":
			d := args[i+2]
			switch {
			case slices.Contains(targets, d):
				if !layered {
					ops = append(ops, nshelper.Op{Kind: "layers", Path: d})
					layered, again = true, append(again, targets...)
				} else if seen[d] {
					ops = append(ops, nshelper.Op{Kind: "relayer", Path: d})
				}
				seen[d] = true
			case covered(d, again):
				ops, again = append(ops, nshelper.Op{Kind: "bind", Path: d}), append(again, d)
			}
			i += 2
		case "--symlink":
			if covered(args[i+2], again) {
				ops = append(ops, nshelper.Op{Kind: "symlink", Path: args[i+2], Target: args[i+1]})
			}
			i += 2
		case "--remount-ro":
			// A fresh tmpfs made read-only (a hidden folder): laid so.
			if n := len(ops); n > 0 && ops[n-1].Kind == "tmpfs" && ops[n-1].Path == args[i+1] {
				ops[n-1].RO = true
			}
			i++
		case "--dir", "--dev", "--proc", "--chdir":
			i++
		}
	}
	return ops
}

// closeServer gives the box's server back: kept for the next box that
// would start the same one (keepServer), else ended with every process
// in its cgroup.
func (b *CheckBox) closeServer() {
	if b.server != nil {
		keepServer(b.server)
		b.server = nil
	}
}

// dropBaselessServer gives back a server that lays no base before a
// setup writes the base: the box's next check starts one that lays it.
func (b *CheckBox) dropBaselessServer() {
	if b.server != nil && b.server.noBase {
		b.closeServer()
	}
}

// serverGrace is how long a box's server has to end a check past its
// context before the whole box is ended.
const serverGrace = 5 * time.Second

// kill ends the server and every process of the box at once; the engine's
// end of the socket reads its end.
func (s *boxServer) kill() {
	s.broken.Store(true)
	if s.g != nil {
		s.g.End()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	unix.Shutdown(int(s.conn.Fd()), unix.SHUT_RDWR)
}

func (s *boxServer) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	// The server ends when its connection does (and with it bubblewrap);
	// what does not end in a moment is killed.
	if s.cmd != nil && s.cmd.Process != nil {
		done := make(chan struct{})
		go func() {
			s.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	}
	if s.g != nil {
		s.g.End()
	}
	if s.spare != nil {
		s.spare()
	}
	for _, f := range s.files {
		f.Close()
	}
}
