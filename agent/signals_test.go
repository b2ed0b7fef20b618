package agent

import (
	"strings"
	"testing"
)

func TestSignals(t *testing.T) {
	const inline = "Document it.\nWhen finished, print <promise>DOCS_DONE</promise> on a line of its own.\nIf stuck, print <blocked>the reason</blocked>."
	const bare = "Document it. When finished, print this line:\n<promise>DOCS_DONE</promise>\nThanks."
	cases := []struct {
		name, text, prompt, promise, blocked string
	}{
		{"plain signal", "wrote the docs\n<promise>DOCS_DONE</promise>\n", inline, "DOCS_DONE", ""},
		{"signal after prose: not alone on its line", "All written. <promise>DOCS_DONE</promise>", inline, "", ""},
		{"text after the tag", "<promise>DOCS_DONE</promise> not yet", "", "", ""},
		{"white space around it", "  <promise>DOCS_DONE</promise>\t", "", "DOCS_DONE", ""},
		{"a quote mark in front", "> <promise>DOCS_DONE</promise>", "", "", ""},
		{"echo of the whole prompt", "You said:\n" + inline + "\n", inline, "", ""},
		{"markdown quote of the prompt line", "> When finished, print <promise>DOCS_DONE</promise> on a line of its own.", inline, "", ""},
		{"paraphrase around the tag", "The prompt says: print <promise>DOCS_DONE</promise> later, so I will.", inline, "", ""},
		{"prompt line with other spacing", "When   finished, print\t<promise>DOCS_DONE</promise>   on a line of its own.", inline, "", ""},
		{"blocked quoted from the prompt", "If stuck, print <blocked>the reason</blocked>.", inline, "", ""},
		{"blocked for real", "<blocked>need the API key</blocked>", inline, "", "need the API key"},
		{"bare tag in the prompt: real signal counts", "Documented.\n<promise>DOCS_DONE</promise>", bare, "DOCS_DONE", ""},
		{"bare tag in the prompt: first line of output", "<promise>DOCS_DONE</promise>", bare, "DOCS_DONE", ""},
		{"bare tag in the prompt: echoed block", "Here is my task:\n" + bare, bare, "", ""},
		{"bare tag in the prompt: quoted block", "> Document it. When finished, print this line:\n> <promise>DOCS_DONE</promise>", bare, "", ""},
		{"echo then a real signal", inline + "\nwork done\n<promise>DOCS_DONE</promise>", inline, "DOCS_DONE", ""},
		{"last tag wins", "<promise>A</promise>\n<promise>B</promise>", "", "B", ""},
		{"not a tag", "promise: DOCS_DONE\n<promise>\nDOCS_DONE</promise>\n<promise>DOCS_DONE", "", "", ""},
		{"no prompt", "<promise>X</promise>", "", "X", ""},
	}
	for _, c := range cases {
		p, b := Signals(c.text, c.prompt)
		if p != c.promise || b != c.blocked {
			t.Errorf("%s: Signals = (%q, %q), want (%q, %q)", c.name, p, b, c.promise, c.blocked)
		}
	}
}

// The command backend sees the stream line by line and must apply the same
// rules: an echoed prompt block is not a signal, the agent's own tag is.
func TestCommandParserIgnoresAnEchoedPromptBlock(t *testing.T) {
	prompt := "Write the docs.\nWhen you are done, print this line:\n<promise>DOCS_DONE</promise>\n"
	feed := func(out string) Result {
		p := commandAdapter{}.NewParser(Request{Prompt: prompt})
		for _, l := range strings.Split(out, "\n") {
			p.Line([]byte(l))
		}
		return p.Finish(Exit{})
	}
	if r := feed(prompt + "working on it\n"); r.Promise != "" {
		t.Errorf("echoed prompt counted as a signal: %q", r.Promise)
	}
	if r := feed(prompt + "wrote docs\n<promise>DOCS_DONE</promise>\n"); r.Promise != "DOCS_DONE" {
		t.Errorf("the agent's own signal was missed: %+v", r)
	}
}
