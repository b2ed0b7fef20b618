package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// graphql is the part of GitHub's GraphQL API the engine uses: a pull
// request's review threads (each named by its first comment), and the
// mutation that resolves one. Other queries get GraphQL's error answer.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if !s.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if !decode(w, r, &in) {
		return
	}
	str := func(k string) string { v, _ := in.Variables[k].(string); return v }
	fail := func(msg string) {
		writeJSON(w, 200, map[string]any{"data": nil, "errors": []map[string]any{{"message": msg}}})
	}
	switch {
	case strings.Contains(in.Query, "resolveReviewThread"):
		id, ok := strings.CutPrefix(str("threadId"), "PRRT_")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			fail("Could not resolve to a node with the global id of '" + str("threadId") + "'")
			return
		}
		for _, repo := range s.repos {
			for _, is := range repo.Issues {
				if is.Pull == nil {
					continue
				}
				for i := range is.Pull.ReviewComments {
					if c := &is.Pull.ReviewComments[i]; c.ID == n && c.InReplyTo == 0 {
						c.Resolved = true
						writeJSON(w, 200, map[string]any{"data": map[string]any{"resolveReviewThread": map[string]any{"thread": map[string]any{"id": str("threadId"), "isResolved": true}}}})
						return
					}
				}
			}
		}
		fail("Could not resolve to a node with the global id of '" + str("threadId") + "'")
	case strings.Contains(in.Query, "reviewThreads"):
		repo := s.repos[str("owner")+"/"+str("name")]
		num, _ := in.Variables["number"].(json.Number)
		nf, _ := in.Variables["number"].(float64)
		n := int(nf)
		if num != "" {
			i, _ := num.Int64()
			n = int(i)
		}
		if repo == nil || repo.Issues[n] == nil || repo.Issues[n].Pull == nil {
			fail(fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", n))
			return
		}
		nodes := []map[string]any{}
		for _, c := range repo.Issues[n].Pull.ReviewComments {
			if c.InReplyTo != 0 {
				continue
			}
			nodes = append(nodes, map[string]any{"id": fmt.Sprintf("PRRT_%d", c.ID), "isResolved": c.Resolved,
				"comments": map[string]any{"nodes": []map[string]any{{"databaseId": c.ID}}}})
		}
		writeJSON(w, 200, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"reviewThreads": map[string]any{"nodes": nodes}}}}})
	default:
		fail("this fake answers the review threads query and resolveReviewThread only")
	}
}
