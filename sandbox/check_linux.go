//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// EnvCheck marks a process started by a Landlock CheckBox: this package's
// init function applies the check's ruleset (JSON) and executes the shell.
const EnvCheck = "LOOPRINTER_SANDBOX_CHECK"

// checkSpec is what the re-executed Landlock check helper needs.
type checkSpec struct {
	Exec    string   `json:"exec"`
	RODirs  []string `json:"ro_dirs"`
	ROFiles []string `json:"ro_files"`
	RWDirs  []string `json:"rw_dirs"`
	NoNet   bool     `json:"no_net"` // refuse TCP bind and connect (ABI 4+)
	// Sockets are the host's unix sockets the loop lets in
	// (sandbox.allow_sockets).
	Sockets []string `json:"sockets,omitempty"`
}

// EnvCheckLayers marks a process started by a bwrap CheckBox: package
// nshelper's init function lays the check's layers and runs bubblewrap.
const EnvCheckLayers = nshelper.EnvCheckLayers

func init() {
	if v, ok := os.LookupEnv(EnvCheck); ok {
		os.Exit(checkHelperMain(v))
	}
}

func checkHelperMain(v string) int {
	os.Unsetenv(EnvCheck)
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "looprinter check sandbox: "+format+"\n", a...)
		return code
	}
	var s checkSpec
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return fail(126, "bad %s: %v", EnvCheck, err)
	}
	if len(os.Args) < 2 || s.Exec == "" {
		return fail(126, "no command to run")
	}
	runtime.LockOSThread()
	if err := restrictCheck(s); err != nil {
		return fail(126, "%v", err)
	}
	err := syscall.Exec(s.Exec, os.Args[1:], os.Environ())
	return fail(126, "cannot run %s: %v", s.Exec, err)
}

// restrictCheck applies a check's ruleset to the calling thread: read
// where s says, write only to its fresh folders and the harmless devices,
// no TCP unless the loop allows the network, no signal or unix socket out
// of the domain, no capability.
func restrictCheck(s checkSpec) error {
	r := landlockRules{ReadDirs: s.RODirs, ReadFiles: s.ROFiles, Dirs: s.RWDirs, Sockets: s.Sockets}
	if s.NoNet {
		r.TCP = landlock.AccessNetSet(llsyscall.AccessNetBindTCP | llsyscall.AccessNetConnectTCP)
	}
	return r.restrict()
}

// landlockABI is the kernel's Landlock ABI (0: none).
func landlockABI() int {
	if landlockProbe() != nil {
		return 0
	}
	return landlockOnce.abi
}

// checkDirPrefix begins the name of a check box's own folder (prepare),
// in its scratch folder.
const checkDirPrefix = "looprinter-check-"

// prepare makes the box's folder and works out, once, what every check
// of the box gets.
func (b *CheckBox) prepare() error {
	switch b.opts.Kind {
	case Bwrap:
		if err := bwrapProbe(); err != nil {
			return fmt.Errorf("sandbox: checks: bwrap: %w", err)
		}
		if err := LayerProbe(); err != nil {
			return fmt.Errorf("sandbox: checks: bwrap needs copy-on-write layers to confine checks, and none can be laid here: %v (choose `sandbox: landlock`)", err)
		}
	case Landlock:
		if err := landlockProbe(); err != nil {
			return fmt.Errorf("sandbox: checks: landlock: %w", err)
		}
	}
	if _, err := os.Executable(); err != nil {
		return fmt.Errorf("sandbox: %w", errNoExe)
	}
	dir, err := os.MkdirTemp(b.opts.Scratch, checkDirPrefix)
	if err != nil {
		return fmt.Errorf("sandbox: the checks' scratch folder: %w", err)
	}
	if b.scratch, err = canonical(dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	if b.opts.Kind == Bwrap {
		b.makeCacheDirs()
		b.targets = layerTargets(append([]string{b.tree}, cacheDirs(b.env)...), os.Getuid() == 0, b.tree)
		b.base = Layer{Target: b.tree, Upper: filepath.Join(b.scratch, "base", "u"), Work: filepath.Join(b.scratch, "base", "w"), Lower: b.opts.Lower}
		if _, err := PrepareLayer(b.base); err != nil {
			return err
		}
		for _, t := range b.targets {
			if Within(b.scratch, t) && b.scratch != t {
				continue
			}
			if Within(t, b.scratch) {
				return fmt.Errorf("sandbox: the checks' scratch folder %s holds %s", b.scratch, t)
			}
		}
	}
	return nil
}

// layerTargets are the existing folders of paths, canonical, shallowest
// first, without /. With collapse (root), one inside another is left to
// the other's layer (one mount less). Without privileges each gets a layer
// of its own: overlayfs in a user namespace cannot copy up a folder on the
// way that belongs to another user (the tree inside /tmp), so each tree is
// written in its own layer, whose root is the user's. keep (the tree)
// always gets a layer of its own.
func layerTargets(paths []string, collapse bool, keep string) []string {
	var out []string
	for _, p := range existing(paths) {
		if p == "/" || (collapse && p != keep && covered(p, out)) {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// Command returns the command that runs shellLine with /bin/sh -c in the
// folder dir (Tree or a folder inside it) under the box, with env (the
// check's environment; the box adds what it needs after it), and cleanup,
// which the caller calls once the command has ended (after Wait, or when
// Start failed): it ends every process the check left and removes what
// the check wrote. The command's SysProcAttr puts it in a process group of
// its own (and, where the machine allows, in a cgroup of its own): set
// other fields on it, do not replace it. ctx kills the command as
// exec.CommandContext does.
func (b *CheckBox) Command(ctx context.Context, dir, shellLine string, env []string) (*exec.Cmd, func(), error) {
	return b.command(ctx, dir, shellLine, env, false)
}

// SetupCommand is Command for a setup command (`npm ci`, `pip install -r
// requirements.txt`, `go mod download`): what it writes in the tree stays
// for the box's later checks (under bwrap in a layer of the box's own,
// under Landlock in the tree, which must then be the caller's copy), never
// in the real tree; HOME, the caches and /tmp are thrown away as for any
// check. It runs with the network of CheckBoxOptions.SetupNetwork and
// without the files placed in the view (Put) or the Views: code a setup
// runs (install scripts) never sees the holdout files. Run setups one at
// a time, before the box's checks.
func (b *CheckBox) SetupCommand(ctx context.Context, dir, shellLine string, env []string) (*exec.Cmd, func(), error) {
	b.dropBaselessServer()
	return b.command(ctx, dir, shellLine, env, true)
}

func (b *CheckBox) command(ctx context.Context, dir, shellLine string, env []string, setup bool) (*exec.Cmd, func(), error) {
	if !filepath.IsAbs(dir) {
		return nil, nil, fmt.Errorf("sandbox: the check's folder %q is not an absolute path", dir)
	}
	cdir, err := canonical(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: the check's folder: %w", err)
	}
	if !Within(cdir, b.tree) {
		return nil, nil, fmt.Errorf("sandbox: the check's folder %s is outside the checks' tree %s", dir, b.tree)
	}
	if b.opts.Kind == Off {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", shellLine)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd, func() {}, nil
	}
	if b.scratch == "" {
		return nil, nil, errors.New("sandbox: the check box is closed")
	}
	c, err := os.MkdirTemp(b.scratch, "c-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: the check's scratch folder: %w", err)
	}
	var g *Cgroup
	var info, infoW *os.File
	var cmd *exec.Cmd
	var once sync.Once
	cleanup := func() {
		once.Do(func() {
			ended := false
			if info != nil {
				infoW.Close()
				ended = waitPidNS(info)
				info.Close()
			}
			// Once bubblewrap's PID namespace is gone, every process of the
			// check is: its cgroup and its layers are only housekeeping, done
			// beside the next check (Close waits for them).
			if !ended && g == nil && cmd != nil && cmd.Process != nil {
				// No cgroup: what stayed in the check's process group at least.
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			if ended && g != nil {
				// Every process of the check is gone: its CPU is all counted.
				if d, ok := g.CPU(); ok && cmd != nil {
					b.usage.put(cmd, Usage{CPU: d, From: UsageCgroup})
				}
			}
			b.pending.Add(1)
			later := func() {
				defer b.pending.Done()
				if g != nil {
					g.End()
				}
				removeAllWritable(c)
			}
			if ended {
				go later()
			} else {
				later()
				if d, ok := g.CPU(); ok && cmd != nil {
					b.usage.put(cmd, Usage{CPU: d, From: UsageCgroup})
				}
			}
		})
	}
	if b.opts.Kind == Bwrap {
		// Through a proxy the helper starts bubblewrap as its child beside
		// the relay, without the info pipe: the check's end is then waited
		// for by its process group and cgroup.
		if b.opts.Proxy == nil {
			if info, infoW, err = os.Pipe(); err != nil {
				cleanup()
				return nil, nil, err
			}
		}
		cmd, err = b.bwrapCommand(ctx, c, cdir, shellLine, env, setup)
		if cmd != nil && infoW != nil {
			cmd.ExtraFiles = []*os.File{infoW}
		}
	} else {
		cmd, err = b.landlockCommand(ctx, c, cdir, shellLine, env, setup)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	cmd.Dir = cdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if CgroupProbe() == nil {
		if g, err = NewCgroup(strconv.Itoa(os.Getpid()) + "-check"); err == nil {
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = g.FD()
		}
	}
	return cmd, cleanup, nil
}

// bwrapCommand: the layer helper lays a throw-away layer over the tree,
// HOME and the caches in a mount namespace of its own (their upper folders
// in c), shapes the tree's view, and runs bubblewrap there, with an empty
// /tmp of the check's own.
//
// A setup writes the tree in the box's base layer; a check sees the base
// under its own throw-away layer.
func (b *CheckBox) bwrapCommand(ctx context.Context, c, dir, shellLine string, env []string, setup bool) (*exec.Cmd, error) {
	exe, err := nshelper.Path()
	if err != nil {
		return nil, errNoExe
	}
	var layers []Layer
	for i, t := range b.targets {
		l := Layer{Target: t, Upper: filepath.Join(c, strconv.Itoa(i), "u"), Work: filepath.Join(c, strconv.Itoa(i), "w"), Volatile: true}
		switch {
		case t == b.tree && setup:
			if err := ClearWork(b.base); err != nil {
				return nil, err
			}
			layers = append(layers, b.base)
			continue
		case t == b.tree:
			l.Lower = append([]string{b.base.Upper}, b.opts.Lower...)
		}
		if err := b.cacheLayer(&l, t, setup); err != nil {
			return nil, err
		}
		for _, d := range []string{l.Upper, l.Work} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, err
			}
		}
		layers = append(layers, l)
	}
	// --info-fd 3: bubblewrap writes there the PID of its namespace's
	// first process, which cleanup waits for (see waitPidNS).
	a := []string{"--die-with-parent", "--unshare-pid", "--new-session", "--unshare-user", "--cap-drop", "ALL"}
	if b.opts.Proxy == nil {
		a = append(a, "--info-fd", "3")
	}
	if uid := os.Getuid(); uid != 0 {
		a = append(a, "--uid", strconv.Itoa(uid), "--gid", strconv.Itoa(os.Getgid()))
	}
	// Through the proxy the helper's network namespace is the check's own
	// (bubblewrap keeps it): the relay runs there.
	if network := b.network(setup); network != CheckNetworkHost && b.opts.Proxy == nil {
		a = append(a, "--unshare-net")
	}
	// /tmp is an empty tmpfs of the check's own, not a layer over the
	// host's: the host's holds unix sockets (a terminal multiplexer's, an
	// ssh agent's, the agents' network proxies) through which code would
	// reach past every namespace. Without the network, /run (the daemons'
	// sockets: docker, databases, dbus) is hidden too.
	// The view is built from the box's manifest, not from the host: the
	// system, the toolchains, the tree and its caches' layers; /tmp,
	// /var/tmp, /run and /dev/shm are empty folders of the check's own
	// (the host's hold unix sockets: a terminal multiplexer's, an ssh
	// agent's, the daemons', the agents' network proxies, through which
	// code would reach past every namespace).
	m := b.manifest(env)
	b.buildHome(layers, m, env)
	a = append(a, b.viewBwrap(m, setup)...)
	inLayer, _ := splitOver(b.opts.Over, b.targets)
	for _, o := range inLayer {
		a = append(a, "--ro-bind", o.From, o.To) // made in the check's layer
	}
	a = append(a, "--chdir", dir, "--", "/bin/sh", "-c", shellLine)
	s := layerSpec{Stage: 1, Layers: layers, Exec: bwrapOnce.path, Args: a, Root: b.tree, FD3: b.opts.Proxy == nil}
	if n := b.opts.Proxy; n != nil {
		s.Net = &nshelper.Net{Socket: n.Socket, Port: n.Port}
	}
	if !setup {
		s.Put = append([]ViewFile(nil), b.opts.Put...)
	}
	for _, r := range b.opts.Remove {
		s.Hide = append(s.Hide, filepath.Join(b.tree, filepath.FromSlash(r)))
	}
	for i := range s.Put {
		s.Put[i].To = filepath.Join(b.tree, filepath.FromSlash(s.Put[i].To))
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(append(DropServiceEnv(env), "TMPDIR=/tmp"), checkPythonEnv("/tmp/.looprinter-pycache")...)
	cmd.Env = append(cmd.Env, b.cacheEnv(env, setup)...)
	cmd.Env = append(cmd.Env, EnvCheckLayers+"="+string(spec))
	cmd.Env = append(cmd.Env, b.opts.Proxy.Env()...)
	return cmd, nil
}

// viewBwrap are bubblewrap's arguments that build a check's view from m:
// the manifest, the work tree around the tree, the targets of the layers
// (bound where they are), the hidden folders, the views and the sockets.
func (b *CheckBox) viewBwrap(m Manifest, setup bool) []string {
	a := viewArgs(m.beside(b.targets))
	a = append(a, b.aroundBwrap(m)...)
	for _, t := range b.targets {
		a = append(a, "--bind", t, t)
	}
	hidden := false
	for _, h := range b.hide {
		if fi, err := os.Stat(h); err == nil && fi.IsDir() {
			a = append(a, "--tmpfs", h)
			hidden = hidden || Within(b.tree, h)
		}
	}
	if !covered(b.scratch, b.hide) && (!Within(b.scratch, "/tmp") || covered(b.scratch, b.targets)) {
		a = append(a, "--tmpfs", b.scratch)
	}
	a = append(a, b.aroundAgain(m)...)
	if hidden || Within(b.tree, b.scratch) {
		a = append(a, "--bind", b.tree, b.tree) // the tree inside a hidden folder stays the check's
	}
	a = append(a, b.aroundMasks()...)
	_, over := splitOver(b.opts.Over, b.targets)
	a = append(a, overArgs(over)...)
	if !setup {
		for _, v := range b.views {
			a = append(a, "--ro-bind", v, v)
		}
	}
	return append(a, socketArgs(m)...)
}

// homeSeeds are the small files of the user's HOME a Landlock check's
// fresh HOME starts with: git identity, registry and Go settings.
var checkHomeSeeds = []string{".gitconfig", ".npmrc", ".config/git/config", ".config/go/env", ".config/pip/pip.conf", ".pypirc"}

// landlockCommand: the check helper restricts itself and runs the shell;
// HOME, TMPDIR and the writable caches are fresh folders in c.
func (b *CheckBox) landlockCommand(ctx context.Context, c, dir, shellLine string, env []string, setup bool) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, errNoExe
	}
	home, tmp, cache := filepath.Join(c, "home"), filepath.Join(c, "tmp"), filepath.Join(c, "cache")
	for _, d := range []string{home, tmp, cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	get := func(k string) string { return lookupEnv(env, k) }
	realHome := get("HOME")
	if filepath.IsAbs(realHome) {
		for _, rel := range checkHomeSeeds {
			from := filepath.Join(realHome, rel)
			if fi, err := os.Stat(from); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<20 {
				to := filepath.Join(home, rel)
				os.MkdirAll(filepath.Dir(to), 0o700)
				CopyFile(from, to, 0o600)
			}
		}
	}
	// Go's build cache must be writable (a read-only one fails a build
	// that needs a new entry): the box keeps one of its own, shared by its
	// checks, never the user's or the agent's.
	goCache := filepath.Join(b.scratch, "gocache")
	if err := os.MkdirAll(goCache, 0o700); err != nil {
		return nil, err
	}
	extra := []string{
		"HOME=" + home, "TMPDIR=" + tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + cache,
		"GOENV=" + filepath.Join(home, ".config", "go", "env"),
		"PIP_CACHE_DIR=" + filepath.Join(cache, "pip"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
	}
	extra = append(extra, "GOCACHE="+goCache)
	if mc := GoModCache(get, realHome); mc != "" {
		extra = append(extra, "GOMODCACHE="+mc)
	}
	cenv, crw, cro, err := b.landlockCache(goCache, setup)
	if err != nil {
		return nil, err
	}
	penv, pro, pfiles := b.goCacheProg(append(append([]string(nil), extra...), cenv...))
	cenv = append(cenv, penv...)
	s := checkSpec{Exec: "/bin/sh", RWDirs: append([]string{c, goCache}, crw...), NoNet: b.network(setup) != CheckNetworkHost}
	if setup {
		s.RWDirs = append(s.RWDirs, b.tree)
	}
	// Reads: the box's manifest, the tree and Go's module cache; nothing
	// else (the engine's state folder, other loops and projects, the rest
	// of HOME).
	m := b.manifest(env)
	s.RODirs, s.ROFiles = readRules(m, append(append(grantsAvoiding(b.tree, b.inTree, 0), GoModCache(get, realHome)), b.aroundReads()...)...)
	// The cache layer's read-only folders (its bytecode) were read rules
	// of their own: kept past the box's.
	s.RODirs, s.ROFiles = append(append(s.RODirs, cro...), pro...), append(s.ROFiles, pfiles...)
	s.Sockets = m.sockets()
	views := b.views
	if setup {
		views = nil
	}
	for _, v := range views {
		if fi, err := os.Stat(v); err == nil && fi.IsDir() {
			s.RODirs = append(s.RODirs, v)
		} else if err == nil {
			s.ROFiles = append(s.ROFiles, v)
		}
	}
	spec, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "/bin/sh", "-c", shellLine)
	cmd.Env = append(append(append(append(DropServiceEnv(env), extra...), checkPythonEnv(filepath.Join(tmp, "pycache"))...), cenv...), EnvCheck+"="+string(spec))
	return cmd, nil
}

// removeTree removes a scratch folder (overlayfs leaves mode 000 folders).
func removeTree(p string) error { return removeAllWritable(p) }

// waitPidNS reads bubblewrap's info (the PID, in this PID namespace, of
// the first process of the check's own) and waits, at most cgroupDrain,
// until that process has ended: it ends last, once the kernel has killed
// and reaped every other process of its namespace. bubblewrap itself may
// exit a moment before, so without this wait a check's background process
// could still be running when the check is over.
//
// It says whether the namespace is known to be gone.
func waitPidNS(info *os.File) bool {
	info.SetReadDeadline(time.Now().Add(time.Second))
	data, _ := io.ReadAll(io.LimitReader(info, 4096))
	var v struct {
		Pid int `json:"child-pid"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &v) != nil || v.Pid <= 0 {
		return false
	}
	deadline := time.Now().Add(cgroupDrain)
	for time.Now().Before(deadline) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(v.Pid) + "/status")
		if err != nil || !nsInit(st) {
			return true // ended (or the number went to a process of another kind)
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// nsInit says whether a /proc/PID/status is of a live first process of a
// PID namespace (its last NSpid is 1; a zombie has ended).
func nsInit(status []byte) bool {
	var state, nspid string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			state = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				nspid = f[len(f)-1]
			}
		}
	}
	return nspid == "1" && !strings.HasPrefix(state, "Z") && !strings.HasPrefix(state, "X")
}

// network is the network of a check, or of a setup.
func (b *CheckBox) network(setup bool) string {
	if setup {
		return b.opts.SetupNetwork
	}
	return b.opts.Network
}
