// Package github is the forge.Forge of a repository on GitHub or GitHub
// Enterprise, over GitHub's REST API (v3, version 2022-11-28) through
// github.com/google/go-github (rest.go), and GraphQL for what REST cannot
// (review.go: resolving a review thread).
//
// Every request carries the token in its Authorization header only, and
// only to the API's own origin; no error, URL or log line holds it. Every
// answer read is bounded (maxBody).
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
	"strings"
	"time"

	gh "github.com/google/go-github/v93/github"

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
	// HTTP sends the GraphQL requests (with the token) and reads job logs
	// at their signed links (without it).
	HTTP *http.Client
	// rest is go-github's client of the same API (rest.go).
	rest *gh.Client
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
	c := &Client{api: u, owner: owner, name: name, token: token, HTTP: &http.Client{Timeout: 60 * time.Second, Transport: bounded{http.DefaultTransport}}}
	c.Remote = WebURL(u) + "/" + owner + "/" + name + ".git"
	if c.rest, err = restClient(u, token); err != nil {
		return nil, err
	}
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

// Push pushes src of the repository in dir to branch of c.Remote with the
// token, through the engine's credential helper.
func (c *Client) Push(ctx context.Context, dir, src, branch string) error {
	return forge.GitPush(ctx, forge.Push{Dir: dir, Remote: c.Remote, Src: src, Branch: branch, User: "x-access-token", Token: c.token})
}
