package prompt

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// A post phase whose template shows neither its signal nor the objective
// gets the objective once, at the top, and the line that asks for the
// signal at the end: never a second objective block in the middle.
func TestPostSignalLineAddsNoSecondObjective(t *testing.T) {
	l := &spec.Loop{Objective: "ship the parser"}
	b := newBuilder(l)
	out, err := b.Post(spec.PostPhase{Name: "docs", Prompt: "Write the docs.\n", Done: "DOCS_DONE"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "# Key objective"); n != 1 {
		t.Errorf("%d objective blocks in the post prompt:\n%s", n, out)
	}
	if !strings.HasPrefix(out, "# Key objective\nship the parser\n") {
		t.Errorf("the objective is not at the top:\n%s", out)
	}
	if !strings.HasSuffix(out, "print <promise>DOCS_DONE</promise> on a line of its own as your final message.") {
		t.Errorf("the signal line is not last:\n%s", out)
	}
}
