package github

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A job's log is read at the link the API redirects to, without the
// token; the API itself gets it.
func TestJobLogLinkGetsNoToken(t *testing.T) {
	var mu sync.Mutex
	auth := map[string]string{}
	logs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth["log"] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Write([]byte("##[error]boom\n"))
	}))
	defer logs.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth["api"] = r.Header.Get("Authorization")
		mu.Unlock()
		if r.URL.Path != "/repos/acme/widget/actions/jobs/7/logs" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, logs.URL+"/blob/7?sig=x", http.StatusFound)
	}))
	defer api.Close()
	c, err := New("acme/widget", api.URL, "ghp_jobLogTok3n")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.JobLog(context.Background(), 7)
	if err != nil || got != "##[error]boom\n" {
		t.Fatalf("log %q, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if auth["api"] != "Bearer ghp_jobLogTok3n" || auth["log"] != "" {
		t.Fatalf("Authorization: %q", auth)
	}
}

// An answer of the API is cut at maxBody: a server that never stops
// cannot fill the engine's memory.
func TestAnswersAreBounded(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"number":1,"title":"`))
		chunk := []byte(strings.Repeat("a", 1<<16))
		for i := 0; i < (maxBody>>16)+4; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(`"}`))
	}))
	defer api.Close()
	c, err := New("acme/widget", api.URL, "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Issue(context.Background(), 1); err == nil {
		t.Fatal("an answer over maxBody was read whole")
	}
}
