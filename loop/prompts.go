package loop

import (
	"github.com/looprinter/looprinter/prompt"
	"github.com/looprinter/looprinter/spec"
)

// The prompts are package prompt's: the built-in templates, the rendering
// and each phase's prompt put together from the loop file and the state
// (prompt.Builder). The engine composes the builder over its state.

// PromptData is what every prompt template can use (prompt.Data).
type PromptData = prompt.Data

// Paths are the files a prompt refers to (prompt.Paths).
type Paths = prompt.Paths

// PlanSchema is the contract the plan prompts carry (prompt.PlanSchema).
const PlanSchema = prompt.PlanSchema

// Builtin returns the built-in template of a phase (prompt.Builtin).
func Builtin(phase string) string { return prompt.Builtin(phase) }

// Render executes a prompt template (prompt.Render).
func Render(src string, d PromptData) (string, error) { return prompt.Render(src, d) }

// fence wraps a failure signal so the agent reads it as data (prompt.Fence).
func fence(label, body string) string { return prompt.Fence(label, body) }

// newPrompts is the engine's prompt builder, over its state.
func newPrompts(e *Engine) *prompt.Builder {
	st := e.st
	return &prompt.Builder{Dir: e.dir, Spec: func() *spec.Loop { return e.spec },
		State: prompt.State{Cycle: &st.Cycle, Iterations: &st.Iterations, LastFailure: &st.LastFailure, SameCount: &st.SameCount, Tried: &st.Tried,
			PendingErrors: &st.PendingErrors, PendingGap: &st.PendingGap, GateSame: &st.GateSame, GapSame: &st.GapSame, GateTried: &st.GateTried,
			BaselineSignal: &st.BaselineSignal, BaselineChecks: &st.BaselineChecks, Baseline: &st.Baseline},
		Stop: func(summary string) error { return e.stop(ReasonBlocked, summary) }}
}
