package loop

// The best state is ranked by what the ratchet counts: passing tests
// first (a commit that made more checks pass by dropping tests is not
// better), then checks passed.

// PassingTests is the number of tests the checks' runners counted passing
// on the checkpoint's tree.
func (c Checkpoint) PassingTests() int {
	n := 0
	for _, p := range c.Tests {
		n += p
	}
	return n
}

// worse says whether c ranks below o: fewer passing tests, or as many and
// fewer checks passed.
func (c Checkpoint) worse(o Checkpoint) bool {
	if a, b := c.PassingTests(), o.PassingTests(); a != b {
		return a < b
	}
	return c.Score() < o.Score()
}

// keptTests is a copy of a checkpoint's counts, to add a gate's to.
func keptTests(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// noteTests keeps a check's passing count when its output showed one (a
// check without a count leaves what an earlier gate on the tree counted).
func noteTests(tests map[string]int, r CheckResult) {
	if r.Tests.Known {
		tests[r.Command] = r.Tests.Passed
	}
}
