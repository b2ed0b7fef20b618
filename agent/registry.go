package agent

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Backend is everything looprinter knows about one agent backend. Each
// backend declares it once, in its own file (claude.go, codex.go, gemini.go,
// command.go), and registers it from an init; the runner, doctor, init, the
// review's choice of model, spec's list of names and the sandbox read it
// here, so adding a backend is one file.
type Backend struct {
	Name  string         // agent.backend in the loop file
	Label string         // the choice shown in `looprinter init`
	New   func() Adapter // the command line and the stream parser

	// The CLI it runs; Program is empty for a backend that runs
	// agent.command (command).
	Program     string   // looked up on PATH when agent.command is empty
	VersionArgs []string // make it print its version (doctor); default --version
	NPMPackage  string   // the package that installs it
	Version     string   // the version looprinter is tested with; the install hint pins it

	Login Login

	// APIHosts are the hosts its model API and login need: the loop's
	// network proxy allows them by default (network.allow adds more).
	// APIBaseEnv are the variables that point it at another endpoint (a
	// URL); the endpoint's host:port is allowed when agent.env sets one.
	APIHosts   []string
	APIBaseEnv []string

	// HomePaths are the folders (and the odd file) under HOME the CLI
	// writes: settings, sessions, credentials, caches. Under bubblewrap the
	// whole HOME is a copy-on-write layer kept per loop; they are declared
	// for where no layer can be made (a private HOME seeded with them).
	// HomeEnv are the variables that move them elsewhere: the sandbox
	// makes the folders they name writable (layered, under bubblewrap).
	HomePaths []string
	HomeEnv   []string

	// Families are its model families, for the review's default reviewer:
	// one of another family than the fixer's (see OtherModel).
	Families []ModelFamily

	// HoldsCostCap says the CLI stops a run at the cost cap it is given
	// (agent.max_budget_usd, lowered to what the loop has left) itself: the
	// engine can share what is left among runs at once without a guess.
	HoldsCostCap bool

	// MetersCost says the CLI's output tells what the run has spent as it
	// runs (command's ::looprinter cost_usd lines), so the engine stops a
	// run at its cost cap itself: once what it reported passes the cap,
	// the run is stopped as at its timeout, its status capped (Run).
	MetersCost bool

	// LimitReset reads from the CLI's error text when a usage limit resets
	// ("try again in 3h"), zero when it does not say; the parser uses it for
	// a rate-limited run. nil: the backend reports it another way (command's
	// ::looprinter rate_limited lines).
	LimitReset func(text string, now time.Time) time.Duration
}

// Login is how doctor sees that a CLI is logged in without a paid call.
type Login struct {
	Env   []string // environment variables that log it in
	Files []string // credential files, relative to HOME ($VAR/rest: under the folder $VAR names, when set)
	Hint  string   // how to log in
}

// ModelFamily is one family of a backend's models.
type ModelFamily struct {
	Match string // a model whose lower-cased name contains Match is of the family
	Model string // the name to ask for the family by
}

// OtherModel is a model of another family than model's: the next family
// after the one model belongs to, the first when it belongs to none (or is
// empty); "" when the backend has fewer than two families.
func (b Backend) OtherModel(model string) string {
	if len(b.Families) < 2 {
		return ""
	}
	m := strings.ToLower(model)
	for i, f := range b.Families {
		if strings.Contains(m, f.Match) {
			return b.Families[(i+1)%len(b.Families)].Model
		}
	}
	return b.Families[0].Model
}

// installFix tells how to install the CLI, at the pinned version.
func (b Backend) installFix() string {
	return fmt.Sprintf("install it with `npm install -g %s@%s` (the version looprinter is tested with), "+
		"or set agent.command to the path of the %s program", b.NPMPackage, b.Version, b.Program)
}

// The registry is locked: tests register scripted adapters while other
// tests' engines look theirs up.
var (
	registryMu sync.Mutex
	registry   = map[string]Backend{}
)

// RegisterBackend declares a backend, replacing any of the same name.
func RegisterBackend(b Backend) {
	if b.Label == "" {
		b.Label = b.Name
	}
	if b.Program != "" && len(b.VersionArgs) == 0 {
		b.VersionArgs = []string{"--version"}
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[b.Name] = b
}

// Register makes an adapter available by backend name. A declared backend
// keeps the rest of its declaration; a new name gets a bare one (tests
// register scripted adapters this way).
func Register(name string, newAdapter func() Adapter) {
	registryMu.Lock()
	defer registryMu.Unlock()
	b, ok := registry[name]
	if !ok {
		b = Backend{Name: name, Label: name}
	}
	b.New = newAdapter
	registry[name] = b
}

// Find returns a backend's declaration.
func Find(name string) (Backend, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	b, ok := registry[name]
	return b, ok
}

// CapHeld says whether a run of backend is stopped at the cost cap it is
// given: by its CLI (Backend.HoldsCostCap) or by the engine, which reads
// what the run spent as it runs (Backend.MetersCost). A run may pass its
// cap by what it spent between two reports (a turn, a line).
func CapHeld(backend string) bool {
	b, ok := Find(backend)
	return ok && (b.HoldsCostCap || b.MetersCost)
}

// Lookup returns the adapter for a backend name.
func Lookup(name string) (Adapter, error) {
	b, ok := Find(name)
	if !ok || b.New == nil {
		return nil, fmt.Errorf("unknown agent backend %q (known: %v)", name, Backends())
	}
	return b.New(), nil
}

// All lists the registered backends: those that run a CLI of their own, by
// name, then the others (command), by name. Init order across files is by
// file name, so the order is the rule's, not the registrations'.
func All() []Backend {
	registryMu.Lock()
	out := make([]Backend, 0, len(registry))
	for _, b := range registry {
		out = append(out, b)
	}
	registryMu.Unlock()
	slices.SortFunc(out, func(a, b Backend) int {
		if (a.Program == "") != (b.Program == "") {
			if a.Program == "" {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Names lists the registered backends' names in All's order.
func Names() []string {
	var names []string
	for _, b := range All() {
		names = append(names, b.Name)
	}
	return names
}

// CLIs lists the backends that run a CLI of their own, in All's order:
// those doctor checks.
func CLIs() []Backend {
	var out []Backend
	for _, b := range All() {
		if b.Program != "" {
			out = append(out, b)
		}
	}
	return out
}

// OtherModel is a model of another family of the backend than model, ""
// when none is known (see Backend.OtherModel).
func OtherModel(backend, model string) string {
	b, _ := Find(backend)
	return b.OtherModel(model)
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NetworkHosts are the hosts the loop's proxy allows an agent of backend
// by default: its model API hosts and the host:port of an endpoint that
// env (agent.env) points it at, or, for a variable agent.env does not set,
// the engine's own environment points it at (the agent inherits it:
// ChildEnv).
func NetworkHosts(backend string, env map[string]string) []string {
	b, _ := Find(backend)
	out := append([]string(nil), b.APIHosts...)
	for _, k := range b.APIBaseEnv {
		v, ok := env[k]
		if !ok {
			v = os.Getenv(k)
		}
		if hp := endpointHost(v); hp != "" {
			out = append(out, hp)
		}
	}
	return out
}

// endpointHost is the host:port of a URL ("" when it is not one).
func endpointHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "http" {
		return u.Host + ":80"
	}
	return u.Host + ":443"
}
