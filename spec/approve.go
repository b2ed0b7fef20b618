package spec

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// PlanOpts is the loop file's `plan:`.
type PlanOpts struct {
	Approve PlanApprove `yaml:"approve"`
}

// What happens when no one approves the first plan within plan.approve's
// timeout.
const (
	ApproveThenStop = "stop" // the loop stops BLOCKED; run it again to be asked again
	ApproveThenRun  = "run"  // the loop goes on with the plan as it is
)

// DefaultApproveTimeout is plan.approve's timeout when none is written.
const DefaultApproveTimeout = time.Hour

// PlanApprove is `plan.approve:`: true (or on), or a mapping {timeout,
// then}. When on, the loop's first plan waits for the operator's OK
// (`looprinter approve`, the dashboard, the HTTP API or the MCP server)
// before any build run.
type PlanApprove struct {
	On      bool     `yaml:"on"`
	Timeout Duration `yaml:"timeout"`
	Then    string   `yaml:"then"`
}

// UnmarshalYAML reads `approve: true|false|on|off` or the mapping (which
// turns it on unless it says `on: false`).
func (a *PlanApprove) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "on", "true", "yes":
			*a = PlanApprove{On: true}
		case "off", "false", "no", "":
			*a = PlanApprove{}
		default:
			return fmt.Errorf("line %d: plan.approve: %q is not known: write true, false, or a mapping {timeout: 30m, then: stop}", n.Line, n.Value)
		}
		return nil
	}
	type plain PlanApprove
	p := plain{On: true}
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = PlanApprove(p)
	return nil
}

// planDefaults fills plan.approve's timeout and what then.
func (l *Loop) planDefaults() {
	if !l.Plan.Approve.On {
		return
	}
	if l.Plan.Approve.Timeout == 0 {
		l.Plan.Approve.Timeout = Duration(DefaultApproveTimeout)
	}
	if l.Plan.Approve.Then == "" {
		l.Plan.Approve.Then = ApproveThenStop
	}
}

// validatePlan checks plan.approve.
func (l *Loop) validatePlan(at func(path, format string, args ...any)) {
	a := l.Plan.Approve
	if !a.On {
		return
	}
	if a.Timeout < 0 {
		at("plan.approve.timeout", "plan.approve.timeout: %s is negative: how long the first plan waits for an OK", a.Timeout)
	}
	switch a.Then {
	case ApproveThenStop, ApproveThenRun:
	default:
		at("plan.approve.then", "plan.approve.then: %q is not known (stop or run): what happens when no OK comes within the timeout", a.Then)
	}
	if l.Shape == ShapeRalph || l.Shape == ShapeReview {
		at("plan.approve", "plan.approve: the %s shape makes no plan to approve", l.Shape)
	}
}
