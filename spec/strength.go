package spec

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// VerifyStrength is `verify_strength:`: after the clean room passes, the
// lines the loop changed are mutated and the DONE gate's checks run on each
// mutant; the share they catch is the verifier's strength. `on` (or a
// mapping) turns it on; Min, when above 0, makes a weaker result stop the
// loop NOT VERIFIED instead of DONE (or, while the loop may go on, puts the
// survivors in the next prompt); Budget bounds the time of the whole pass
// and MaxMutants the mutants run.
type VerifyStrength struct {
	On         bool     `yaml:"on"`
	Min        float64  `yaml:"min"`
	Budget     Duration `yaml:"budget"`
	MaxMutants int      `yaml:"max_mutants"`
}

// The defaults of verify_strength once on.
const (
	DefaultStrengthBudget     = 5 * time.Minute
	DefaultStrengthMaxMutants = 40
	// MaxStrengthMutants bounds max_mutants.
	MaxStrengthMutants = 1000
)

// UnmarshalYAML reads `verify_strength: on|off` or the mapping (which
// turns it on unless it says `on: false`).
func (v *VerifyStrength) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "on", "true":
			*v = VerifyStrength{On: true}
		case "off", "false", "":
			*v = VerifyStrength{}
		default:
			return fmt.Errorf("line %d: verify_strength: %q is not known: write on, off, or a mapping {min: 0.6, budget: 5m, max_mutants: 40}", n.Line, n.Value)
		}
		return nil
	}
	type plain VerifyStrength
	p := plain{On: true}
	if err := n.Decode(&p); err != nil {
		return err
	}
	*v = VerifyStrength(p)
	return nil
}

// strengthDefaults fills the budget and the mutants' cap of a pass that is on.
func (l *Loop) strengthDefaults() {
	if !l.VerifyStrength.On {
		return
	}
	if l.VerifyStrength.Budget == 0 {
		l.VerifyStrength.Budget = Duration(DefaultStrengthBudget)
	}
	if l.VerifyStrength.MaxMutants == 0 {
		l.VerifyStrength.MaxMutants = DefaultStrengthMaxMutants
	}
}

// validateStrength checks verify_strength's values.
func (l *Loop) validateStrength(at func(path, format string, args ...any)) {
	v := l.VerifyStrength
	if v.Min < 0 || v.Min > 1 {
		at("verify_strength.min", "verify_strength.min: %g is not a share: want a number from 0 to 1 (0.6: the checks must catch 60%% of the mutants)", v.Min)
	}
	if v.Budget < 0 {
		at("verify_strength.budget", "verify_strength.budget: want a positive duration like 5m")
	}
	if v.MaxMutants < 0 || v.MaxMutants > MaxStrengthMutants {
		at("verify_strength.max_mutants", "verify_strength.max_mutants: %d: want a whole number from 1 to %d", v.MaxMutants, MaxStrengthMutants)
	}
}

// walkStrength checks the shape of verify_strength's node: a scalar on or
// off, or a mapping whose min is a number.
func (c *checker) walkStrength(n *yaml.Node, path string) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		switch strings.ToLower(n.Value) {
		case "on", "off", "true", "false":
		default:
			c.add(n, "%s: %q is not known: write on, off, or a mapping {min: 0.6, budget: 5m, max_mutants: 40}", path, n.Value)
		}
		return true
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "min" {
				c.nodes[join(path, "min")] = v
				if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") {
					c.add(v, "%s.min: want a number from 0 to 1, got %s", path, valueName(v))
				}
				// Checked for the rest; the walk would read it as money.
				n2 := *n
				n2.Content = append(append([]*yaml.Node{}, n.Content[:i]...), n.Content[i+2:]...)
				c.walk(&n2, typeStrength, path)
				c.nodes[path] = n
				return true
			}
		}
	}
	return false
}
