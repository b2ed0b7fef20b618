package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	gh "github.com/google/go-github/v93/github"

	"github.com/looprinter/looprinter/forge"
)

// restClient is go-github's client of the API at api (its URL as given:
// no /api/v3 is added), with token when there is one, bounded answers
// and a timeout.
func restClient(api *url.URL, token string) (*gh.Client, error) {
	base := api.String()
	opts := []gh.ClientOptionsFunc{
		gh.WithHTTPClient(&http.Client{Timeout: 60 * time.Second}),
		gh.WithTransport(bounded{http.DefaultTransport}),
		gh.WithURLs(&base, &base),
		gh.WithUserAgent("looprinter"),
	}
	if token != "" {
		opts = append(opts, gh.WithAuthToken(token))
	}
	return gh.NewClient(opts...)
}

// bounded cuts every answer's body at maxBody.
type bounded struct{ next http.RoundTripper }

func (b bounded) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = limitedBody{io.LimitReader(resp.Body, maxBody), resp.Body}
	}
	return resp, err
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// apiError is err as this package's *Error: the method, the path, the
// status and GitHub's message, without the URL's host or query.
func apiError(method, path string, err error) error {
	if err == nil {
		return nil
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		msg := er.Message
		if msg == "" {
			msg = http.StatusText(er.Response.StatusCode)
		}
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return &Error{Method: method, Path: path, Status: er.Response.StatusCode, Message: msg}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("GitHub %s %s: %v", method, path, err)
}

func (c *Client) repoPath(rest string) string { return "repos/" + c.owner + "/" + c.name + "/" + rest }

// DefaultBranch is the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	r, _, err := c.rest.Repositories.Get(ctx, c.owner, c.name)
	if err != nil {
		return "", apiError("GET", "repos/"+c.owner+"/"+c.name, err)
	}
	if r.GetDefaultBranch() == "" {
		return "", fmt.Errorf("GitHub: %s names no default branch", c.Repo())
	}
	return r.GetDefaultBranch(), nil
}

// Issue reads issue n.
func (c *Client) Issue(ctx context.Context, n int) (forge.Issue, error) {
	is, _, err := c.rest.Issues.Get(ctx, c.owner, c.name, n)
	if err != nil {
		return forge.Issue{}, apiError("GET", c.repoPath(fmt.Sprintf("issues/%d", n)), err)
	}
	return issueOf(is), nil
}

// OpenIssues are the open issues with label, oldest first (the first 100).
func (c *Client) OpenIssues(ctx context.Context, label string) ([]forge.Issue, error) {
	iss, _, err := c.rest.Issues.ListByRepo(ctx, c.owner, c.name, &gh.IssueListByRepoOptions{State: "open", Labels: []string{label},
		Sort: "created", Direction: "asc", ListOptions: gh.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, apiError("GET", c.repoPath("issues"), err)
	}
	var out []forge.Issue
	for _, is := range iss {
		out = append(out, issueOf(is))
	}
	return out, nil
}

func issueOf(is *gh.Issue) forge.Issue {
	out := forge.Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), State: is.GetState(), Author: is.GetUser().GetLogin(),
		Association: is.GetAuthorAssociation(), URL: is.GetHTMLURL(), IsPull: is.IsPullRequest()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

// Comment writes a comment on issue (or pull request) n.
func (c *Client) Comment(ctx context.Context, n int, body string) (forge.Comment, error) {
	cm, _, err := c.rest.Issues.CreateComment(ctx, c.owner, c.name, n, gh.IssueCommentRequest{Body: body})
	if err != nil {
		return forge.Comment{}, apiError("POST", c.repoPath(fmt.Sprintf("issues/%d/comments", n)), err)
	}
	return forge.Comment{ID: cm.GetID(), Author: cm.GetUser().GetLogin(), Association: cm.GetAuthorAssociation(), Body: cm.GetBody(), URL: cm.GetHTMLURL()}, nil
}

// AddLabels adds labels to issue n (GitHub makes a label that does not
// exist yet).
func (c *Client) AddLabels(ctx context.Context, n int, labels ...string) error {
	_, _, err := c.rest.Issues.AddLabelsToIssue(ctx, c.owner, c.name, n, labels)
	return apiError("POST", c.repoPath(fmt.Sprintf("issues/%d/labels", n)), err)
}

// RemoveLabel takes label off issue n; a label it does not have is no
// error.
func (c *Client) RemoveLabel(ctx context.Context, n int, name string) error {
	_, err := c.rest.Issues.RemoveLabelForIssue(ctx, c.owner, c.name, n, name)
	err = apiError("DELETE", c.repoPath(fmt.Sprintf("issues/%d/labels/%s", n, url.PathEscape(name))), err)
	if NotFound(err) {
		return nil
	}
	return err
}

func pullOf(p *gh.PullRequest) forge.PullRequest {
	return forge.PullRequest{Number: p.GetNumber(), Title: p.GetTitle(), Body: p.GetBody(), Head: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(),
		Base: p.GetBase().GetRef(), Draft: p.GetDraft(), State: p.GetState(), URL: p.GetHTMLURL()}
}

// FindPull is the open pull request whose head is branch of this
// repository, or nil.
func (c *Client) FindPull(ctx context.Context, head string) (*forge.PullRequest, error) {
	ps, _, err := c.rest.PullRequests.List(ctx, c.owner, c.name, &gh.PullRequestListOptions{State: "open", Head: c.owner + ":" + head})
	if err != nil {
		return nil, apiError("GET", c.repoPath("pulls"), err)
	}
	for _, p := range ps {
		if p.GetHead().GetRef() == head {
			o := pullOf(p)
			return &o, nil
		}
	}
	return nil, nil
}

// CreatePull opens a pull request.
func (c *Client) CreatePull(ctx context.Context, in forge.PullInput) (forge.PullRequest, error) {
	p, _, err := c.rest.PullRequests.Create(ctx, c.owner, c.name, gh.CreatePullRequest{Title: gh.Ptr(in.Title), Body: gh.Ptr(in.Body),
		Head: in.Head, Base: in.Base, Draft: gh.Ptr(in.Draft)})
	if err != nil {
		return forge.PullRequest{}, apiError("POST", c.repoPath("pulls"), err)
	}
	return pullOf(p), nil
}

// UpdatePull writes the title and body of pull request n (its draft
// state is GitHub's to change: the REST API cannot mark a draft ready).
func (c *Client) UpdatePull(ctx context.Context, n int, in forge.PullInput) (forge.PullRequest, error) {
	p, _, err := c.rest.PullRequests.Edit(ctx, c.owner, c.name, n, &gh.PullRequest{Title: gh.Ptr(in.Title), Body: gh.Ptr(in.Body)})
	if err != nil {
		return forge.PullRequest{}, apiError("PATCH", c.repoPath(fmt.Sprintf("pulls/%d", n)), err)
	}
	return pullOf(p), nil
}

// Checks are the check runs and the commit statuses of sha.
func (c *Client) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	runs, _, err := c.rest.Checks.ListCheckRunsForRef(ctx, c.owner, c.name, sha, &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, apiError("GET", c.repoPath("commits/"+url.PathEscape(sha)+"/check-runs"), err)
	}
	var out []forge.Check
	for _, r := range runs.CheckRuns {
		state := r.GetStatus()
		if state == "completed" {
			state = r.GetConclusion()
		}
		out = append(out, forge.Check{ID: r.GetID(), Name: r.GetName(), State: state, URL: r.GetHTMLURL()})
	}
	st, _, err := c.rest.Repositories.GetCombinedStatus(ctx, c.owner, c.name, sha, nil)
	if err != nil {
		return nil, apiError("GET", c.repoPath("commits/"+url.PathEscape(sha)+"/status"), err)
	}
	for _, s := range st.Statuses {
		out = append(out, forge.Check{ID: s.GetID(), Name: s.GetContext(), State: s.GetState(), URL: s.GetTargetURL(), Status: true})
	}
	return out, nil
}

// JobLog is the log of an Actions job (a check run's id is its job's):
// the API answers with a redirect to the log, fetched without the token
// (the link is signed; the token stays with the API's origin).
func (c *Client) JobLog(ctx context.Context, id int64) (string, error) {
	path := c.repoPath(fmt.Sprintf("actions/jobs/%d/logs", id))
	u, _, err := c.rest.Actions.GetWorkflowJobLogs(ctx, c.owner, c.name, id, 1)
	if err != nil {
		return "", apiError("GET", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("GitHub GET %s: the log's link: %v", path, err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", apiError("GET", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", apiError("GET", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", &Error{Method: "GET", Path: path, Status: resp.StatusCode, Message: "the log: " + http.StatusText(resp.StatusCode)}
	}
	return string(data), nil
}

// ReviewComments are the comments on the lines of pull request n.
func (c *Client) ReviewComments(ctx context.Context, n int) ([]forge.ReviewComment, error) {
	rs, _, err := c.rest.PullRequests.ListComments(ctx, c.owner, c.name, n, &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, apiError("GET", c.repoPath(fmt.Sprintf("pulls/%d/comments", n)), err)
	}
	var out []forge.ReviewComment
	for _, r := range rs {
		out = append(out, forge.ReviewComment{ID: r.GetID(), Author: r.GetUser().GetLogin(), Association: r.GetAuthorAssociation(),
			Path: r.GetPath(), Line: r.GetLine(), Body: r.GetBody(), InReplyTo: r.GetInReplyTo()})
	}
	return out, nil
}
