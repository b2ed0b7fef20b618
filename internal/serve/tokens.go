package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/looprinter/looprinter/loopdir"
)

// Token scopes. A read token may read everything (and is needed for that
// when the server listens on a non-loopback address); an admin token may
// also act: pause, resume, stop, answer, guide.
const (
	ScopeRead  = "read"
	ScopeAdmin = "admin"
)

// tokenPrefix starts every token, so a token is easy to recognize (and to
// redact) wherever it is pasted.
const tokenPrefix = "lpt_"

// tokenRecord is one token as the token file keeps it: its id (named in
// the audit log) and the SHA-256 of its secret, never the secret itself.
type tokenRecord struct {
	ID      string    `json:"id"`
	Scope   string    `json:"scope"`
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
}

type tokenFile struct {
	Tokens []tokenRecord `json:"tokens"`
	// CSRFKey signs the CSRF tokens of the dashboard's forms.
	CSRFKey string `json:"csrf_key"`
}

// Tokens is the token file: $LOOPRINTER_STATE_DIR/serve/tokens.json, mode
// 0600 in a 0700 folder. A running server re-reads it when it changes, so
// `serve --rotate-token` takes effect at once.
type Tokens struct {
	path string

	mu    sync.Mutex
	file  tokenFile
	mtime time.Time
	size  int64
}

// DefaultTokenPath is where serve keeps its tokens.
func DefaultTokenPath() string { return filepath.Join(loopdir.StateRoot(), "serve", "tokens.json") }

// OpenTokens reads the token file at path. When it does not exist, or holds
// no admin token, it creates one and returns it (the only time it is ever
// shown); otherwise created is "".
func OpenTokens(path string) (t *Tokens, created string, err error) {
	t = &Tokens{path: path}
	if err := t.load(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	has := false
	for _, r := range t.file.Tokens {
		has = has || r.Scope == ScopeAdmin
	}
	if has && t.file.CSRFKey != "" {
		return t, "", nil
	}
	if !has {
		created = t.addLocked(ScopeAdmin)
	}
	if t.file.CSRFKey == "" {
		t.file.CSRFKey = randText(32)
	}
	return t, created, t.saveLocked()
}

// Rotate revokes every token (admin and read) and the CSRF key, and returns
// a new admin token.
func (t *Tokens) Rotate() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.file = tokenFile{CSRFKey: randText(32)}
	tok := t.addLocked(ScopeAdmin)
	return tok, t.saveLocked()
}

// AddRead creates a read-only token and returns it.
func (t *Tokens) AddRead() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reloadLocked()
	tok := t.addLocked(ScopeRead)
	return tok, t.saveLocked()
}

func (t *Tokens) addLocked(scope string) string {
	id := hex.EncodeToString(randBytes(4))
	secret := randText(32)
	sum := sha256.Sum256([]byte(secret))
	t.file.Tokens = append(t.file.Tokens, tokenRecord{ID: id, Scope: scope, SHA256: hex.EncodeToString(sum[:]), Created: time.Now().UTC()})
	return tokenPrefix + id + "_" + secret
}

// Check returns the token's id and scope when tok is a valid token.
func (t *Tokens) Check(tok string) (id, scope string, ok bool) {
	rest, found := strings.CutPrefix(tok, tokenPrefix)
	if !found {
		return "", "", false
	}
	id, secret, found := strings.Cut(rest, "_")
	if !found || id == "" || secret == "" {
		return "", "", false
	}
	sum := sha256.Sum256([]byte(secret))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reloadLocked()
	for _, r := range t.file.Tokens {
		want, err := hex.DecodeString(r.SHA256)
		if err != nil || r.ID != id {
			continue
		}
		if subtle.ConstantTimeCompare(want, sum[:]) == 1 {
			return r.ID, r.Scope, true
		}
	}
	return "", "", false
}

// CSRF is the CSRF token of a dashboard session: an HMAC of its token's id
// under the file's CSRF key, so it changes when the tokens are rotated.
func (t *Tokens) CSRF(tokenID string) string {
	t.mu.Lock()
	key := t.file.CSRFKey
	t.mu.Unlock()
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte("csrf\x00" + tokenID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF says whether got is the CSRF token of tokenID's session.
func (t *Tokens) CheckCSRF(tokenID, got string) bool {
	if got == "" {
		return false
	}
	return hmac.Equal([]byte(t.CSRF(tokenID)), []byte(got))
}

func (t *Tokens) load() error {
	data, err := os.ReadFile(t.path)
	if err != nil {
		return err
	}
	var f tokenFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%s: %w (remove it, or run `looprinter serve --rotate-token`)", t.path, err)
	}
	if fi, err := os.Stat(t.path); err == nil {
		if fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%s is readable by others (mode %o): its tokens must be treated as leaked; run `looprinter serve --rotate-token`", t.path, fi.Mode().Perm())
		}
		t.mtime, t.size = fi.ModTime(), fi.Size()
	}
	t.file = f
	return nil
}

// reloadLocked re-reads the file when it changed on disk (another serve
// rotated the tokens). A file that is gone, unreadable or readable by
// others revokes every token.
func (t *Tokens) reloadLocked() {
	fi, err := os.Stat(t.path)
	if err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.file.Tokens = nil
		t.mtime = time.Time{}
		return
	}
	if fi.ModTime().Equal(t.mtime) && fi.Size() == t.size {
		return
	}
	if err := t.load(); err != nil {
		t.file.Tokens = nil
	}
}

func (t *Tokens) saveLocked() error {
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	os.Chmod(filepath.Dir(t.path), 0o700)
	data, err := json.MarshalIndent(t.file, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), ".tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), t.path); err != nil {
		return err
	}
	if fi, err := os.Stat(t.path); err == nil {
		t.mtime, t.size = fi.ModTime(), fi.Size()
	}
	return nil
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

func randText(n int) string { return base64.RawURLEncoding.EncodeToString(randBytes(n)) }
