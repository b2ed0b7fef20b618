package loop

import (
	"github.com/looprinter/looprinter/prompt"
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
