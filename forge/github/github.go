// Package github is the forge.Forge of a repository on GitHub or GitHub
// Enterprise, over GitHub's REST API (v3, version 2022-11-28).
//
// The client is a small one on net/http: the Go module proxy this project
// builds from does not serve github.com/google/go-github, and the engine
// needs a dozen endpoints. Every request carries the token in its
// Authorization header only; no error, URL or log line holds it.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/forge"
)

// DefaultAPI is github.com's API.
const DefaultAPI = "https://api.github.com/"

// maxBody bounds every answer read (a job log is cut to its end).
const maxBody = 8 << 20

// Client is one repository on GitHub.
type Client struct {
	api         *url.URL // ends in "/"
	owner, name string
	token       string
	// Remote is where Push pushes: the repository's https URL, or what
	// the loop file names (a path, for tests).
	Remote string
	HTTP   *http.Client
}

var _ forge.Forge = (*Client)(nil)

// New is the client of repo (OWNER/NAME) on the API at base ("" for
// github.com; https://HOST/api/v3 for an Enterprise server), with token.
func New(repo, base, token string) (*Client, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("repo %q: want OWNER/NAME", repo)
	}
	if base == "" {
		base = DefaultAPI
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q: want an https URL of the API", base)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c := &Client{api: u, owner: owner, name: name, token: token, HTTP: &http.Client{Timeout: 60 * time.Second}}
	c.Remote = WebURL(u) + "/" + owner + "/" + name + ".git"
	return c, nil
}

// Host is the host the token is for: github.com for its API, else the
// Enterprise server's host.
func Host(base string) string {
	if base == "" {
		return "github.com"
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.Host == "api.github.com" {
		return "github.com"
	}
	return u.Host
}

// WebURL is the web (and git) root of the API at u: https://github.com
// for api.github.com, the server itself for an Enterprise API.
func WebURL(u *url.URL) string {
	if u.Host == "api.github.com" {
		return "https://github.com"
	}
	return u.Scheme + "://" + u.Host
}

func (c *Client) Kind() string { return "github" }
func (c *Client) Repo() string { return c.owner + "/" + c.name }

// Error is an answer of the API that is not a success.
type Error struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("GitHub %s %s: %d %s", e.Method, e.Path, e.Status, e.Message)
}

// NotFound says whether err is a 404.
func NotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// do sends one request to path (under the repository when it starts with
// "repo/"), with in as its JSON body, and decodes the answer into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	raw, err := c.raw(ctx, method, path, in)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("GitHub %s %s: the answer is not the JSON expected: %v", method, path, err)
	}
	return nil
}

func (c *Client) raw(ctx context.Context, method, path string, in any) ([]byte, error) {
	if rest, ok := strings.CutPrefix(path, "repo/"); ok {
		path = "repos/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.name) + "/" + rest
	}
	u, err := c.api.Parse(path)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "looprinter")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// url.Error names the URL, which holds no credential.
		return nil, fmt.Errorf("GitHub %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("GitHub %s %s: %v", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var m struct {
			Message string `json:"message"`
		}
		json.Unmarshal(data, &m)
		if m.Message == "" {
			m.Message = http.StatusText(resp.StatusCode)
		}
		if len(m.Message) > 300 {
			m.Message = m.Message[:300]
		}
		return nil, &Error{Method: method, Path: path, Status: resp.StatusCode, Message: m.Message}
	}
	return data, nil
}

type user struct {
	Login string `json:"login"`
}

type label struct {
	Name string `json:"name"`
}

type issue struct {
	Number      int       `json:"number"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	User        user      `json:"user"`
	Association string    `json:"author_association"`
	Labels      []label   `json:"labels"`
	HTMLURL     string    `json:"html_url"`
	PullRequest *struct{} `json:"pull_request"`
}

// DefaultBranch is the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	var r struct {
		DefaultBranch string `json:"default_branch"`
	}
	if err := c.do(ctx, "GET", "repos/"+url.PathEscape(c.owner)+"/"+url.PathEscape(c.name), nil, &r); err != nil {
		return "", err
	}
	if r.DefaultBranch == "" {
		return "", fmt.Errorf("GitHub: %s names no default branch", c.Repo())
	}
	return r.DefaultBranch, nil
}

// Issue reads issue n.
func (c *Client) Issue(ctx context.Context, n int) (forge.Issue, error) {
	var is issue
	if err := c.do(ctx, "GET", "repo/issues/"+strconv.Itoa(n), nil, &is); err != nil {
		return forge.Issue{}, err
	}
	return is.forge(), nil
}

// OpenIssues are the open issues with label, oldest first (the first 100).
func (c *Client) OpenIssues(ctx context.Context, label string) ([]forge.Issue, error) {
	var iss []issue
	q := url.Values{"state": {"open"}, "labels": {label}, "sort": {"created"}, "direction": {"asc"}, "per_page": {"100"}}
	if err := c.do(ctx, "GET", "repo/issues?"+q.Encode(), nil, &iss); err != nil {
		return nil, err
	}
	var out []forge.Issue
	for _, is := range iss {
		out = append(out, is.forge())
	}
	return out, nil
}

func (is issue) forge() forge.Issue {
	out := forge.Issue{Number: is.Number, Title: is.Title, Body: is.Body, State: is.State, Author: is.User.Login,
		Association: is.Association, URL: is.HTMLURL, IsPull: is.PullRequest != nil}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	return out
}

type comment struct {
	ID          int64  `json:"id"`
	User        user   `json:"user"`
	Association string `json:"author_association"`
	Body        string `json:"body"`
	HTMLURL     string `json:"html_url"`
}

// Comment writes a comment on issue (or pull request) n.
func (c *Client) Comment(ctx context.Context, n int, body string) (forge.Comment, error) {
	var cm comment
	if err := c.do(ctx, "POST", "repo/issues/"+strconv.Itoa(n)+"/comments", map[string]string{"body": body}, &cm); err != nil {
		return forge.Comment{}, err
	}
	return forge.Comment{ID: cm.ID, Author: cm.User.Login, Association: cm.Association, Body: cm.Body, URL: cm.HTMLURL}, nil
}

// AddLabels adds labels to issue n (GitHub makes a label that does not
// exist yet).
func (c *Client) AddLabels(ctx context.Context, n int, labels ...string) error {
	return c.do(ctx, "POST", "repo/issues/"+strconv.Itoa(n)+"/labels", map[string][]string{"labels": labels}, nil)
}

// RemoveLabel takes label off issue n; a label it does not have is no
// error.
func (c *Client) RemoveLabel(ctx context.Context, n int, name string) error {
	err := c.do(ctx, "DELETE", "repo/issues/"+strconv.Itoa(n)+"/labels/"+url.PathEscape(name), nil, nil)
	if NotFound(err) {
		return nil
	}
	return err
}

type pull struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	State   string `json:"state"`
	Draft   bool   `json:"draft"`
	HTMLURL string `json:"html_url"`
	Head    struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

func (p pull) out() forge.PullRequest {
	return forge.PullRequest{Number: p.Number, Title: p.Title, Body: p.Body, Head: p.Head.Ref, HeadSHA: p.Head.SHA,
		Base: p.Base.Ref, Draft: p.Draft, State: p.State, URL: p.HTMLURL}
}

// FindPull is the open pull request whose head is branch of this
// repository, or nil.
func (c *Client) FindPull(ctx context.Context, head string) (*forge.PullRequest, error) {
	var ps []pull
	q := url.Values{"state": {"open"}, "head": {c.owner + ":" + head}}
	if err := c.do(ctx, "GET", "repo/pulls?"+q.Encode(), nil, &ps); err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Head.Ref == head {
			o := p.out()
			return &o, nil
		}
	}
	return nil, nil
}

// CreatePull opens a pull request.
func (c *Client) CreatePull(ctx context.Context, in forge.PullInput) (forge.PullRequest, error) {
	var p pull
	body := map[string]any{"title": in.Title, "body": in.Body, "head": in.Head, "base": in.Base, "draft": in.Draft}
	if err := c.do(ctx, "POST", "repo/pulls", body, &p); err != nil {
		return forge.PullRequest{}, err
	}
	return p.out(), nil
}

// UpdatePull writes the title and body of pull request n (its draft
// state is GitHub's to change: the REST API cannot mark a draft ready).
func (c *Client) UpdatePull(ctx context.Context, n int, in forge.PullInput) (forge.PullRequest, error) {
	var p pull
	body := map[string]any{"title": in.Title, "body": in.Body}
	if err := c.do(ctx, "PATCH", "repo/pulls/"+strconv.Itoa(n), body, &p); err != nil {
		return forge.PullRequest{}, err
	}
	return p.out(), nil
}

// Checks are the check runs and the commit statuses of sha.
func (c *Client) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	var runs struct {
		CheckRuns []struct {
			ID         int64  `json:"id"`
			Name       string `json:"name"`
			Status     string `json:"status"`
			Conclusion string `json:"conclusion"`
			HTMLURL    string `json:"html_url"`
		} `json:"check_runs"`
	}
	ref := url.PathEscape(sha)
	if err := c.do(ctx, "GET", "repo/commits/"+ref+"/check-runs?per_page=100", nil, &runs); err != nil {
		return nil, err
	}
	var out []forge.Check
	for _, r := range runs.CheckRuns {
		state := r.Status
		if r.Status == "completed" {
			state = r.Conclusion
		}
		out = append(out, forge.Check{ID: r.ID, Name: r.Name, State: state, URL: r.HTMLURL})
	}
	var st struct {
		Statuses []struct {
			ID        int64  `json:"id"`
			Context   string `json:"context"`
			State     string `json:"state"`
			TargetURL string `json:"target_url"`
		} `json:"statuses"`
	}
	if err := c.do(ctx, "GET", "repo/commits/"+ref+"/status", nil, &st); err != nil {
		return nil, err
	}
	for _, s := range st.Statuses {
		out = append(out, forge.Check{ID: s.ID, Name: s.Context, State: s.State, URL: s.TargetURL, Status: true})
	}
	return out, nil
}

// JobLog is the log of an Actions job (a check run's id is its job's).
func (c *Client) JobLog(ctx context.Context, id int64) (string, error) {
	b, err := c.raw(ctx, "GET", "repo/actions/jobs/"+strconv.FormatInt(id, 10)+"/logs", nil)
	return string(b), err
}

// ReviewComments are the comments on the lines of pull request n.
func (c *Client) ReviewComments(ctx context.Context, n int) ([]forge.ReviewComment, error) {
	var rs []struct {
		ID          int64  `json:"id"`
		User        user   `json:"user"`
		Association string `json:"author_association"`
		Path        string `json:"path"`
		Line        int    `json:"line"`
		Body        string `json:"body"`
		InReplyTo   int64  `json:"in_reply_to_id"`
	}
	if err := c.do(ctx, "GET", "repo/pulls/"+strconv.Itoa(n)+"/comments?per_page=100", nil, &rs); err != nil {
		return nil, err
	}
	var out []forge.ReviewComment
	for _, r := range rs {
		out = append(out, forge.ReviewComment{ID: r.ID, Author: r.User.Login, Association: r.Association, Path: r.Path, Line: r.Line, Body: r.Body, InReplyTo: r.InReplyTo})
	}
	return out, nil
}

// Push pushes src of the repository in dir to branch of c.Remote with the
// token, through the engine's credential helper.
func (c *Client) Push(ctx context.Context, dir, src, branch string) error {
	return forge.GitPush(ctx, forge.Push{Dir: dir, Remote: c.Remote, Src: src, Branch: branch, User: "x-access-token", Token: c.token})
}
