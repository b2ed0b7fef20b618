package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/looprinter/looprinter/loopdir"
)

// sessionCookie holds the dashboard's token after /login.
const sessionCookie = "looprinter_session"

// who is the caller of one request.
type who struct {
	TokenID string
	Scope   string // "" (no token), ScopeRead or ScopeAdmin
	Cookie  bool   // the token came from the session cookie (CSRF applies)
	Bad     bool   // a token was given and is not valid
}

type whoKey struct{}

func whoOf(r *http.Request) who {
	w, _ := r.Context().Value(whoKey{}).(who)
	return w
}

// identify reads the caller's token: "Authorization: Bearer TOKEN", else
// the session cookie. A query string never carries a token (it would end up
// in logs and history).
func (s *Server) identify(r *http.Request) who {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return who{Bad: true}
		}
		id, scope, ok := s.cfg.Tokens.Check(strings.TrimSpace(tok))
		if !ok {
			return who{Bad: true}
		}
		return who{TokenID: id, Scope: scope}
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if id, scope, ok := s.cfg.Tokens.Check(c.Value); ok {
			return who{TokenID: id, Scope: scope, Cookie: true}
		}
	}
	return who{}
}

// read guards a route that only reads: anyone on loopback, a valid token
// elsewhere. A wrong token is refused everywhere.
func (s *Server) read(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := whoOf(r)
		switch {
		case c.Bad:
			unauthorized(w, r, "the token is not valid (rotated? `looprinter serve --rotate-token` prints a new one)")
		case c.Scope == "" && !s.loopback:
			if wantsHTML(r) {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			unauthorized(w, r, "this server listens beyond loopback: every request needs a token (Authorization: Bearer TOKEN)")
		default:
			h(w, r)
		}
	}
}

// admin guards a route only an admin token may use.
func (s *Server) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if status, why := s.mayAct(r); status != 0 {
			httpError(w, r, status, why)
			return
		}
		h(w, r)
	}
}

// mayAct says why the caller may not act (a status and a reason), or 0:
// 401 without a valid token, 403 with a read token, 403 when the token came
// from the session cookie and the request lacks the session's CSRF token.
func (s *Server) mayAct(r *http.Request) (int, string) {
	c := whoOf(r)
	switch {
	case c.Bad:
		return http.StatusUnauthorized, "the token is not valid"
	case c.Scope == "":
		return http.StatusUnauthorized, "actions need a token: Authorization: Bearer TOKEN (printed by the first `looprinter serve`; `serve --rotate-token` makes a new one)"
	case c.Scope != ScopeAdmin:
		return http.StatusForbidden, "this token may only read; actions need the admin token"
	case c.Cookie:
		got := r.Header.Get("X-CSRF-Token")
		if got == "" {
			got = r.PostFormValue("csrf")
		}
		if !s.cfg.Tokens.CheckCSRF(c.TokenID, got) {
			return http.StatusForbidden, "CSRF check failed: the form is stale or came from another page; reload the page"
		}
	}
	return 0, ""
}

func unauthorized(w http.ResponseWriter, r *http.Request, why string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="looprinter"`)
	httpError(w, r, http.StatusUnauthorized, why)
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "login.html", map[string]any{"Title": "Sign in", "Error": r.URL.Query().Get("error") != ""})
}

// login takes a token from the form and keeps it in an HttpOnly,
// SameSite=Strict cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if _, _, ok := s.cfg.Tokens.Check(tok); !ok {
		http.Redirect(w, r, "/login?error=1", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// wantsHTML: a browser asked for a page, or posted one of the dashboard's
// forms (which go to the API's action routes); its errors are text, not
// JSON.
func wantsHTML(r *http.Request) bool {
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		return false
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return true
	}
	return r.Method == http.MethodPost && r.Form != nil && r.Form.Get("from") == "page"
}

// AuditEntry is one line of the audit log: every action asked of the
// server, done or refused.
type AuditEntry struct {
	TS      time.Time `json:"ts"`
	TokenID string    `json:"token_id,omitempty"` // "" when no valid token was given
	Action  string    `json:"action"`
	Loop    string    `json:"loop"`
	Remote  string    `json:"remote"`
	Status  int       `json:"status"` // the HTTP status answered
	Message string    `json:"message,omitempty"`
}

// Audit is the audit log, $LOOPRINTER_STATE_DIR/serve/audit.jsonl (0600).
type Audit struct {
	path string
	mu   sync.Mutex
}

// DefaultAuditPath is where serve writes its audit log.
func DefaultAuditPath() string { return filepath.Join(loopdir.StateRoot(), "serve", "audit.jsonl") }

// OpenAudit returns the audit log at path (created on first write).
func OpenAudit(path string) *Audit { return &Audit{path: path} }

// Write appends one entry as one line.
func (a *Audit) Write(e AuditEntry) error {
	if a == nil {
		return nil
	}
	if e.TS.IsZero() {
		e.TS = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(a.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// Read returns the last n entries.
func (a *Audit) Read(n int) []AuditEntry {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	data, _ := os.ReadFile(a.path)
	a.mu.Unlock()
	var out []AuditEntry
	for _, line := range strings.Split(string(data), "\n") {
		var e AuditEntry
		if json.Unmarshal([]byte(line), &e) == nil && e.Action != "" {
			out = append(out, e)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
