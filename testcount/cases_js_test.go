package testcount

import "testing"

// The cases of a jest or vitest each/table test, named as the real runners
// name them (the file and describe blocks first: jest 30, vitest 4), have
// their own titles as ids; mocha's space-joined titles stay whole.
func TestCaseOfJSTitles(t *testing.T) {
	for _, tc := range []struct {
		f          Failure
		family, id string
	}{
		{Failure{Runner: "jest", Name: "__tests__/calc.test.ts › add › add(-1, 4) is 3"}, "__tests__/calc.test.ts › add › add(#, #) is #", "add(-1, 4) is 3"},
		{Failure{Runner: "jest", Name: "add(1, 2) is 3"}, "add(#, #) is #", "add(1, 2) is 3"},
		{Failure{Runner: "vitest", Name: "test/calc.test.ts > add > add(0, 5) is 5"}, "test/calc.test.ts > add > add(#, #) is #", "add(0, 5) is 5"},
		{Failure{Runner: "mocha", Name: "add adds 1 and 2"}, "add adds # and #", "add adds 1 and 2"},
	} {
		fam, id, ok := CaseOf(tc.f)
		if !ok || fam != tc.family || id != tc.id {
			t.Errorf("%s %q: %q %q %v", tc.f.Runner, tc.f.Name, fam, id, ok)
		}
	}
}
