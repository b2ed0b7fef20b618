package github

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/looprinter/looprinter/internal/fakegithub"
)

const labeled = `{"action":"labeled","repository":{"full_name":"acme/widget"},"sender":{"login":"alice"},"issue":{"number":7,"author_association":"MEMBER"},"label":{"name":"looprinter"}}`

func TestWebhookVerifiesDedupesAndParses(t *testing.T) {
	var mu sync.Mutex
	var got []Event
	h := &Webhook{Secret: []byte("s3cret-of-the-hook"), Seen: &Seen{Max: 100}, On: func(e Event) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
		return nil
	}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	d := fakegithub.Delivery{ID: "d-1", Event: "issues", Body: []byte(labeled)}
	if code, err := fakegithub.Deliver(srv.URL, "s3cret-of-the-hook", d); err != nil || code != 202 {
		t.Fatalf("a genuine delivery: %d, %v", code, err)
	}
	// The same delivery again (recorded and replayed): refused.
	if code, _ := fakegithub.Deliver(srv.URL, "s3cret-of-the-hook", d); code != 409 {
		t.Fatalf("a replay: %d", code)
	}
	// Signed with another secret (forged): refused, and its id not used up.
	forged := fakegithub.Delivery{ID: "d-2", Event: "issues", Body: []byte(labeled)}
	if code, _ := fakegithub.Deliver(srv.URL, "guessed", forged); code != 401 {
		t.Fatalf("a forged delivery: %d", code)
	}
	if code, _ := fakegithub.Deliver(srv.URL, "s3cret-of-the-hook", forged); code != 202 {
		t.Fatalf("the id of a refused forgery was used up: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("events %+v", got)
	}
	e := got[0]
	if e.Delivery != "d-1" || e.Kind != "issues" || e.Action != "labeled" || e.Repo != "acme/widget" || e.Sender != "alice" || e.Issue != 7 || e.Association != "MEMBER" || e.Label != "looprinter" {
		t.Fatalf("event %+v", e)
	}
}

func TestVerify(t *testing.T) {
	secret, body := []byte("k"), []byte(`{"a":1}`)
	good := fakegithub.Sign("k", body)
	for _, tc := range []struct {
		secret []byte
		body   []byte
		header string
		want   error
	}{
		{secret, body, good, nil},
		{secret, body, "", ErrUnsigned},
		{secret, []byte(`{"a":2}`), good, ErrSignature},
		{secret, body, strings.TrimPrefix(good, "sha256="), ErrSignature},
		{secret, body, "sha1=" + strings.TrimPrefix(good, "sha256="), ErrSignature},
		{secret, body, "sha256=zz", ErrSignature},
		{nil, body, fakegithub.Sign("", body), ErrSignature}, // no secret: nothing is genuine
	} {
		if err := Verify(tc.secret, tc.body, tc.header); err != tc.want {
			t.Errorf("Verify(%q, %q): %v, want %v", tc.body, tc.header, err, tc.want)
		}
	}
}

func TestWebhookRefusesOtherRequests(t *testing.T) {
	h := &Webhook{Secret: []byte("k"), Seen: &Seen{}}
	for _, tc := range []struct {
		method, sig, id string
		body            string
		want            int
	}{
		{"GET", "", "", "", 405},
		{"POST", fakegithub.Sign("k", []byte(labeled)), "", labeled, 400},
		{"POST", fakegithub.Sign("k", []byte("not json")), "x", "not json", 400},
		{"POST", "", "y", labeled, 401},
	} {
		r := httptest.NewRequest(tc.method, "/hook", strings.NewReader(tc.body))
		r.Header.Set("X-Hub-Signature-256", tc.sig)
		r.Header.Set("X-GitHub-Delivery", tc.id)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s sig=%q id=%q: %d, want %d", tc.method, tc.sig, tc.id, w.Code, tc.want)
		}
	}
	r := httptest.NewRequest("POST", "/hook", strings.NewReader(strings.Repeat("x", maxDelivery+1)))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 413 {
		t.Errorf("a delivery too large: %d", w.Code)
	}
}

func TestSeenForgetsTheOldest(t *testing.T) {
	s := &Seen{Max: 2}
	if !s.First("a") || !s.First("b") || s.First("a") || !s.First("c") {
		t.Fatal("first sight")
	}
	if !s.First("a") { // forgotten: only the last Max are kept
		t.Fatal("a was not forgotten")
	}
	if s.First("c") {
		t.Fatal("c was forgotten")
	}
}
