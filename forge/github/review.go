package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// ReplyReview answers review comment id of pull request n in its thread.
func (c *Client) ReplyReview(ctx context.Context, n int, id int64, body string) error {
	_, _, err := c.rest.PullRequests.CreateCommentInReplyTo(ctx, c.owner, c.name, n, body, id)
	return apiError("POST", c.repoPath("pulls/"+strconv.Itoa(n)+"/comments"), err)
}

// graphqlPath is the GraphQL endpoint beside the REST API: /graphql for
// api.github.com, /api/graphql for an Enterprise server's /api/v3.
func (c *Client) graphqlPath() string {
	if strings.HasSuffix(c.api.Path, "/api/v3/") {
		return "../graphql"
	}
	return "graphql"
}

const threadsQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100) {
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}`

const resolveMutation = `mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}`

// graphql sends one GraphQL request; an answer with errors is an error.
func (c *Client) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	var res struct {
		Data   any `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	res.Data = out
	if err := c.do(ctx, "POST", c.graphqlPath(), map[string]any{"query": query, "variables": vars}, &res); err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("GitHub GraphQL: %s", res.Errors[0].Message)
	}
	return nil
}

// ResolveThread resolves the review thread that review comment id of
// pull request n started (GraphQL's resolveReviewThread: the REST API
// has no way to). A thread resolved already is left as it is.
func (c *Client) ResolveThread(ctx context.Context, n int, id int64) error {
	var data struct {
		Repository struct {
			PullRequest struct {
				ReviewThreads struct {
					Nodes []struct {
						ID         string `json:"id"`
						IsResolved bool   `json:"isResolved"`
						Comments   struct {
							Nodes []struct {
								DatabaseID int64 `json:"databaseId"`
							} `json:"nodes"`
						} `json:"comments"`
					} `json:"nodes"`
				} `json:"reviewThreads"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	if err := c.graphql(ctx, threadsQuery, map[string]any{"owner": c.owner, "name": c.name, "number": n}, &data); err != nil {
		return err
	}
	for _, t := range data.Repository.PullRequest.ReviewThreads.Nodes {
		if len(t.Comments.Nodes) == 0 || t.Comments.Nodes[0].DatabaseID != id {
			continue
		}
		if t.IsResolved {
			return nil
		}
		return c.graphql(ctx, resolveMutation, map[string]any{"threadId": t.ID}, nil)
	}
	return fmt.Errorf("GitHub: no review thread of %s#%d starts with comment %d", c.Repo(), n, id)
}
