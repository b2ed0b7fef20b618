// Package operator is the two-way channel between a loop and the person who
// runs it: an agent's question (<ask id="q1">…</ask> at the end of its final
// message), the operator's answer, and guidance the operator queues for the
// next agent run (acknowledged with <ack/>).
//
// Answers and guidance live in the engine's private folder of the loop
// (internal/enginedir), which no agent run can write: an agent can ask, but
// it can never forge what the operator said. The prompt carries the
// operator's words between two fence lines that hold a random nonce drawn
// for that prompt, so nothing an agent or a check printed earlier can close
// the fence or open a fake one.
package operator

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/looprinter/looprinter/loopdir"
)

// MaxText bounds an answer, a piece of guidance and a question.
const MaxText = 8000

// Answer is the operator's answer to one question.
type Answer struct {
	ID   string    `json:"id"`   // the question's id, as the agent wrote it
	Seq  int       `json:"seq"`  // the agent run that asked: an answer is for that question only
	Text string    `json:"text"` // the answer
	By   string    `json:"by"`   // who answered: "looprinter answer", "mcp", "serve (token …)"
	At   time.Time `json:"at"`
}

// Guidance is a note the operator queued for the next agent run.
type Guidance struct {
	ID   string    `json:"id"`
	Text string    `json:"text"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
}

// dir is the channel's folder: inside the engine's private folder.
func dir(loopDir string) string { return loopdir.PrivateOf(loopDir).Operator() }

func answerPath(loopDir, id string) string {
	return filepath.Join(dir(loopDir), "answers", id+".json")
}

func guidanceDir(loopDir string) string { return filepath.Join(dir(loopDir), "guidance") }

// ValidID says whether id can name a question: 1 to 40 letters, digits, '.',
// '_' or '-'.
func ValidID(id string) bool { return askID.MatchString(id) }

var askID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,40}$`)

// CheckText refuses an empty, oversized or non-UTF-8 text.
func CheckText(what, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("the %s is empty", what)
	case len(text) > MaxText:
		return fmt.Errorf("the %s is %d bytes; at most %d", what, len(text), MaxText)
	case !utf8.ValidString(text):
		return fmt.Errorf("the %s is not valid UTF-8", what)
	case strings.ContainsRune(text, 0):
		return fmt.Errorf("the %s holds a NUL byte", what)
	}
	return nil
}

// PutAnswer stores the answer to the question asked by run seq. A second
// answer to the same question replaces the first until the engine takes it.
func PutAnswer(loopDir string, a Answer) error {
	if !ValidID(a.ID) {
		return fmt.Errorf("%q is not a question id", a.ID)
	}
	if err := CheckText("answer", a.Text); err != nil {
		return err
	}
	if a.At.IsZero() {
		a.At = time.Now().UTC()
	}
	return writeJSON(loopDir, answerPath(loopDir, a.ID), a)
}

// TakeAnswer returns the stored answer to question id asked by run seq and
// removes it; ok is false when there is none (an answer to an older question
// of the same id is dropped).
func TakeAnswer(loopDir, id string, seq int) (Answer, bool) {
	a, ok := PeekAnswer(loopDir, id)
	if !ok {
		return Answer{}, false
	}
	os.Remove(answerPath(loopDir, id))
	if a.Seq != seq {
		return Answer{}, false
	}
	return a, true
}

// PeekAnswer reads the stored answer to question id, if any.
func PeekAnswer(loopDir, id string) (Answer, bool) {
	var a Answer
	if !ValidID(id) {
		return a, false
	}
	data, err := readPrivate(answerPath(loopDir, id))
	if err != nil || json.Unmarshal(data, &a) != nil || a.ID != id || CheckText("answer", a.Text) != nil {
		return Answer{}, false
	}
	return a, true
}

// PutGuidance queues guidance for the next agent run and returns it with its
// id.
func PutGuidance(loopDir, text, by string) (Guidance, error) {
	if err := CheckText("guidance", text); err != nil {
		return Guidance{}, err
	}
	now := time.Now().UTC()
	g := Guidance{ID: fmt.Sprintf("g-%s-%s", now.Format("20060102T150405.000000000"), nonce(3)), Text: text, By: by, At: now}
	return g, writeJSON(loopDir, filepath.Join(guidanceDir(loopDir), g.ID+".json"), g)
}

// Queued lists the guidance no agent run has acknowledged yet, oldest first.
func Queued(loopDir string) []Guidance {
	ents, err := os.ReadDir(guidanceDir(loopDir))
	if err != nil {
		return nil
	}
	var out []Guidance
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		data, err := readPrivate(filepath.Join(guidanceDir(loopDir), name))
		var g Guidance
		if err != nil || json.Unmarshal(data, &g) != nil || g.ID+".json" != name || CheckText("guidance", g.Text) != nil {
			continue
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Acknowledge moves guidance out of the queue (to guidance/acked/).
func Acknowledge(loopDir string, ids []string) error {
	acked := filepath.Join(guidanceDir(loopDir), "acked")
	if err := os.MkdirAll(acked, 0o700); err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if strings.ContainsAny(id, "/\\") || strings.HasPrefix(id, ".") {
			continue
		}
		if err := os.Rename(filepath.Join(guidanceDir(loopDir), id+".json"), filepath.Join(acked, id+".json")); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readPrivate reads a file of the channel that is a regular file (never
// through a link, never a fifo).
func readPrivate(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4*MaxText+4096 {
		return nil, fmt.Errorf("%s is not a small regular file", p)
	}
	return os.ReadFile(p)
}

// writeJSON writes v to p atomically (a temporary dot-file renamed over p),
// creating the engine's private folder and the channel's folders 0700.
func writeJSON(loopDir, p string, v any) error {
	if _, err := loopdir.PrivateOf(loopDir).Ensure(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+"."+nonce(4))
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func nonce(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Nonce is a fresh random word for one prompt's operator fence.
func Nonce() string { return nonce(8) }

// askTag is a question tag, all of it.
var askTag = regexp.MustCompile(`^<ask id="([A-Za-z0-9._-]{1,40})">((?s).+)</ask>$`)

// ParseAsk reads the question an agent's final message ends with:
// <ask id="q1">question</ask>, nothing but white space after it. A question
// that appears word for word in the prompt (an agent echoing its
// instructions) is not a question.
func ParseAsk(final, prompt string) (id, question string, ok bool) {
	final = strings.TrimSpace(final)
	i := strings.LastIndex(final, `<ask id="`)
	if i < 0 || !strings.HasSuffix(final, "</ask>") {
		return "", "", false
	}
	tag := final[i:]
	m := askTag.FindStringSubmatch(tag)
	if m == nil {
		return "", "", false
	}
	q := strings.TrimSpace(m[2])
	if q == "" || len(q) > MaxText || strings.Contains(q, "</ask>") || strings.Contains(prompt, tag) {
		return "", "", false
	}
	return m[1], q, true
}

// Acked says whether a final message acknowledges the guidance: a line that
// is exactly <ack/> (white space around it allowed, nothing else: a quoted
// "> <ack/>" is a quotation, not an acknowledgement).
func Acked(final string) bool {
	for _, l := range strings.Split(final, "\n") {
		if strings.TrimSpace(l) == "<ack/>" {
			return true
		}
	}
	return false
}

// Block is the operator's words as a prompt carries them: a heading, a
// sentence saying what the block is, and the text between two fence lines
// holding nonce. Every line of text is quoted with "| ", so no line of it
// can be a fence line, an <ack/> or an <ask> tag on a line of its own.
func Block(heading, intro, text, nonce string) string {
	fenceLine := "~~~operator-" + nonce
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n%s\n%s\n", heading, intro, fenceLine)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("| " + strings.ReplaceAll(l, "\r", "") + "\n")
	}
	b.WriteString(fenceLine + "\n")
	return b.String()
}
