package fakegithub

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"
)

// Sign is the X-Hub-Signature-256 of a delivery's body, as GitHub signs
// it: "sha256=" and the hex HMAC-SHA256 of the body under the secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Delivery is one webhook delivery.
type Delivery struct {
	ID    string // X-GitHub-Delivery
	Event string // X-GitHub-Event: issues, issue_comment, pull_request_review, check_suite …
	Body  []byte // the JSON payload
}

// Deliver posts d to url signed with secret, as GitHub does, and returns
// the status of the answer.
func Deliver(url, secret string, d Delivery) (int, error) {
	req, err := http.NewRequest("POST", url, bytes.NewReader(d.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.ID)
	req.Header.Set("X-Hub-Signature-256", Sign(secret, d.Body))
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("deliver %s: %v", d.ID, err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
