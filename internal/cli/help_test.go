package cli

import (
	"bytes"
	"strings"
	"testing"
)

// The getting-started commands explain themselves: --help has a usage line,
// the long text and at least one example.
func TestGettingStartedHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"init", "--help"}, []string{"looprinter init [flags]", "four stages", "Examples:", "looprinter init --yes", "--objective-verify", "--deliverable"}},
		{[]string{"doctor", "--help"}, []string{"looprinter doctor [flags]", "could not check", "Examples:", "looprinter doctor -f"}},
	} {
		var out bytes.Buffer
		root := NewRoot(&IO{In: strings.NewReader(""), Out: &out, Err: &out})
		root.SetArgs(c.args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v lacks %q:\n%s", c.args, w, out.String())
			}
		}
	}
	// cost estimate is added under `cost` by its parent; its help stands alone.
	var out bytes.Buffer
	cmd := newCostEstimateCmd(&IO{In: strings.NewReader(""), Out: &out, Err: &out})
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Examples:", "$4.3768", "--price", "cost per task = cost per attempt"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("cost estimate --help lacks %q:\n%s", w, out.String())
		}
	}
}
