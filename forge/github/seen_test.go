package github

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/fakegithub"
)

func TestSeenKeptAcrossLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve", "deliveries.json")
	s, err := LoadSeen(path, 3, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if fresh, err := s.Take(id); !fresh || err != nil {
			t.Fatalf("take %s: %v %v", id, fresh, err)
		}
	}
	again, err := LoadSeen(path, 3, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b", "c", "d"} {
		if again.First(id) {
			t.Errorf("after a load, %s was taken again", id)
		}
	}
	if !again.First("a") {
		t.Error("after a load, a is still kept (only the last 3 are)")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file: %v %v", fi, err)
	}
}

func TestSeenForgetsOldIDs(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "deliveries.json")
	s := &Seen{MaxAge: 24 * time.Hour, Path: path, Now: func() time.Time { return now }}
	s.Take("old")
	now = now.Add(23 * time.Hour)
	if s.First("old") {
		t.Fatal("an id of 23 hours ago was taken again")
	}
	s.Take("new")
	now = now.Add(2 * time.Hour)
	if !s.First("old") {
		t.Fatal("an id of 25 hours ago is still kept")
	}
	data, _ := os.ReadFile(path)
	if strings.Count(string(data), `"id":"old"`) != 1 || !strings.Contains(string(data), `"id":"new"`) {
		t.Fatalf("file %s", data)
	}
}

func TestSeenCorruptFileIsAWarning(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"torn":    `{"version":1,"deliveries":[{"id":"a"`,
		"version": `{"version":7,"deliveries":[]}`,
		"binary":  "\x00\xff\xfe",
	} {
		path := filepath.Join(dir, name+".json")
		os.WriteFile(path, []byte(content), 0o600)
		s, err := LoadSeen(path, 10, time.Hour)
		if err == nil || !strings.Contains(err.Error(), "is not a list of webhook deliveries") || s == nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fresh, err := s.Take("x"); !fresh || err != nil {
			t.Fatalf("%s: take after a corrupt file: %v %v", name, fresh, err)
		}
		if again, err := LoadSeen(path, 10, time.Hour); err != nil || again.First("x") {
			t.Fatalf("%s: the file was not rewritten: %v", name, err)
		}
	}
}

func TestSeenRefusesWhatItCannotKeep(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, []byte("x"), 0o600)
	s := &Seen{Path: filepath.Join(blocker, "deliveries.json")}
	fresh, err := s.Take("a")
	if fresh || err == nil || !strings.Contains(err.Error(), "cannot be kept") {
		t.Fatalf("take with an unwritable file: %v %v", fresh, err)
	}
	// Not recorded: taken once the file can be written.
	s.Path = filepath.Join(dir, "deliveries.json")
	if fresh, err := s.Take("a"); !fresh || err != nil {
		t.Fatalf("the refused id was used up: %v %v", fresh, err)
	}
}

// A delivery whose id cannot be kept is refused (503) and not acted on:
// a restart would forget it, and a replay would be taken then.
func TestWebhookRefusesWhatItCannotKeep(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, []byte("x"), 0o600)
	acted := 0
	h := &Webhook{Secret: []byte("k"), Seen: &Seen{Path: filepath.Join(blocker, "deliveries.json")}, On: func(Event) error { acted++; return nil }}
	srv := httptest.NewServer(h)
	defer srv.Close()
	code, err := fakegithub.Deliver(srv.URL, "k", fakegithub.Delivery{ID: "d-1", Event: "issues", Body: []byte(labeled)})
	if err != nil || code != http.StatusServiceUnavailable || acted != 0 {
		t.Fatalf("status %d, acted %d, %v", code, acted, err)
	}
	long := fakegithub.Delivery{ID: strings.Repeat("x", 201), Event: "issues", Body: []byte(labeled)}
	if code, _ := fakegithub.Deliver(srv.URL, "k", long); code != http.StatusBadRequest {
		t.Fatalf("an id of 201 bytes: %d", code)
	}
}

// Two serve processes on one state folder: each counts the ids the other
// took, even when both were loaded before either took one, and when they
// take the same ids at once exactly one of them gets each.
func TestSeenSharedByTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deliveries.json")
	a, err := LoadSeen(path, 0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadSeen(path, 0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !a.First("d1") {
		t.Fatal("d1 was not new to the first")
	}
	if b.First("d1") {
		t.Fatal("the second took d1, which the first had taken: a replay to the other process is accepted")
	}
	const n = 40
	fresh := make(chan bool, 2*n)
	done := make(chan struct{})
	for _, s := range []*Seen{a, b} {
		go func(s *Seen) {
			for i := 0; i < n; i++ {
				fresh <- s.First("race-" + string(rune('A'+i)))
			}
			done <- struct{}{}
		}(s)
	}
	<-done
	<-done
	close(fresh)
	got := 0
	for f := range fresh {
		if f {
			got++
		}
	}
	if got != n {
		t.Fatalf("%d of %d ids taken as new by the two, want each once", got, n)
	}
	again, err := LoadSeen(path, 0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if again.First("race-A") || again.First("d1") {
		t.Fatal("the file lost an id one of the two took")
	}
}
