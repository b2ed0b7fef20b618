package spec

// Tests that pin the structure check's messages (issue 18): typos, the
// kinds of value each field takes, and lists given as one string.

import (
	"reflect"
	"testing"
)

func TestPinTypoSuggestions(t *testing.T) {
	// One or two edits away: the field is named.
	problemAt(t, "objective: x\nbudgte: {}\n", 2, 1, `unknown field "budgte"`, `did you mean "budget"?`)
	problemAt(t, "objective: x\nbudget: {iteratons: 3}\n", 2, 10, `did you mean "iterations"?`)
	problemAt(t, "objective: x\nbudget: {wal: 3m}\n", 2, 10, `did you mean "wall"?`)
	// Three edits away: no guess, the known fields instead.
	problemAt(t, "objective: x\nbudget: {wxyz: 3m}\n", 2, 10, `unknown field "wxyz" in budget (known fields: `, "api_retries, ")
	problemAt(t, "objective: x\nbudget: {zzzzzzzz: 1}\n", 2, 10, "(known fields: ")
}

func TestPinEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"", "abc", 3}, {"abc", "", 3}, {"wall", "wal", 1},
		{"budget", "budgte", 2}, {"kitten", "sitting", 3}, {"ab", "ba", 2},
	} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// Each kind of field refuses the wrong kind of value, naming what it got.
func TestPinValueKinds(t *testing.T) {
	problemAt(t, "objective: x\nbudget: [1]\n", 2, 9, "budget: want a mapping of fields, got a list")
	problemAt(t, "objective: x\nprices: [1]\n", 2, 9, "prices: want a mapping, got a list")
	problemAt(t, "objective: x\nverify: {a: b}\n", 2, 9, "verify: want a list, got a mapping")
	problemAt(t, "objective: {a: b}\n", 1, 12, "objective: want a string, got a mapping")
	problemAt(t, "objective: x\nbudget: {iterations: 2.5}\n", 2, 22, `budget.iterations: want a whole number, got "2.5"`)
	problemAt(t, "objective: x\nbudget: {iterations: [1]}\n", 2, 22, "budget.iterations: want a whole number, got a list")
	problemAt(t, "objective: x\nbudget: {cost_usd: lots}\n", 2, 20, "budget.cost_usd: want an amount in USD")
	problemAt(t, "objective: x\nprotect_defaults: yes please\n", 2, 19, `protect_defaults: want true or false, got "yes please"`)
	problemAt(t, "objective: x\nagent: {timeout: [1]}\n", 2, 18, "agent.timeout: want a duration like 20m or 4h")
	problemAt(t, "objective: x\nagent: {permissions: {a: b}}\n", 2, 22, "agent.permissions: want a string or a list of strings")
	problemAt(t, "objective: x\nagent: {permissions: [Read, [x]]}\n", 2, 29, "want a string, got a list")
}

// A list of strings may be one string.
func TestPinStringListAcceptsOneString(t *testing.T) {
	l, err := Parse([]byte("objective: x\nagent: {permissions: Read}\nnotify: {on: stop}\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual([]string(l.Agent.Permissions), []string{"Read"}) || !reflect.DeepEqual([]string(l.Notify.On), []string{"stop"}) {
		t.Errorf("permissions %q, notify.on %q; want one entry each", l.Agent.Permissions, l.Notify.On)
	}
}

// A field given twice is reported at its second place.
func TestPinFieldTwice(t *testing.T) {
	_, err := Parse([]byte("objective: x\nbudget: {iterations: 2, iterations: 3}\n"), "loop.yaml")
	if err == nil {
		t.Fatal("want a problem for a field given twice")
	}
}
