package fakegithub

import (
	"net/http"
	"os/exec"
	"strconv"
	"strings"
)

// headSHA is branch's commit in the repository's git folder (GitDir), as
// GitHub knows a pushed branch: "" when the branch was never pushed.
func (repo *Repo) headSHA(branch string) string {
	if repo.GitDir == "" {
		return ""
	}
	out, err := exec.Command("git", "--git-dir", repo.GitDir, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (s *Server) pullJSON(repo *Repo, is *Issue) map[string]any {
	p := is.Pull
	sha := repo.headSHA(p.Head)
	if sha == "" {
		sha = p.HeadSHA
	}
	return map[string]any{"number": is.Number, "id": is.Number, "title": is.Title, "body": is.Body, "state": is.State,
		"draft": p.Draft, "user": map[string]any{"login": is.Author}, "html_url": s.web(repo, "pull", is.Number),
		"head": map[string]any{"ref": p.Head, "sha": sha, "label": repo.Owner + ":" + p.Head},
		"base": map[string]any{"ref": p.Base, "label": repo.Owner + ":" + p.Base}}
}

func (s *Server) pullOf(w http.ResponseWriter, r *http.Request, repo *Repo) *Issue {
	n, err := strconv.Atoi(r.PathValue("n"))
	if is := repo.Issues[n]; err == nil && is != nil && is.Pull != nil {
		return is
	}
	notFound(w)
	return nil
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, repo *Repo) {
	state := r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	head := r.URL.Query().Get("head")
	out := []map[string]any{}
	for _, n := range sortedKeys(repo.Issues) {
		is := repo.Issues[n]
		if is.Pull == nil || (state != "all" && is.State != state) {
			continue
		}
		if head != "" && head != repo.Owner+":"+is.Pull.Head {
			continue
		}
		out = append(out, s.pullJSON(repo, is))
	}
	writeJSON(w, 200, out)
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var in struct {
		Title, Body, Head, Base string
		Draft                   bool
	}
	if !decode(w, r, &in) {
		return
	}
	switch {
	case in.Title == "" || in.Head == "" || in.Base == "":
		unprocessable(w, "title, head and base are required")
		return
	case repo.GitDir != "" && repo.headSHA(in.Head) == "":
		unprocessable(w, "head: the branch "+in.Head+" does not exist on the remote")
		return
	}
	for _, is := range repo.Issues {
		if is.Pull != nil && is.State == "open" && is.Pull.Head == in.Head {
			unprocessable(w, "A pull request already exists for "+repo.Owner+":"+in.Head+".")
			return
		}
	}
	is := &Issue{Number: len(repo.Issues) + 1, Title: in.Title, Body: in.Body, State: "open", Author: s.Login, Association: "OWNER",
		Pull: &Pull{Head: in.Head, Base: in.Base, Draft: in.Draft, HeadSHA: repo.headSHA(in.Head)}}
	repo.Issues[is.Number] = is
	writeJSON(w, 201, s.pullJSON(repo, is))
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request, repo *Repo) {
	if is := s.pullOf(w, r, repo); is != nil {
		writeJSON(w, 200, s.pullJSON(repo, is))
	}
}

func (s *Server) updatePull(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.pullOf(w, r, repo)
	if is == nil {
		return
	}
	var in struct {
		Title, Body, State *string
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Title != nil {
		is.Title = *in.Title
	}
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.State != nil {
		is.State = *in.State
	}
	writeJSON(w, 200, s.pullJSON(repo, is))
}

func (s *Server) reviewCommentJSON(repo *Repo, is *Issue, c ReviewComment) map[string]any {
	m := map[string]any{"id": c.ID, "body": c.Body, "path": c.Path, "line": c.Line, "user": map[string]any{"login": c.Author},
		"author_association": c.Association, "pull_request_url": s.web(repo, "pull", is.Number)}
	if c.InReplyTo != 0 {
		m["in_reply_to_id"] = c.InReplyTo
	}
	return m
}

func (s *Server) listReviewComments(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.pullOf(w, r, repo)
	if is == nil {
		return
	}
	out := []map[string]any{}
	for _, c := range is.Pull.ReviewComments {
		out = append(out, s.reviewCommentJSON(repo, is, c))
	}
	writeJSON(w, 200, out)
}

func (s *Server) createReviewComment(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.pullOf(w, r, repo)
	if is == nil {
		return
	}
	var in struct {
		Body      string `json:"body"`
		Path      string `json:"path"`
		Line      int    `json:"line"`
		InReplyTo int64  `json:"in_reply_to"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Body == "" || (in.InReplyTo == 0 && (in.Path == "" || in.Line < 1)) {
		unprocessable(w, "body, and path and line (or in_reply_to), are required")
		return
	}
	c := ReviewComment{ID: s.id(), Author: s.Login, Association: "OWNER", Path: in.Path, Line: in.Line, Body: in.Body, InReplyTo: in.InReplyTo}
	is.Pull.ReviewComments = append(is.Pull.ReviewComments, c)
	writeJSON(w, 201, s.reviewCommentJSON(repo, is, c))
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.pullOf(w, r, repo)
	if is == nil {
		return
	}
	out := []map[string]any{}
	for _, v := range is.Pull.Reviews {
		out = append(out, map[string]any{"id": v.ID, "state": v.State, "body": v.Body, "user": map[string]any{"login": v.Author}})
	}
	writeJSON(w, 200, out)
}

func (s *Server) createReview(w http.ResponseWriter, r *http.Request, repo *Repo) {
	is := s.pullOf(w, r, repo)
	if is == nil {
		return
	}
	var in struct {
		Body  string `json:"body"`
		Event string `json:"event"`
	}
	if !decode(w, r, &in) {
		return
	}
	states := map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}
	st, ok := states[in.Event]
	if !ok {
		unprocessable(w, "event must be APPROVE, REQUEST_CHANGES or COMMENT")
		return
	}
	v := Review{ID: s.id(), Author: s.Login, State: st, Body: in.Body}
	is.Pull.Reviews = append(is.Pull.Reviews, v)
	writeJSON(w, 200, map[string]any{"id": v.ID, "state": v.State, "body": v.Body, "user": map[string]any{"login": v.Author}})
}

// matches says whether ref names sha: the commit itself, or a branch of
// the git folder that points at it.
func (repo *Repo) matches(ref, sha string) bool {
	return ref == sha || (repo.GitDir != "" && repo.headSHA(ref) == sha && sha != "")
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request, repo *Repo) {
	ref := r.PathValue("ref")
	s.runCI(repo, ref)
	out := []map[string]any{}
	for _, c := range repo.Checks {
		if !repo.matches(ref, c.SHA) {
			continue
		}
		m := map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.SHA, "status": c.Status, "conclusion": nil,
			"html_url": s.URL + "/" + repo.Owner + "/" + repo.Name + "/actions/runs/1/job/" + strconv.FormatInt(c.ID, 10)}
		if c.Status == "completed" {
			m["conclusion"] = c.Conclusion
		}
		out = append(out, m)
	}
	writeJSON(w, 200, map[string]any{"total_count": len(out), "check_runs": out})
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var in struct {
		Name       string `json:"name"`
		HeadSHA    string `json:"head_sha"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Name == "" || in.HeadSHA == "" {
		unprocessable(w, "name and head_sha are required")
		return
	}
	if in.Status == "" {
		in.Status = "queued"
		if in.Conclusion != "" {
			in.Status = "completed"
		}
	}
	c := &CheckRun{ID: s.id(), SHA: in.HeadSHA, Name: in.Name, Status: in.Status, Conclusion: in.Conclusion}
	repo.Checks = append(repo.Checks, c)
	writeJSON(w, 201, map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.SHA, "status": c.Status, "conclusion": c.Conclusion})
}

func (s *Server) combinedStatus(w http.ResponseWriter, r *http.Request, repo *Repo) {
	ref := r.PathValue("ref")
	out := []map[string]any{}
	state := "success"
	for _, st := range repo.Statuses {
		if !repo.matches(ref, st.SHA) {
			continue
		}
		out = append(out, map[string]any{"id": st.ID, "context": st.Context, "state": st.State})
		switch {
		case st.State == "failure" || st.State == "error":
			state = "failure"
		case st.State == "pending" && state == "success":
			state = "pending"
		}
	}
	if len(out) == 0 {
		state = "pending"
	}
	writeJSON(w, 200, map[string]any{"state": state, "sha": ref, "total_count": len(out), "statuses": out})
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request, repo *Repo) {
	var in struct {
		State   string `json:"state"`
		Context string `json:"context"`
	}
	if !decode(w, r, &in) {
		return
	}
	switch in.State {
	case "error", "failure", "pending", "success":
	default:
		unprocessable(w, "state must be error, failure, pending or success")
		return
	}
	if in.Context == "" {
		in.Context = "default"
	}
	st := &Status{ID: s.id(), SHA: r.PathValue("sha"), Context: in.Context, State: in.State}
	repo.Statuses = append(repo.Statuses, st)
	writeJSON(w, 201, map[string]any{"id": st.ID, "context": st.Context, "state": st.State})
}

// jobLog answers as GitHub does: 302 to a signed link of the log, which
// is read without the token (logBlob).
func (s *Server) jobLog(w http.ResponseWriter, r *http.Request, repo *Repo) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, c := range repo.Checks {
		if c.ID == id {
			w.Header().Set("Location", s.URL+"/_logs/"+r.PathValue("owner")+"/"+r.PathValue("repo")+"/"+r.PathValue("id")+"?sig="+s.logSig)
			w.WriteHeader(http.StatusFound)
			return
		}
	}
	notFound(w)
}

// logBlob is GET /_logs/OWNER/REPO/ID?sig=…: a job's log at the link
// jobLog gives; the signature, not a token, lets it be read.
func (s *Server) logBlob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "" {
		// The token stays with the API's origin.
		http.Error(w, "a token was sent to the log's link", http.StatusBadRequest)
		return
	}
	repo := s.repos[r.PathValue("owner")+"/"+r.PathValue("repo")]
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if repo == nil || r.URL.Query().Get("sig") != s.logSig {
		notFound(w)
		return
	}
	for _, c := range repo.Checks {
		if c.ID == id {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(c.Log))
			return
		}
	}
	notFound(w)
}

// runCI gives a commit the repository's CI's check runs the first time
// they are asked for.
func (s *Server) runCI(repo *Repo, sha string) {
	if repo.CI == nil {
		return
	}
	for _, c := range repo.Checks {
		if c.SHA == sha {
			return
		}
	}
	for _, c := range repo.CI(sha) {
		c := c
		c.ID, c.SHA = s.id(), sha
		if c.Status == "" {
			c.Status = "completed"
		}
		repo.Checks = append(repo.Checks, &c)
	}
}
