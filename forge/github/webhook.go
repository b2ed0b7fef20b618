package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxDelivery bounds a webhook delivery's body (GitHub caps them at 25
// MB; the events the engine reads are a few KB).
const maxDelivery = 5 << 20

// maxDeliveryID bounds an X-GitHub-Delivery id (GitHub's are GUIDs).
const maxDeliveryID = 200

// Signature errors.
var (
	ErrUnsigned  = errors.New("the delivery is not signed (no X-Hub-Signature-256)")
	ErrSignature = errors.New("the delivery's signature does not match the secret")
	ErrReplayed  = errors.New("the delivery was received before (a replay)")
)

// Verify checks a delivery's X-Hub-Signature-256 header against body
// under secret, as GitHub signs: "sha256=" and the hex HMAC-SHA256 of the
// body. The comparison takes the same time whatever matches.
func Verify(secret, body []byte, header string) error {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if header == "" {
		return ErrUnsigned
	}
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil {
		return ErrSignature
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	if len(secret) == 0 || !hmac.Equal(got, m.Sum(nil)) {
		return ErrSignature
	}
	return nil
}

// Event is a verified delivery, as the engine reads it.
type Event struct {
	Delivery string // X-GitHub-Delivery
	Kind     string // X-GitHub-Event: issues, issue_comment, pull_request_review, check_suite …
	Action   string // labeled, created, submitted, completed …
	Repo     string // OWNER/NAME
	Sender   string
	// Association is the author's of the issue or comment.
	Association string
	Issue       int
	Label       string
	Comment     string
	// Head is the branch of the pull request a review or a check suite
	// is about.
	Head string
}

// Webhook is the handler of GitHub's deliveries: it refuses any delivery
// whose signature does not match Secret (401) or whose id was seen before
// (409), and hands the others to On (202; a 400 with On's error). Reply,
// when set, is used instead of On: its message is the answer's body.
type Webhook struct {
	Secret []byte
	Seen   *Seen
	On     func(Event) error
	Reply  func(Event) (string, error)
}

func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxDelivery+1))
	if err != nil || len(body) > maxDelivery {
		http.Error(w, "the delivery is too large or could not be read", http.StatusRequestEntityTooLarge)
		return
	}
	if err := Verify(h.Secret, body, r.Header.Get("X-Hub-Signature-256")); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	id := r.Header.Get("X-GitHub-Delivery")
	if id == "" {
		http.Error(w, "no X-GitHub-Delivery", http.StatusBadRequest)
		return
	}
	// Checked after the signature: an unsigned request cannot use up an
	// id.
	if len(id) > maxDeliveryID {
		http.Error(w, "the X-GitHub-Delivery id is too long", http.StatusBadRequest)
		return
	}
	switch fresh, err := h.Seen.Take(id); {
	case err != nil:
		// Not kept across a restart, it could be replayed then: refused,
		// and forgotten, so that GitHub's redelivery is taken once it can be.
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	case !fresh:
		http.Error(w, ErrReplayed.Error(), http.StatusConflict)
		return
	}
	ev, err := ParseEvent(r.Header.Get("X-GitHub-Event"), id, body)
	msg := ""
	switch {
	case err != nil:
	case h.Reply != nil:
		msg, err = h.Reply(ev)
	case h.On != nil:
		err = h.On(ev)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	if msg != "" {
		fmt.Fprintln(w, msg)
	}
}

// ParseEvent reads the fields the engine uses from a delivery's payload.
func ParseEvent(kind, id string, body []byte) (Event, error) {
	var p struct {
		Action string `json:"action"`
		Repo   struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Sender user `json:"sender"`
		Issue  *struct {
			Number      int    `json:"number"`
			Association string `json:"author_association"`
		} `json:"issue"`
		Label   *label `json:"label"`
		Comment *struct {
			Body        string `json:"body"`
			Association string `json:"author_association"`
		} `json:"comment"`
		Review *struct {
			Association string `json:"author_association"`
		} `json:"review"`
		Pull *struct {
			Head struct {
				Ref string `json:"ref"`
			} `json:"head"`
		} `json:"pull_request"`
		Suite *struct {
			Branch string `json:"head_branch"`
		} `json:"check_suite"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return Event{}, fmt.Errorf("the payload is not JSON: %v", err)
	}
	ev := Event{Delivery: id, Kind: kind, Action: p.Action, Repo: p.Repo.FullName, Sender: p.Sender.Login}
	if p.Issue != nil {
		ev.Issue, ev.Association = p.Issue.Number, p.Issue.Association
	}
	if p.Label != nil {
		ev.Label = p.Label.Name
	}
	if p.Comment != nil {
		ev.Comment, ev.Association = p.Comment.Body, p.Comment.Association
	}
	if p.Review != nil {
		ev.Association = p.Review.Association
	}
	if p.Pull != nil {
		ev.Head = p.Pull.Head.Ref
	}
	if p.Suite != nil {
		ev.Head = p.Suite.Branch
	}
	return ev, nil
}
