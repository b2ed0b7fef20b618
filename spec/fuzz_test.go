package spec

import "testing"

// FuzzParse: any loop file gets a loop or a list of problems, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"objective: x\n", "objective: x\nagent: {backend: command}\n", "shape: [\n", "budget: {wall: 1d}\nobjective: y\n",
		"post_phases:\n  - name: a\n    prompt: '{{'\n", "agents:\n  plan: 3\n", "&a [*a]", "protect: ['[']\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, "/tmp/loop.yaml")
		if err == nil && l == nil {
			t.Fatal("nil loop without an error")
		}
	})
}
