package loop

import (
	"maps"
	"os"
	"slices"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// Redactor is what loop l redacts from everything the engine writes or
// sends: the secret-named variables of the engine's environment and of
// every agent's env in the loop file, redact.names, the notify webhook's
// and command's URL parts, the built-in credential shapes and
// redact.patterns. It is nil (nothing redacted) under `redact: off`.
func Redactor(l *spec.Loop) *redact.Redactor {
	if l == nil {
		return redact.New(os.Environ(), nil, nil)
	}
	if l.Redact.Off {
		return nil
	}
	env := os.Environ()
	for _, a := range append([]spec.Agent{l.Agent}, slices.Collect(maps.Values(l.Agents))...) {
		for k, v := range a.Env {
			env = append(env, k+"="+v)
		}
	}
	r := redact.New(env, l.Redact.Names, l.Redact.Compiled())
	r.AddURL("notify_webhook", l.Notify.Webhook)
	for _, u := range redact.URLs(l.Notify.Command) {
		r.AddURL("notify_command", u)
	}
	return r
}

// redactionNote is the NOT VERIFIED line of a loop with `redact: off`.
const redactionNote = "redact: off — secrets the agents and checks printed were written to the records, transcripts and prompts as they were"
