// Package serve is `looprinter serve`: a web dashboard and an HTTP API over
// every loop the registry knows (internal/ops). Pages are drawn on the
// server (html/template, charts as inline SVG); the few styles and the
// script are embedded (web/), so the page works offline. Live parts come
// from Server-Sent Events fed by the records follower.
//
// Security: read-only without a token on a loopback address; every action,
// and any access at all on a non-loopback address, needs a token (tokens.go);
// the dashboard's actions carry a CSRF token; requests from another origin
// and Host names that are not this server (DNS rebinding) are refused; every
// action is written to the audit log (audit.go).
package serve

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/looprinter/looprinter/forge/github"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/spec"
)

//go:embed web
var webFS embed.FS

// Actions are the dashboard's and the API's answer and guide actions; by
// default ops.Answer and ops.Guide, as the CLI's commands do (tests may
// replace them). Pause, resume and stop go through internal/ops directly.
type Actions struct {
	// Answer gives the operator's answer to question id of a waiting loop;
	// by says who ("serve token 1a2b3c4d").
	Answer func(e ops.Entry, id, text, by string) (string, error)
	// Guide queues guidance for the loop's next agent run.
	Guide func(e ops.Entry, text, by string) (string, error)
	// Start runs the loop in the background, on an issue or with an
	// objective (hooks.go: startLoop).
	Start func(e ops.Entry, req StartRequest) (string, error)
	// Comment posts body on issue (or pull request) n of the loop's forge
	// (hookstatus.go: commentOn).
	Comment func(l *spec.Loop, n int, body string) error
}

// Config is how a server runs.
type Config struct {
	// Addr is where it listens ("127.0.0.1:7878"); it decides whether a
	// token is needed to read (see Loopback).
	Addr string
	// AllowedHosts are host names (besides IP addresses and localhost) the
	// server answers to, e.g. the name a reverse proxy forwards.
	AllowedHosts []string
	Tokens       *Tokens
	Audit        *Audit
	Actions      Actions
	// Redact is applied to every answer the server sends (records,
	// transcripts, prompts, check output, diffs, pages): loopFile names the
	// loop the answer is about ("" for answers about every loop), so its
	// own redaction settings apply. Default: the loop's redaction
	// (redact.go).
	Redact func(loopFile string, b []byte) []byte
	// Poll is how often live views look for new records (default 200ms).
	Poll time.Duration
	// StopTimeout is how long a stop waits for a clean stop (default 30s).
	StopTimeout time.Duration
	// Deliveries are the webhook deliveries taken (OpenDeliveries: kept
	// across restarts); default: remembered in memory only.
	Deliveries *github.Seen
}

// Server is one `looprinter serve`.
type Server struct {
	cfg      Config
	loopback bool
	mux      *http.ServeMux
	pages    *pages
	cop      *http.CrossOriginProtection
	// seen are the webhook deliveries taken: one seen again is a replay.
	seen *github.Seen
}

// New makes a server; it does not listen (see Serve).
func New(cfg Config) (*Server, error) {
	if cfg.Tokens == nil {
		return nil, errors.New("serve: no token file")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	if cfg.Actions.Answer == nil {
		cfg.Actions.Answer = answerLoop
	}
	if cfg.Actions.Guide == nil {
		cfg.Actions.Guide = guideLoop
	}
	if cfg.Actions.Start == nil {
		cfg.Actions.Start = startLoop
	}
	if cfg.Actions.Comment == nil {
		cfg.Actions.Comment = commentOn
	}
	if cfg.Redact == nil {
		cfg.Redact = newRedactors().Bytes
	}
	if cfg.Deliveries == nil {
		cfg.Deliveries = &github.Seen{Max: maxDeliveries, MaxAge: deliveryAge}
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, loopback: Loopback(cfg.Addr), mux: http.NewServeMux(), pages: p, cop: http.NewCrossOriginProtection(), seen: cfg.Deliveries}
	s.routes()
	return s, nil
}

// Loopback says whether addr (host:port) listens on loopback only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler is the whole server: Host and origin checks, tokens, then the
// routes.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("Cache-Control", "no-store")
	if !s.hostAllowed(r.Host) {
		httpError(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("this server does not answer to the host %q (a defence against DNS rebinding); open it by its IP address or localhost, or start serve with --allow-host", r.Host))
		return
	}
	if err := s.cop.Check(r); err != nil {
		httpError(w, r, http.StatusForbidden, "cross-origin request refused: "+err.Error())
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), whoKey{}, s.identify(r)))
	s.mux.ServeHTTP(w, r)
}

// hostAllowed says whether the Host header names this server: an IP
// address (a DNS rebinding attack needs a name), localhost, or a name the
// user allowed.
func (s *Server) hostAllowed(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return true
	}
	if host == "localhost" {
		return true
	}
	for _, a := range s.cfg.AllowedHosts {
		if strings.EqualFold(strings.TrimSuffix(a, "."), host) {
			return true
		}
	}
	return false
}

func (s *Server) routes() {
	m := s.mux
	static, _ := fs.Sub(webFS, "web/static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.logout)

	m.HandleFunc("GET /{$}", s.read(s.listPage))
	m.HandleFunc("GET /loops/{name}", s.read(s.loopPage))
	m.HandleFunc("GET /loops/{name}/runs/{n}", s.read(s.runPage))
	m.HandleFunc("GET /loops/{name}/history", s.read(s.historyPage))

	m.HandleFunc("GET /api/loops", s.read(s.apiLoops))
	m.HandleFunc("GET /api/loops/stream", s.read(s.apiLoopsStream))
	m.HandleFunc("GET /api/loops/{name}", s.read(s.apiLoop))
	m.HandleFunc("GET /api/loops/{name}/records", s.read(s.apiRecords))
	m.HandleFunc("GET /api/loops/{name}/records/stream", s.read(s.apiRecordsStream))
	m.HandleFunc("GET /api/loops/{name}/cost", s.read(s.apiCost))
	m.HandleFunc("GET /api/loops/{name}/runs", s.read(s.apiRuns))
	m.HandleFunc("GET /api/loops/{name}/runs/{n}", s.read(s.apiRun))
	m.HandleFunc("GET /api/loops/{name}/report", s.read(s.apiReport))
	m.HandleFunc("GET /api/loops/{name}/files/{path...}", s.read(s.apiFile))
	m.HandleFunc("GET /api/audit", s.admin(s.apiAudit))

	// GitHub's deliveries: signed, not token-bearing (hooks.go).
	m.HandleFunc("POST /hooks/github/{name}", s.githubHook)
	for _, a := range []string{"pause", "resume", "stop", "answer", "guide", "start", "approve"} {
		m.HandleFunc("POST /api/loops/{name}/"+a, s.action(a))
	}
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		httpError(w, r, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path+" (docs/api.md lists them)")
	})
}
