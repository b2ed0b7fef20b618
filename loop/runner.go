package loop

import (
	"sync"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// runner runs the loop's agents: one agent run with everything around it
// (run_agent.go: the budgets asked first, the prompt file, retries and
// waits, the records), its confinement (trust.go: the sandbox, the run's
// cgroup, the sweep, judging a run that died, over confine/), the
// copy-on-write layers' apply (layer.go), failover on usage limits
// (failover.go) and the operator channel (operator.go: waiting,
// delivering, acknowledging). It owns the layers and the sandbox kind in
// force; the state it changes is the engine's (*State), and what it needs
// of the engine comes in at construction (openEngine), as values and
// funcs.
type runner struct {
	dir  string // the loop folder
	priv string // the engine's private folder for this loop
	// deadFailed are the tasks of the runs that died with the engine whose
	// judging at the restart found something wrong (judgeLanded).
	deadFailed []string
	st         *State // the engine's state
	// spec is the loop file in force (it changes when the loop file does).
	spec func() *spec.Loop
	// red is the redactor in force (it changes with the loop file).
	red func() *redact.Redactor
	// backoff is the wait before retry n (Options.Backoff).
	backoff func(n int) time.Duration
	emit    func(record.Event)
	// stop is the engine's stop: an error that ends the loop with reason.
	stop func(reason, summary string) error
	// checkBudgets stops a run the wall or cost budget refuses.
	checkBudgets func() error
	store        *store
	guard        *guard.Guard
	judge        func() *judge.Judge
	// enforceJudgedPlan puts plan.json back to the judged plan
	// (judgedPlan.enforceJudgedPlan), for a run that died.
	enforceJudgedPlan func(dead, who string) []string
	// agents chooses each run's agent: failover and escalation
	// (failover.Switch; loop/failover.go).
	agents *failover.Switch
	// ops is the operator channel (operator.Channel; loop/operator.go).
	ops *operator.Channel
	// tags is the engine's tag of the records (bestof_judging.go).
	tags *tagger

	// slot is the slot of the run being prepared or judged (0 but in a
	// wave of parallel build runs): its layer is slotLayer's.
	slot int
	// viewOnly: the run under way sees the loop folder through its layer
	// but nothing it writes is applied (the chooser of a best-of); its
	// caller reads and clears the layer.
	viewOnly bool
	// mu orders what the runs of a wave do at once (records, retries,
	// failover); a single run never waits on it.
	mu sync.Mutex

	sandbox string // the sandbox kind in force
	// groups are the cgroups of the agent runs not yet ended (runCgroup,
	// endCgroup), for the sweep; ungrouped says a run since the last sweep
	// had none, and the sweep walks the process tree.
	groups struct {
		sync.Mutex
		live      []*sandbox.Cgroup
		ungrouped bool
	}
	layer *sandbox.Layer  // the copy-on-write layer over the loop folder, when in force
	trees []sandbox.Layer // the layers over HOME and caches, never applied
	// net is the loop's network (confine.Network): its proxy, started at
	// the first agent run and closed with the engine, and the hosts it
	// refused, which a failed run's message names.
	net confine.Network
	// apply judges what a run wrote before it reaches the loop folder
	// (confine.Applier): its layer's apply, or its changes in place.
	apply confine.Applier
	// gitGuard is the snapshot of .git's control files taken before a
	// Landlock run (nil under other sandboxes).
	gitGuard *sandbox.GitGuard
	// attemptsWarned are the tasks (c<cycle>/<task>) told that their
	// attempts run once here (no layers).
	attemptsWarned map[string]bool
}

// AgentRun is what one agent run produced, after the engine's own checks.
type AgentRun struct {
	Result  agent.Result
	Tamper  []guard.Tamper
	Changed []string
}

// locked runs f under the state's save lock (store.with): what a run
// judged beside others changes in the state.
func (r *runner) locked(f func()) {
	if r.store == nil {
		f()
		return
	}
	r.store.with(f)
}
