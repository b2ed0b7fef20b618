package testcount

import (
	"fmt"
	"sort"
	"strings"
)

// MaxListed is the most test names one violation names; the rest are counted.
const MaxListed = 20

// Compare says what got worse from base (the baseline's counts) to cur: one
// sentence per violation, empty when nothing got worse or when base is not
// Known. The violations are:
//
//   - fewer tests passed than in the baseline;
//   - more tests were skipped than in the baseline;
//   - the baseline's output had test counts and cur's has none (the runner's
//     summary was silenced, or no test ran).
//
// A violation names the tests that no longer pass and those newly skipped
// when both outputs name their tests. More failures are not a violation
// here: the check's exit code already fails the gate.
func Compare(base, cur Counts) []string {
	if !base.Known {
		return nil
	}
	if !cur.Known {
		return []string{fmt.Sprintf("no test results could be read from the output, but the baseline's had them (%s)", base)}
	}
	var out []string
	names := len(base.PassedNames) > 0 && !base.NamesTruncated && !cur.NamesTruncated
	if cur.Passed < base.Passed {
		s := fmt.Sprintf("passing tests fell from %d to %d", base.Passed, cur.Passed)
		if names {
			if lost := minus(base.PassedNames, cur.PassedNames); len(lost) > 0 {
				s += "; no longer passing: " + list(lost)
			}
		}
		out = append(out, s)
	}
	if cur.Skipped > base.Skipped {
		s := fmt.Sprintf("skipped tests rose from %d to %d", base.Skipped, cur.Skipped)
		if !base.NamesTruncated && !cur.NamesTruncated {
			if added := minus(cur.SkippedNames, base.SkippedNames); len(added) > 0 {
				s += "; newly skipped: " + list(added)
			}
		}
		out = append(out, s)
	}
	return out
}

// minus returns the names in a that are not in b (both sorted).
func minus(a, b []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(a) {
		switch {
		case j >= len(b) || a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] == b[j]:
			i++
			j++
		default:
			j++
		}
	}
	return out
}

func list(names []string) string {
	if len(names) <= MaxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:MaxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-MaxListed)
}

// Sum adds the counts of several checks' outputs (a gate runs several
// commands). It is Known when any of them is; the runners and the names
// are merged.
func Sum(cs ...Counts) Counts {
	var out Counts
	var runners []string
	seenRunner := map[string]bool{}
	passed, skipped := map[string]bool{}, map[string]bool{}
	for _, c := range cs {
		if !c.Known {
			continue
		}
		out.Known = true
		out.Passed += c.Passed
		out.Failed += c.Failed
		out.Skipped += c.Skipped
		out.NamesTruncated = out.NamesTruncated || c.NamesTruncated
		for _, r := range strings.Split(c.Runner, ",") {
			if r != "" && !seenRunner[r] {
				seenRunner[r] = true
				runners = append(runners, r)
			}
		}
		for _, n := range c.PassedNames {
			passed[n] = true
		}
		for _, n := range c.SkippedNames {
			skipped[n] = true
		}
	}
	out.Runner = strings.Join(runners, ",")
	out.PassedNames = sortedKeys(passed)
	out.SkippedNames = sortedKeys(skipped)
	return out
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
