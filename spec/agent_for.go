package spec

// Which agent runs a phase: agents.<phase> laid over agent:.

// AgentFor returns the agent of a phase: agents.<phase> (for post phases,
// agents.<name>, then agents.post) over agent. The chooser (PhaseChooser,
// the reviewer of retry.choose: review) is agents.reviewer's agent when
// the loop file names one, else the build agent.
func (l *Loop) AgentFor(phase string, post bool) Agent {
	if phase == PhaseChooser && !post {
		if _, ok := l.Agents["reviewer"]; ok {
			phase = "reviewer"
		} else {
			phase = "build"
		}
	}
	a := l.Agent
	if post {
		if o, ok := l.Agents["post"]; ok {
			a = merge(a, o)
		}
	}
	if phase == "replan" {
		if o, ok := l.Agents["plan"]; ok {
			a = merge(a, o)
		}
	}
	if o, ok := l.Agents[phase]; ok {
		a = merge(a, o)
	}
	return a
}

func merge(base, o Agent) Agent {
	if o.Backend != "" && o.Backend != base.Backend {
		// A different backend does not inherit the base's model or command.
		base.Backend, base.Model, base.Command = o.Backend, "", ""
	}
	if o.Model != "" {
		base.Model = o.Model
	}
	if o.Command != "" {
		base.Command = o.Command
	}
	if o.Args != nil {
		base.Args = o.Args
	}
	if o.Timeout != 0 {
		base.Timeout = o.Timeout
	}
	if o.IdleTimeout != 0 {
		base.IdleTimeout = o.IdleTimeout
	}
	if o.Grace != 0 {
		base.Grace = o.Grace
	}
	if o.MaxTurns != 0 {
		base.MaxTurns = o.MaxTurns
	}
	if o.MaxBudgetUSD != 0 {
		base.MaxBudgetUSD = o.MaxBudgetUSD
	}
	if o.Env != nil {
		env := map[string]string{}
		for k, v := range base.Env {
			env[k] = v
		}
		for k, v := range o.Env {
			env[k] = v
		}
		base.Env = env
	}
	if o.Permissions != nil {
		base.Permissions = o.Permissions
	}
	if o.Fallback != nil {
		base.Fallback = o.Fallback
	}
	if o.FallbackAfter != 0 {
		base.FallbackAfter = o.FallbackAfter
	}
	if o.Escalate != nil {
		base.Escalate = o.Escalate
	}
	return base
}
