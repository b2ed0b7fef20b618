package record

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/redact"
)

// A secret holding a quote and a backslash, in every kind of field of an
// event: the line on disk and what subscribers see hold none of it.
func TestWriterRedactsBeforeMarshalling(t *testing.T) {
	secret := `p"ss\wörd-0123456789`
	dir := t.TempDir()
	w, err := Create(dir, "r1", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.SetRedactor(redact.New([]string{"DB_PASSWORD=" + secret}, nil, nil))
	var seen Event
	w.Subscribe(func(e Event) { seen = e })
	data, _ := json.Marshal(map[string]string{"finding": secret})
	w.Write(Event{Event: Verify, Message: "x " + secret, Errors: []string{secret}, Checks: []Check{{Command: "echo " + secret, Signal: secret}}, Data: data})
	w.Close()
	line, _ := os.ReadFile(w.Path())
	escaped, _ := json.Marshal(secret)
	for _, s := range []string{secret, string(escaped[1 : len(escaped)-1]), "0123456789"} {
		if strings.Contains(string(line), s) {
			t.Fatalf("the record holds %q: %s", s, line)
		}
	}
	if strings.Count(string(line), "[REDACTED:DB_PASSWORD]") != 5 {
		t.Fatalf("want 5 redactions: %s", line)
	}
	if strings.Contains(seen.Message+seen.Checks[0].Signal, "0123456789") {
		t.Fatalf("a subscriber saw the secret: %+v", seen)
	}
}
