package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// How says how a manifest entry is laid in a view.
type How string

// How an entry is laid.
const (
	// ReadOnlyBind: the host's path, read-only.
	ReadOnlyBind How = "read-only"
	// WritableBind: the host's path (or its copy-on-write layer), writable.
	WritableBind How = "writable"
	// Fresh: an empty folder of the run's own (tmpfs), gone with it.
	Fresh How = "fresh"
	// Socket: a unix socket of the host let into the view
	// (sandbox.allow_sockets).
	Socket How = "socket"
)

// An Entry is one path a view shows: where it comes from, how it is laid
// and why it is there.
type Entry struct {
	Path string
	How  How
	Why  string
}

// A Manifest is everything a confined run sees of the machine, built by
// construction: what is not in it does not exist in the run's view
// (bubblewrap) or cannot be read (Landlock). The loop folder, HOME's layer
// and the writable trees of a Policy come on top of it.
type Manifest []Entry

// ViewSpec is what a view is built from besides the machine: the run's
// environment (PATH, HOME, the toolchains' variables), the folders of HOME
// the agent CLIs keep their config in, and what the loop file adds.
type ViewSpec struct {
	// Env is the run's environment (PATH, HOME, GOROOT…); nil: this
	// process's.
	Env []string
	// HomeKeep are paths relative to HOME shown in the view (the agent
	// CLIs' config folders, git's settings); the rest of HOME is not.
	HomeKeep []string
	// AllowRead are more absolute paths shown read-only
	// (sandbox.allow_read).
	AllowRead []string
	// AllowSockets are unix sockets of the host shown in the view
	// (sandbox.allow_sockets).
	AllowSockets []string
	// Programs are programs the run starts (absolute): their folders are
	// shown too.
	Programs []string
}

// systemLinks are the top-level folders that are links into /usr on
// merged-/usr systems, folders of their own elsewhere.
var systemLinks = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcAllow are the entries of /etc programs need: users and groups, name
// resolution, certificates, the dynamic linker, time zone, alternatives,
// git's and the shells' system settings. Nothing else of /etc is shown.
var etcAllow = []string{
	"passwd", "group", "hosts", "hostname", "resolv.conf", "nsswitch.conf", "gai.conf", "host.conf",
	"services", "protocols", "ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "alternatives",
	"gitconfig", "os-release", "lsb-release", "debian_version", "shells", "profile", "bash.bashrc",
	"inputrc", "terminfo", "mime.types", "login.defs", "environment", "npmrc", "pip.conf", "python3", "perl",
}

// gitHomeKeep are git's settings under HOME, in every view: git refuses
// to run when it cannot read them.
var gitHomeKeep = []string{".gitconfig", ".config/git"}

// freshDirs are shown as empty folders of the run's own: nothing of the
// host's temporary folders or runtime folders (the unix sockets of tmux,
// ssh-agent, dbus, databases) is in the view.
var freshDirs = []string{"/tmp", "/var/tmp", "/run", "/dev/shm"}

// dropEnv are the variables that name the user's own services (a terminal
// multiplexer, an ssh or gpg agent, the session bus, the runtime folder):
// never passed into a confined run.
var dropEnv = []string{"SSH_AUTH_SOCK", "SSH_AGENT_PID", "TMUX", "TMUX_PANE", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "GPG_AGENT_INFO", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "XAUTHORITY", "STY"}

// DropServiceEnv removes from env the variables that lead to the user's
// own services (SSH_AUTH_SOCK, TMUX, DBUS_*, GPG_AGENT_INFO,
// XDG_RUNTIME_DIR…).
func DropServiceEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, d := range dropEnv {
			drop = drop || k == d
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// IsServiceEnv says whether the variable key leads to one of the user's
// services and is kept out of confined runs.
func IsServiceEnv(key string) bool {
	for _, d := range dropEnv {
		if key == d {
			return true
		}
	}
	return false
}

// BuildManifest is the manifest of a view: the system's read-only parts,
// the toolchains the run's PATH resolves to, the folders of HOME it keeps,
// what the loop file adds, and the fresh folders. Missing paths are left
// out.
func BuildManifest(v ViewSpec) Manifest {
	env := v.Env
	if env == nil {
		env = os.Environ()
	}
	home := lookupEnv(env, "HOME")
	if h, err := canonical(home); err == nil && filepath.IsAbs(home) {
		home = h
	} else {
		home = ""
	}
	var m Manifest
	add := func(p string, how How, why string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		if _, err := os.Lstat(p); err != nil {
			return
		}
		m = append(m, Entry{Path: filepath.Clean(p), How: how, Why: why})
	}
	add("/usr", ReadOnlyBind, "the system's programs and libraries")
	for _, l := range systemLinks {
		add(l, ReadOnlyBind, "the system's programs and libraries")
	}
	for _, e := range etcAllow {
		add(filepath.Join("/etc", e), ReadOnlyBind, "system settings programs need")
	}
	add("/sys", ReadOnlyBind, "the kernel's information (CPUs, memory)")
	for _, t := range toolchains(env, home) {
		add(t.Path, ReadOnlyBind, t.Why)
	}
	for _, p := range v.Programs {
		if r, err := canonical(p); err == nil && !m.covers(r) {
			add(installRoot(filepath.Dir(r), home), ReadOnlyBind, "the folder of "+filepath.Base(p)+", which the run starts")
		}
		// The run starts the program by this path: a link's own folder too.
		if d, err := canonical(filepath.Dir(p)); err == nil && filepath.IsAbs(p) && !m.covers(filepath.Join(d, filepath.Base(p))) {
			add(d, ReadOnlyBind, "the folder of "+filepath.Base(p)+", which the run starts")
		}
	}
	if home != "" {
		for _, k := range append(append([]string(nil), gitHomeKeep...), v.HomeKeep...) {
			add(filepath.Join(home, filepath.FromSlash(k)), ReadOnlyBind, "~/"+k+": an agent CLI's or git's settings")
		}
	}
	for _, a := range v.AllowRead {
		add(expandHome(a, home), ReadOnlyBind, "sandbox.allow_read")
	}
	for _, s := range v.AllowSockets {
		add(expandHome(s, home), Socket, "sandbox.allow_sockets")
	}
	for _, f := range freshDirs {
		m = append(m, Entry{Path: f, How: Fresh, Why: "empty, the run's own: no socket or file of the host's"})
	}
	if x := lookupEnv(env, "XDG_RUNTIME_DIR"); filepath.IsAbs(x) && !covered(filepath.Clean(x), freshDirs) {
		m = append(m, Entry{Path: filepath.Clean(x), How: Fresh, Why: "XDG_RUNTIME_DIR, empty: no socket of the user's session"})
	}
	return m.tidy()
}

// expandHome makes a leading ~ home.
func expandHome(p, home string) string {
	p = strings.TrimSpace(p)
	if (p == "~" || strings.HasPrefix(p, "~/")) && home != "" {
		return filepath.Join(home, p[1:])
	}
	return p
}

// covers says whether a read-only or writable entry of m shows path.
func (m Manifest) covers(path string) bool {
	for _, e := range m {
		if (e.How == ReadOnlyBind || e.How == WritableBind) && Within(path, e.Path) {
			return true
		}
	}
	return false
}

// tidy drops read-only entries inside another read-only entry (one bind
// less each), keeping the order: parents before children.
func (m Manifest) tidy() Manifest {
	sort.SliceStable(m, func(i, j int) bool {
		di, dj := strings.Count(m[i].Path, "/"), strings.Count(m[j].Path, "/")
		if m[i].Path == "/" {
			di = 0
		}
		if m[j].Path == "/" {
			dj = 0
		}
		return di < dj
	})
	var out Manifest
	seen := map[string]bool{}
	for _, e := range m {
		if seen[e.Path] {
			continue
		}
		if e.How == ReadOnlyBind && out.covers(e.Path) {
			continue
		}
		seen[e.Path] = true
		out = append(out, e)
	}
	return out
}

// Paths are the entries' paths laid as how.
func (m Manifest) Paths(how How) []string {
	var out []string
	for _, e := range m {
		if e.How == how {
			out = append(out, e.Path)
		}
	}
	return out
}

// Lines are the manifest in words, one entry a line, for doctor and
// validate.
// Entries of one folder laid alike for one reason share a line
// (/etc/{passwd,group,…}).
func (m Manifest) Lines() []string {
	var out []string
	for i := 0; i < len(m); {
		e, j := m[i], i+1
		names := []string{filepath.Base(e.Path)}
		for j < len(m) && m[j].How == e.How && m[j].Why == e.Why && filepath.Dir(m[j].Path) == filepath.Dir(e.Path) {
			names = append(names, filepath.Base(m[j].Path))
			j++
		}
		path := e.Path
		if len(names) > 1 {
			path = filepath.Join(filepath.Dir(e.Path), "{"+strings.Join(names, ",")+"}")
		}
		out = append(out, fmt.Sprintf("%-9s %s (%s)", e.How, path, e.Why))
		i = j
	}
	return out
}

// A tool is a toolchain folder and why it is in the view.
type tool struct{ Path, Why string }

var toolCache sync.Map // key: PATH, HOME and the toolchains' variables → []tool

// toolchains are the folders the run's commands resolve to: each PATH
// entry's real folder and its toolchain root, the folders its links lead
// to, Go's GOROOT and module cache, python3's prefix and node's. Found
// once per process for one environment.
func toolchains(env []string, home string) []tool {
	key := strings.Join([]string{lookupEnv(env, "PATH"), home, lookupEnv(env, "GOROOT"), lookupEnv(env, "GOPATH"), lookupEnv(env, "GOMODCACHE"), lookupEnv(env, "GOCACHE"), lookupEnv(env, "CARGO_HOME"), lookupEnv(env, "RUSTUP_HOME")}, "\x00")
	if v, ok := toolCache.Load(key); ok {
		return v.([]tool)
	}
	var out []tool
	seen := Manifest{{Path: "/usr", How: ReadOnlyBind}}
	addTool := func(p, why string) {
		if p == "" || p == "/" || p == home || seen.covers(p) {
			return
		}
		seen = append(seen, Entry{Path: p, How: ReadOnlyBind})
		out = append(out, tool{p, why})
	}
	for _, d := range filepath.SplitList(lookupEnv(env, "PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		r, err := canonical(d)
		if err != nil {
			continue
		}
		addTool(toolchainRoot(r, home), "PATH entry "+d)
		for _, t := range linkTargets(r) {
			addTool(installRoot(t, home), "programs of "+d+" lead there")
		}
	}
	// Rust's toolchains: rustup's proxies in CARGO_HOME/bin run the
	// toolchains in RUSTUP_HOME (by default beside it: ~/.rustup).
	for _, k := range []string{"CARGO_HOME", "RUSTUP_HOME"} {
		if v := lookupEnv(env, k); filepath.IsAbs(v) {
			if r, err := canonical(v); err == nil {
				addTool(r, k)
			}
		}
	}
	for _, d := range filepath.SplitList(lookupEnv(env, "PATH")) {
		if filepath.Base(d) == "bin" && filepath.Base(filepath.Dir(d)) == ".cargo" && lookupEnv(env, "RUSTUP_HOME") == "" {
			if r, err := canonical(filepath.Join(filepath.Dir(filepath.Dir(d)), ".rustup")); err == nil {
				addTool(r, "rustup's toolchains, beside "+d)
			}
		}
	}
	pathEnv := lookupEnv(env, "PATH")
	if goBin, err := lookIn("go", pathEnv); err == nil {
		for _, kv := range goEnv(goBin, env) {
			if r, err := canonical(kv[1]); err == nil {
				addTool(r, "go env "+kv[0])
			}
		}
	}
	if py, err := lookIn("python3", pathEnv); err == nil {
		if r, err := canonical(py); err == nil && !seen.covers(r) {
			for _, p := range pythonPrefix(py, env) {
				if c, err := canonical(p); err == nil {
					addTool(c, "python3's prefix")
				}
			}
		}
	}
	if node, err := lookIn("node", pathEnv); err == nil {
		if r, err := canonical(node); err == nil {
			addTool(toolchainRoot(filepath.Dir(r), home), "node's prefix")
		}
	}
	toolCache.Store(key, out)
	return out
}

// toolchainRoot is the folder of a toolchain that holds dir (a PATH entry):
// the parent of a bin, sbin or shims folder, and under HOME or /opt the
// whole tool's folder (~/.pyenv, ~/.cargo, /opt/NAME); the folder itself
// where that would be HOME, /, /usr/local, /opt or a shared folder such
// as ~/.local.
func toolchainRoot(dir, home string) string {
	root := dir
	switch filepath.Base(dir) {
	case "bin", "sbin", "shims":
		root = filepath.Dir(dir)
	}
	if fi, err := os.Stat(filepath.Join(root, "src")); home != "" && Within(root, home) && root != dir && err == nil && fi.IsDir() {
		return dir // a GOPATH under HOME: its src holds projects
	}
	if home != "" && Within(root, home) && root != home {
		rel, _ := filepath.Rel(home, root)
		first := strings.Split(filepath.ToSlash(rel), "/")[0]
		switch first {
		case ".local", ".config", ".cache", "":
			if root == filepath.Join(home, first) {
				return dir
			}
			return root
		}
		return filepath.Join(home, first)
	}
	if Within(root, "/opt") && root != "/opt" {
		rel, _ := filepath.Rel("/opt", root)
		return filepath.Join("/opt", strings.Split(filepath.ToSlash(rel), "/")[0])
	}
	switch root {
	case "/", "/usr/local", "/opt", home:
		return dir
	}
	return root
}

// installRoot is the folder a program's real folder dir belongs to: for a
// package of an npm install (…/node_modules/PKG/bin), the install's whole
// node_modules, where the program finds the packages it requires (a
// platform package, its dependencies); else its toolchain root.
func installRoot(dir, home string) string {
	if i := strings.Index(dir+"/", "/node_modules/"); i > 0 {
		return dir[:i] + "/node_modules"
	}
	return toolchainRoot(dir, home)
}

// maxLinkTargets bounds the folders one PATH entry's links add.
const maxLinkTargets = 16

// linkTargets are the real folders the links in dir lead to (a PATH
// folder of links into installs elsewhere: node_modules/.bin, a test's
// bin folder), at most maxLinkTargets; none for the system's folders.
func linkTargets(dir string) []string {
	if Within(dir, "/usr") || dir == "/bin" || dir == "/sbin" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 2000 {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		r, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name()))
		if err != nil || Within(r, dir) {
			continue
		}
		d := filepath.Dir(r)
		if !covered(d, out) {
			out = append(out, d)
		}
		if len(out) >= maxLinkTargets {
			break
		}
	}
	return out
}

// lookIn finds a program on the PATH value pathEnv.
func lookIn(name, pathEnv string) (string, error) {
	for _, d := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// goEnv is `go env GOROOT GOMODCACHE GOCACHE GOPATH` for env.
func goEnv(goBin string, env []string) [][2]string {
	keys := []string{"GOROOT", "GOMODCACHE", "GOCACHE"}
	// go writes its telemetry counters under the user's config folder:
	// the probe gets a throw-away one, and the user's go env file by name.
	goenv := lookupEnv(env, "GOENV")
	if goenv == "" {
		cfg := lookupEnv(env, "XDG_CONFIG_HOME")
		if !filepath.IsAbs(cfg) {
			if h := lookupEnv(env, "HOME"); filepath.IsAbs(h) {
				cfg = filepath.Join(h, ".config")
			}
		}
		if cfg != "" {
			goenv = filepath.Join(cfg, "go", "env")
		}
	}
	scratch, err := os.MkdirTemp("", "looprinter-goenv-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(scratch)
	// Telemetry off in the throw-away config: no counters written, and no
	// upload process started that would outlive the probe and write there.
	if err := os.MkdirAll(filepath.Join(scratch, "go", "telemetry"), 0o700); err == nil {
		os.WriteFile(filepath.Join(scratch, "go", "telemetry", "mode"), []byte("off"), 0o600)
	}
	penv := append(append([]string(nil), env...), "XDG_CONFIG_HOME="+scratch)
	if goenv != "" {
		penv = append(penv, "GOENV="+goenv)
	}
	out := runLines(goBin, penv, append([]string{"env"}, keys...)...)
	var kv [][2]string
	for i, k := range keys {
		if i < len(out) && filepath.IsAbs(out[i]) {
			for _, p := range filepath.SplitList(out[i]) {
				kv = append(kv, [2]string{k, p})
			}
		}
	}
	return kv
}

// pythonPrefix is python3's sys.prefix and sys.base_prefix.
func pythonPrefix(py string, env []string) []string {
	return runLines(py, env, "-c", "import sys; print(sys.prefix); print(sys.base_prefix)")
}

// runLines runs a probe of a toolchain (at most five seconds) and returns
// its output's lines; none when it fails.
func runLines(prog string, env []string, args ...string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}
