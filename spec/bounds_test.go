package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// yamlAt builds a loop file that sets the dotted field path to value, and
// gives the line and column where value starts.
func yamlAt(path, value string) (src string, line, col int) {
	var b strings.Builder
	b.WriteString("objective: x\n")
	line = 1
	keys := strings.Split(path, ".")
	for i, k := range keys {
		b.WriteString(strings.Repeat("  ", i) + k + ":")
		line++
		if i == len(keys)-1 {
			col = 2*i + len(k) + 3
			b.WriteString(" " + value)
		}
		b.WriteString("\n")
	}
	return b.String(), line, col
}

// problemAt parses src and wants exactly one problem, at line:col, whose
// message holds every one of want.
func problemAt(t *testing.T, src string, line, col int, want ...string) {
	t.Helper()
	_, err := Parse([]byte(src), "loop.yaml")
	var se *Error
	if !errors.As(err, &se) {
		t.Errorf("want a problem at %d:%d in\n%s\ngot %v", line, col, src, err)
		return
	}
	if len(se.Problems) != 1 {
		t.Errorf("want one problem, got %d:\n%s\nin\n%s", len(se.Problems), se, src)
		return
	}
	p := se.Problems[0]
	if p.Line != line || p.Column != col {
		t.Errorf("problem at %d:%d, want %d:%d: %s\nin\n%s", p.Line, p.Column, line, col, p.Msg, src)
	}
	for _, w := range want {
		if !strings.Contains(p.Msg, w) {
			t.Errorf("message %q lacks %q", p.Msg, w)
		}
	}
}

var durationFields = []string{
	"agent.timeout", "agent.idle_timeout", "agent.grace", "check_timeout", "schedule.every", "budget.wall",
	"agents.plan.timeout", "agents.build.idle_timeout", "agents.reviewer.grace",
}

// A duration too long to be meant overflowed: 213504d came out as 25
// minutes, 1000000d as a negative duration, and a number of days too big
// for an int as 0, which is "use the default". Every duration field is
// bounded, and a bad one is a problem at its value.
func TestDurationsAreBounded(t *testing.T) {
	bad := map[string]string{
		"213504d":               "at most 365d",
		"1000000d":              "at most 365d",
		"99999999999999999999d": "at most 365d",
		"366d":                  "at most 365d",
		"8761h":                 "at most 365d",
		"9999999999h":           "at most 365d",
		"-5m":                   "negative",
		"20x":                   "is not a duration",
		"1.5d":                  "is not a duration",
	}
	for _, field := range durationFields {
		for value, want := range bad {
			src, line, col := yamlAt(field, value)
			problemAt(t, src, line, col, field+": ", want)
		}
		for value, d := range map[string]time.Duration{"365d": 365 * 24 * time.Hour, "8760h": 8760 * time.Hour, "90s": 90 * time.Second, "2d": 48 * time.Hour} {
			src, _, _ := yamlAt(field, value)
			if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
				t.Errorf("%s: %s rejected (%s): %v", field, value, d, err)
			}
		}
	}
	for _, s := range []string{"213504d", "1000000d", "9223372036854775807d", "2562048h", "-1s"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %s, want an error", s, d)
		}
	}
	if d, err := ParseDuration("365d"); err != nil || d.D() != MaxDuration {
		t.Errorf("ParseDuration(365d) = %s, %v", d, err)
	}
}

var moneyFields = []string{
	"budget.cost_usd", "agent.max_budget_usd", "agents.build.max_budget_usd", "agents.plan.max_budget_usd",
	"prices.opus.input", "prices.opus.output", "prices.opus.cache_read", "prices.opus.cache_write",
}

// Money is a finite amount from 0 to 1,000,000 USD: .inf, NaN and negative
// amounts were accepted (an infinite budget never stops a loop).
func TestMoneyIsBounded(t *testing.T) {
	for _, field := range moneyFields {
		for _, value := range []string{".inf", ".Inf", "+.inf", "-.inf", ".nan", ".NaN", "-1", "-0.01", "1000000.01", "1e7", "1e300", "99999999999999999999"} {
			src, line, col := yamlAt(field, value)
			problemAt(t, src, line, col, field+": ", "1000000")
		}
		for _, value := range []string{"yes", "[1]", "'3'"} {
			src, line, col := yamlAt(field, value)
			problemAt(t, src, line, col, field+": ", "want an amount in USD")
		}
		for _, value := range []string{"0", "0.5", "25", "1e6", "1000000"} {
			src, _, _ := yamlAt(field, value)
			if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
				t.Errorf("%s: %s rejected: %v", field, value, err)
			}
		}
	}
}

// An empty key means its defaults, or a clear message where nothing can
// stand in for it.
func TestEmptyKeys(t *testing.T) {
	l, err := Parse([]byte("objective: x\nbudget:\nverify:\nagent:\nagents:\nprices:\nschedule:\nprotect:\n"), "/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Budget.Iterations != DefaultIterations || l.Budget.Cycles != DefaultCycles || l.Budget.CostUSD != DefaultCostUSD ||
		l.Budget.Wall.D() != DefaultWall || l.Budget.SameFailure != DefaultSameFailure {
		t.Errorf("empty budget: want the defaults, got %+v", l.Budget)
	}
	if l.Agent.Backend != "claude" || l.Agent.Timeout.D() != DefaultTimeout {
		t.Errorf("empty agent: want the defaults, got %+v", l.Agent)
	}
	if len(l.Verify) != 0 || len(l.Warnings()) == 0 {
		t.Errorf("empty verify: want no checks and a warning, got %q %q", l.Verify, l.Warnings())
	}
	// The ralph shape stops only on its checks: an empty verify is an error
	// at the key.
	problemAt(t, "shape: ralph\nobjective: x\nverify:\n", 3, 8, "verify is empty")
	// An empty entry in a list of commands is an error at the entry.
	problemAt(t, "objective: x\nverify:\n  - go test ./...\n  -\n", 4, 4, "verify: entry 2 is empty")
	problemAt(t, "objective: x\nsetup: ['']\n", 2, 9, "setup: entry 1 is empty")
	problemAt(t, "objective:\n", 1, 11, "objective is missing")
}

// A cron expression is checked as the scheduler reads it, at its position.
func TestCron(t *testing.T) {
	for expr, want := range map[string]string{
		`"61 * * * *"`:           "is not a cron expression",
		`"* * *"`:                "five fields",
		`"0 3 * * * *"`:          "five fields",
		`"0 0 31 2 *"`:           "never fires",
		`"*/0 * * * *"`:          "is not a cron expression",
		`"@every 5m"`:            "schedule.every",
		`"@sometimes"`:           "is not a cron expression",
		`"TZ=Europe/Berlin"`:     "no schedule",
		`"TZ=No/Such 0 3 * * *"`: "is not a cron expression",
	} {
		src, line, col := yamlAt("schedule.cron", expr)
		problemAt(t, src, line, col, "schedule.cron: ", want)
	}
	for _, expr := range []string{`"0 3 * * *"`, `"*/15 9-17 * * 1-5"`, `"@daily"`, `"TZ=UTC 0 3 * * *"`} {
		src, _, _ := yamlAt("schedule.cron", expr)
		if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
			t.Errorf("%s rejected: %v", expr, err)
		}
	}
	problemAt(t, "objective: x\nschedule:\n  cron: '0 3 * * *'\n  every: 1h\n", 4, 10, "not both")
}

// Bytes YAML does not allow are reported where they are; yaml.v3 gives no
// position for them.
func TestBadBytesHaveAPosition(t *testing.T) {
	for _, c := range []struct {
		src       string
		line, col int
		want      string
	}{
		{"objective: x\nverify:\n  - \"go\x01test\"\n", 3, 8, "U+0001"},
		{"objective: x\nverify:\n  - \"gé\xfftest\"\n", 3, 8, "not UTF-8"},
		{"objective: x\r\nverify:\r\n  - \"gé\xfftest\"\r\n", 3, 8, "not UTF-8"},
		{"objective: \"x\x7f\"\n", 1, 14, "U+007F"},
		{"# é\n\nobjective: \"éé\xef\xbf\xbe\"\n", 3, 15, "U+FFFE"},
		{"objective: x\x00\n", 1, 13, "U+0000"},
	} {
		problemAt(t, c.src, c.line, c.col, c.want)
	}
}

// An alias to no anchor is reported at the alias.
func TestUnknownAnchorHasAPosition(t *testing.T) {
	problemAt(t, "# loop\n\nobjective: x\nbudget:\n  wall: *wal\n", 5, 9, "*wal", "no anchor")
	problemAt(t, "objective: x\nverify: [&a go, *ab, *a]\n", 2, 17, "*ab")
}

func TestSyntaxErrorPositions(t *testing.T) {
	for _, c := range []struct {
		src       string
		line, col int
		want      string
	}{
		// An unclosed flow list: at its first entry, where the parser stops.
		{"objective: \"x\"\nverify:\n  - [unclosed\n", 3, 6, "did not find expected ',' or ']'"},
		// A key one space too deep, after a comment header: after a
		// comment it is a key, after a plain value that value's second line.
		{"# one\n# two\n# three\n\nobjective: x\nbudget:\n  cycles: 3 # c\n   wall: 4h\n", 8, 4, "did not find expected key"},
		{"# one\n# two\n# three\n\nobjective: x\nbudget:\n  cycles: 3\n   wall: 4h\n", 8, 8, "mapping values are not allowed"},
		// One space too shallow.
		{"# one\n# two\n# three\n\nobjective: x\nbudget:\n  cycles: 3\n wall: 4h\n", 8, 2, "did not find expected key"},
		// A tab for indentation.
		{"objective: x\nbudget:\n  cycles: 3\n\twall: 4h\n", 4, 1, "tab character"},
		// A second colon in a plain value.
		{"# c\nobjective: a: b\n", 2, 13, "mapping values are not allowed"},
		// Multi-byte characters count as one column each.
		{"objective: x\nbudget:\n  cycles: 3\n éé: 4h\n", 4, 2, "did not find expected key"},
		// An unclosed quote, reported at the quote, also on the first line.
		{"objective: x\nverify:\n  - \"go test\n", 3, 5, "end of stream"},
		{"objective: \"x\nverify:\n  - go test\n", 1, 12, "end of stream"},
		{"objective: 'x\nverify:\n  - go test", 1, 12, "end of stream"},
		// An unclosed list over lines: after its last entry.
		{"objective: x\nverify: [a,\n  b,\n  c\n", 4, 3, "did not find expected ',' or ']'"},
	} {
		problemAt(t, c.src, c.line, c.col, "YAML syntax: ", c.want)
	}
}

func TestMessagesSayTheLimits(t *testing.T) {
	src, _, _ := yamlAt("budget.wall", "213504d")
	_, err := Parse([]byte(src), "loop.yaml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("loop.yaml:3:9: budget.wall: %q is too long: a duration is at most 365d", "213504d")) {
		t.Errorf("got %v", err)
	}
}

// A bad duration stopped the decoding of the rest of the file, so the
// problems after it went unreported until it was fixed.
func TestBadDurationHidesNothing(t *testing.T) {
	_, err := Parse([]byte("objective: x\nbudget: {wall: 400d}\nschedule:\n  cron: '61 * * * *'\nreview: {bar: huge}\n"), "loop.yaml")
	var se *Error
	if !errors.As(err, &se) || len(se.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	for i, want := range []string{"2:16: budget.wall", "4:9: schedule.cron", "5:15: review.bar"} {
		if got := se.Problems[i].String(); !strings.HasPrefix(got, want) {
			t.Errorf("problem %d: %q, want %q...", i, got, want)
		}
	}
}

// yaml.v3 reads the first document only: what follows a "---" was ignored
// without a word.
func TestSecondDocument(t *testing.T) {
	problemAt(t, "objective: x\n---\nbudget: {wall: 1h}\n", 2, 1, "second YAML document")
	problemAt(t, "# c\nobjective: x\n...\n---\nverify: [a]\n", 4, 1, "second YAML document")
	problemAt(t, "objective: x\n--- # more\nbudget: [\n", 2, 1, "second YAML document", "does not parse")
	for _, src := range []string{"---\nobjective: x\n", "objective: x\n---\n", "objective: x\n...\n", "--- # c\nobjective: x\n---\n# nothing\n"} {
		if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}
