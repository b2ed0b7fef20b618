// Package fakegithub is a fake GitHub REST API on 127.0.0.1, for the tests
// of forge/github and of `looprinter run --issue` (like internal/fakeapi
// for the model APIs): issues, comments, labels, pull requests, reviews
// and review comments, check runs, commit statuses and job logs, in
// memory, with GitHub's JSON shapes and answers (401 without the token,
// 404, 422 on a second pull request from the same head). Webhook
// deliveries are signed as GitHub signs them (webhook.go).
//
// Routes are served at the root (as api.github.com) and under /api/v3 (as
// an Enterprise server).
package fakegithub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Issue is an issue (or a pull request's issue side) as the fake holds it.
type Issue struct {
	Number      int
	Title, Body string
	State       string
	Author      string
	Association string
	Labels      []string
	Comments    []Comment
	Pull        *Pull // set for a pull request
}

// Comment is an issue comment.
type Comment struct {
	ID          int64
	Author      string
	Association string
	Body        string
}

// Pull is a pull request.
type Pull struct {
	Head, Base, HeadSHA string
	Draft               bool
	Reviews             []Review
	ReviewComments      []ReviewComment
}

// Review is a submitted review.
type Review struct {
	ID     int64
	Author string
	State  string // APPROVED, CHANGES_REQUESTED, COMMENTED
	Body   string
}

// ReviewComment is a comment on a line of a pull request.
type ReviewComment struct {
	ID          int64
	Author      string
	Association string
	Path        string
	Line        int
	Body        string
	InReplyTo   int64
	// Resolved: the thread this comment starts was resolved (GraphQL's
	// resolveReviewThread).
	Resolved bool
}

// CheckRun is a check run of a commit; Log is its job's log.
type CheckRun struct {
	ID                 int64
	SHA, Name          string
	Status, Conclusion string
	Log                string
}

// Status is a commit status.
type Status struct {
	ID                  int64
	SHA, Context, State string
}

// Repo is one repository.
type Repo struct {
	Owner, Name   string
	DefaultBranch string
	// GitDir is the repository's git folder (a bare repository on disk,
	// where pushes go): a pull request's head must be a branch of it, and
	// its head sha is read from it.
	GitDir   string
	Issues   map[int]*Issue
	Checks   []*CheckRun
	Statuses []*Status
	// CI, when set, is the repository's CI: the check runs a commit gets
	// the first time its checks are asked for (none: it never reports).
	CI func(sha string) []CheckRun `json:"-"`
}

// Server is the fake API.
type Server struct {
	// Token is the one token the API accepts ("Bearer T" or "token T").
	Token string
	// Login is the user the token is.
	Login string
	URL   string // http://127.0.0.1:PORT

	mu       sync.Mutex
	repos    map[string]*Repo
	nextID   int64
	requests []string
	// logSig signs the links of job logs (jobLog).
	logSig string
	srv    *http.Server
	ln     net.Listener
}

// Start serves a fake API on 127.0.0.1 that accepts token.
func Start(token string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 8)
	rand.Read(sig)
	s := &Server{Token: token, Login: "looprinter-bot", repos: map[string]*Repo{}, nextID: 1000, ln: ln, logSig: hex.EncodeToString(sig)}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// AddRepo makes repository OWNER/NAME with default branch main.
func (s *Server) AddRepo(full string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(full, "/")
	r := &Repo{Owner: owner, Name: name, DefaultBranch: "main", Issues: map[int]*Issue{}}
	s.repos[full] = r
	return r
}

// AddIssue files an issue and returns its number.
func (s *Server) AddIssue(full string, is Issue) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[full]
	is.Number = len(r.Issues) + 1
	if is.State == "" {
		is.State = "open"
	}
	r.Issues[is.Number] = &is
	return is.Number
}

// AddCheckRun adds a completed (conclusion set) or running check run to
// sha, and returns its id.
func (s *Server) AddCheckRun(full string, c CheckRun) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c.ID = s.nextID
	if c.Status == "" {
		c.Status = "completed"
	}
	s.repos[full].Checks = append(s.repos[full].Checks, &c)
	return c.ID
}

// AddReviewComment adds a review comment to pull request n.
func (s *Server) AddReviewComment(full string, n int, c ReviewComment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c.ID = s.nextID
	p := s.repos[full].Issues[n].Pull
	p.ReviewComments = append(p.ReviewComments, c)
	return c.ID
}

// Snapshot is a deep copy of a repository, for a test to look at.
func (s *Server) Snapshot(full string) Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(s.repos[full])
	var r Repo
	json.Unmarshal(b, &r)
	return r
}

// Requests are the requests served so far, as "METHOD PATH".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Handler is the API's handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	routes := map[string]func(http.ResponseWriter, *http.Request, *Repo){
		"GET /repos/{owner}/{repo}":                             s.getRepo,
		"POST /repos/{owner}/{repo}/issues":                     s.createIssue,
		"GET /repos/{owner}/{repo}/issues":                      s.listIssues,
		"GET /repos/{owner}/{repo}/issues/{n}":                  s.getIssue,
		"GET /repos/{owner}/{repo}/issues/{n}/comments":         s.listComments,
		"POST /repos/{owner}/{repo}/issues/{n}/comments":        s.createComment,
		"POST /repos/{owner}/{repo}/issues/{n}/labels":          s.addLabels,
		"DELETE /repos/{owner}/{repo}/issues/{n}/labels/{name}": s.removeLabel,
		"GET /repos/{owner}/{repo}/pulls":                       s.listPulls,
		"POST /repos/{owner}/{repo}/pulls":                      s.createPull,
		"GET /repos/{owner}/{repo}/pulls/{n}":                   s.getPull,
		"PATCH /repos/{owner}/{repo}/pulls/{n}":                 s.updatePull,
		"GET /repos/{owner}/{repo}/pulls/{n}/comments":          s.listReviewComments,
		"POST /repos/{owner}/{repo}/pulls/{n}/comments":         s.createReviewComment,
		"GET /repos/{owner}/{repo}/pulls/{n}/reviews":           s.listReviews,
		"POST /repos/{owner}/{repo}/pulls/{n}/reviews":          s.createReview,
		"GET /repos/{owner}/{repo}/commits/{ref}/check-runs":    s.listCheckRuns,
		"POST /repos/{owner}/{repo}/check-runs":                 s.createCheckRun,
		"GET /repos/{owner}/{repo}/commits/{ref}/status":        s.combinedStatus,
		"POST /repos/{owner}/{repo}/statuses/{sha}":             s.createStatus,
		"GET /repos/{owner}/{repo}/actions/jobs/{id}/logs":      s.jobLog,
	}
	for pattern, h := range routes {
		h := h
		method, path, _ := strings.Cut(pattern, " ")
		handle := func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.requests = append(s.requests, r.Method+" "+r.URL.Path)
			if !s.authorized(r) {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
				return
			}
			repo := s.repos[r.PathValue("owner")+"/"+r.PathValue("repo")]
			if repo == nil {
				notFound(w)
				return
			}
			h(w, r, repo)
		}
		mux.HandleFunc(method+" "+path, handle)
		mux.HandleFunc(method+" /api/v3"+path, handle)
	}
	mux.HandleFunc("GET /_logs/{owner}/{repo}/{id}", s.logBlob)
	mux.HandleFunc("POST /graphql", s.graphql)
	mux.HandleFunc("POST /api/graphql", s.graphql)
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		w.Header().Set("X-OAuth-Scopes", "repo")
		writeJSON(w, 200, map[string]any{"login": s.Login, "id": 1, "type": "User"})
	})
	return mux
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "token ", "bearer "} {
		if t, ok := strings.CutPrefix(h, p); ok && s.Token != "" && t == s.Token {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
}

func unprocessable(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"message": msg}}})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return false
	}
	return true
}

func (s *Server) id() int64 { s.nextID++; return s.nextID }

func (s *Server) web(repo *Repo, kind string, n int) string {
	return fmt.Sprintf("%s/%s/%s/%s/%d", s.URL, repo.Owner, repo.Name, kind, n)
}

func (s *Server) issueOf(w http.ResponseWriter, r *http.Request, repo *Repo) *Issue {
	n, err := strconv.Atoi(r.PathValue("n"))
	if is := repo.Issues[n]; err == nil && is != nil {
		return is
	}
	notFound(w)
	return nil
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request, repo *Repo) {
	writeJSON(w, 200, map[string]any{"id": 1, "name": repo.Name, "full_name": repo.Owner + "/" + repo.Name,
		"owner": map[string]any{"login": repo.Owner}, "default_branch": repo.DefaultBranch, "private": false,
		"html_url": s.URL + "/" + repo.Owner + "/" + repo.Name})
}

func labelsJSON(ls []string) []map[string]any {
	out := []map[string]any{}
	for _, l := range ls {
		out = append(out, map[string]any{"name": l, "color": "ededed"})
	}
	return out
}

func (s *Server) issueJSON(repo *Repo, is *Issue) map[string]any {
	kind := "issues"
	if is.Pull != nil {
		kind = "pull"
	}
	m := map[string]any{"number": is.Number, "id": is.Number, "title": is.Title, "body": is.Body, "state": is.State,
		"user": map[string]any{"login": is.Author}, "author_association": is.Association,
		"labels": labelsJSON(is.Labels), "html_url": s.web(repo, kind, is.Number), "comments": len(is.Comments)}
	if is.Pull != nil {
		m["pull_request"] = map[string]any{"url": s.web(repo, "pull", is.Number)}
	}
	return m
}

func (s *Server) createIssue(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var in struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Title == "" {
		unprocessable(w, "title is missing")
		return
	}
	is := &Issue{Number: len(repo.Issues) + 1, Title: in.Title, Body: in.Body, State: "open", Author: s.Login, Association: "OWNER", Labels: in.Labels}
	repo.Issues[is.Number] = is
	writeJSON(w, 201, s.issueJSON(repo, is))
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request, repo *Repo) {
	out := []map[string]any{}
	var want []string
	if ls := r.URL.Query().Get("labels"); ls != "" {
		want = strings.Split(ls, ",")
	}
	for _, n := range sortedKeys(repo.Issues) {
		is := repo.Issues[n]
		has := true
		for _, l := range want {
			has = has && contains(is.Labels, l)
		}
		if is.State == "open" && has {
			out = append(out, s.issueJSON(repo, is))
		}
	}
	writeJSON(w, 200, out)
}

func sortedKeys(m map[int]*Issue) []int {
	var ns []int
	for n := range m {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}

func (s *Server) getIssue(w http.ResponseWriter, r *http.Request, repo *Repo) {
	if is := s.issueOf(w, r, repo); is != nil {
		writeJSON(w, 200, s.issueJSON(repo, is))
	}
}

func (s *Server) commentJSON(repo *Repo, is *Issue, c Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author},
		"author_association": c.Association, "html_url": fmt.Sprintf("%s#issuecomment-%d", s.web(repo, "issues", is.Number), c.ID)}
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.issueOf(w, r, repo)
	if is == nil {
		return
	}
	out := []map[string]any{}
	for _, c := range is.Comments {
		out = append(out, s.commentJSON(repo, is, c))
	}
	writeJSON(w, 200, out)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.issueOf(w, r, repo)
	if is == nil {
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Body == "" {
		unprocessable(w, "body is missing")
		return
	}
	c := Comment{ID: s.id(), Author: s.Login, Association: "OWNER", Body: in.Body}
	is.Comments = append(is.Comments, c)
	writeJSON(w, 201, s.commentJSON(repo, is, c))
}

func (s *Server) addLabels(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.issueOf(w, r, repo)
	if is == nil {
		return
	}
	// GitHub takes {"labels": [...]} or the bare list.
	var raw json.RawMessage
	if !decode(w, r, &raw) {
		return
	}
	var in struct {
		Labels []string `json:"labels"`
	}
	if json.Unmarshal(raw, &in) != nil && json.Unmarshal(raw, &in.Labels) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	for _, l := range in.Labels {
		if !contains(is.Labels, l) {
			is.Labels = append(is.Labels, l)
		}
	}
	writeJSON(w, 200, labelsJSON(is.Labels))
}

func (s *Server) removeLabel(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.issueOf(w, r, repo)
	if is == nil {
		return
	}
	name := r.PathValue("name")
	for i, l := range is.Labels {
		if l == name {
			is.Labels = append(is.Labels[:i], is.Labels[i+1:]...)
			writeJSON(w, 200, labelsJSON(is.Labels))
			return
		}
	}
	writeJSON(w, 404, map[string]string{"message": "Label does not exist"})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SetGitDir makes dir the repository's git folder (Repo.GitDir).
func (s *Server) SetGitDir(full, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[full].GitDir = dir
}

// AddStatus adds a commit status.
func (s *Server) AddStatus(full string, st Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	st.ID = s.nextID
	s.repos[full].Statuses = append(s.repos[full].Statuses, &st)
}

// SetCI sets the repository's CI (Repo.CI): a new CI, whose runs replace
// every check run of before.
func (s *Server) SetCI(full string, ci func(sha string) []CheckRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[full].CI = ci
	s.repos[full].Checks = nil
}

// Label puts label on issue n.
func (s *Server) Label(full string, n int, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.repos[full].Issues[n]; !contains(is.Labels, label) {
		is.Labels = append(is.Labels, label)
	}
}
