package loop

import (
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/spec"
)

// Protection lives in package guard; the engine keeps one *guard.Guard
// (Engine.guard), made in openEngine. These are the names the engine's
// other files use for what moved there.

// Tamper is one protected file the agent changed (guard.Tamper).
type Tamper = guard.Tamper

// ProtectRules are a loop's protection rules (guard.ProtectRules).
type ProtectRules = guard.ProtectRules

type (
	protFile    = guard.File
	runnerFiles = guard.RunnerFiles
)

var (
	readBounded = guard.ReadBounded
	typeName    = guard.TypeName
	fileSum     = guard.FileSum
	relInside   = guard.RelInside
)

// NewProtectRules walks the loop's folder once and returns its rules
// (guard.NewProtectRules).
func NewProtectRules(dir string, l *spec.Loop) (*ProtectRules, error) {
	return guard.NewProtectRules(dir, l)
}

// protectedFiles lists the files protected for the next run, with the
// rules (guard.Guard.Files).
func (e *Engine) protectedFiles() ([]protFile, *ProtectRules, error) {
	return e.guard.Files(e.spec)
}
