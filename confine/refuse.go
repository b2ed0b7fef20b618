package confine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/sandbox"
)

// RefuseInLayer takes out of a layer that is not applied (an attempt of
// a best-of, whose upper folder is upper) what applying it would refuse,
// so that neither its checks, nor its ref, nor its apply sees it: a
// change to the engine's records, a file holding a secret, a new tell
// (its record written with a.Emit), a change where a holdout file is
// (Apply's rules), and a change to one of the protected files (files,
// or a new file rules protect) that the guard would put back: edited
// judges the layer's version p of a protected file ("" when it stays:
// ProtectedEdit). Each is a violation of the attempt. The repository's
// paths the engine discards at any apply stay for it to discard.
func (a Applier) RefuseInLayer(upper string, files []guard.File, rules *guard.ProtectRules, edited func(rel, p string) (what, why string)) []guard.Tamper {
	entries, err := sandbox.LayerEntries(upper)
	if err != nil {
		return []guard.Tamper{{File: ".", What: "its layer cannot be read: " + err.Error(), Rule: "the engine judges every path of a layer"}}
	}
	commits := GitDir(a.Spec()) != ""
	protected := map[string]string{}
	for _, f := range files {
		protected[f.Path] = f.Rule
	}
	var out []guard.Tamper
	scope := a.Judge().NewTellScope(TreeOf(a.Dir, upper))
	refuse := func(rel string, t guard.Tamper) {
		if err := os.RemoveAll(filepath.Join(upper, filepath.FromSlash(rel))); err != nil {
			t.What += " (it could not be taken out of the attempt's layer)"
		}
		out = append(out, t)
	}
	for _, en := range entries {
		rel := en.Rel
		p := filepath.Join(upper, filepath.FromSlash(rel))
		if _, err := os.Lstat(p); err != nil || en.What == "folder" {
			continue // a plain folder, or gone with a folder refused above it
		}
		if a.Judge().HoldoutPath(upper, rel) || a.Judge().TouchesHoldout(rel) {
			if en.What == "removed" && slices.Contains(a.Judge().Holdouts(), rel) {
				// The engine's own whiteout, which hid the holdout file from
				// the run: out of the layer, so that no ref shows the file
				// removed (no apply takes it, and no check sees the file).
				os.Remove(p)
				continue
			}
			refuse(rel, guard.Tamper{File: rel, What: en.What + " where a holdout file is", Rule: "holdout: the user's hidden tests, never the agent's to see or change"})
			continue
		}
		if gh := a.Judge().HiddenGit(); GitHidden(gh, rel) {
			if en.What == "written" && OwnGitNote(gh, upper, rel) || en.What == "removed" && slices.Contains(gh.InTree[1:], rel) {
				os.Remove(p) // the engine's own: the repository was hidden from the run
			}
			continue // the rest is discarded at any apply
		}
		if why, owned := EngineOwned(rel, commits); owned {
			if !strings.HasPrefix(rel, ".git") {
				refuse(rel, guard.Tamper{File: rel, What: "written in the agent's layer", Rule: why})
			}
			continue
		}
		switch en.What {
		case "written", "link":
			cur, ok := ReadChange(p) // one read for secrets and tells
			if kinds := SecretsInChange(rel, cur, a.Red()); ok && kinds != "" {
				refuse(rel, guard.Tamper{File: rel, What: "refused: it holds " + kinds, Rule: SecretRule})
				continue
			}
			if note := a.LayerTells(scope, rel, cur, ok); note != "" {
				refuse(rel, guard.Tamper{Kind: guard.TestAware, File: rel, What: note, Rule: TestAwareRule})
				continue
			}
			if rule, ok := protected[rel]; ok {
				if what, why := edited(rel, p); what != "" {
					refuse(rel, guard.Tamper{File: rel, What: what, Why: why, Rule: rule})
				}
				continue
			}
			if _, err := os.Lstat(filepath.Join(a.Dir, filepath.FromSlash(rel))); err != nil && rules != nil {
				if pr, ok := rules.ProtectNew(rel); ok {
					refuse(rel, guard.Tamper{File: rel, What: "created", Rule: pr.Rule})
				}
			}
		case "removed", "replaced folder":
			for f, rule := range protected {
				if f == rel || strings.HasPrefix(f, rel+"/") {
					what := "deleted"
					if en.What == "replaced folder" {
						what = "deleted with its folder " + rel
					}
					refuse(rel, guard.Tamper{File: f, What: what, Rule: rule})
					break
				}
			}
		default:
			refuse(rel, guard.Tamper{File: rel, What: "a " + en.What + " in the agent's layer", Rule: "only files, folders and links reach the loop folder"})
		}
	}
	return out
}

// ProtectedEdit judges a layer's version p of the protected file rel
// against the loop folder's (dir): "" when it changes nothing or keeps an
// edit that weakens nothing (keep, the guard's), else what changed and
// why it may not.
func ProtectedEdit(dir, rel, p string, keep func(rel string, old, now []byte) (bool, string)) (what, why string) {
	cur := filepath.Join(dir, filepath.FromSlash(rel))
	ci, err := os.Lstat(cur)
	pi, perr := os.Lstat(p)
	switch {
	case err != nil || perr != nil:
		return "modified", ""
	case ci.Mode().Type() != pi.Mode().Type():
		return "replaced by a " + guard.TypeName(pi.Mode()), ""
	case pi.Mode()&os.ModeSymlink != 0:
		a, _ := os.Readlink(cur)
		b, _ := os.Readlink(p)
		if a == b {
			return "", ""
		}
		return "modified", ""
	case ci.Mode().Perm() != pi.Mode().Perm():
		return fmt.Sprintf("changed from mode %04o to %04o", ci.Mode().Perm(), pi.Mode().Perm()), ""
	}
	old, err := guard.ReadBounded(cur, 64<<20)
	if err != nil {
		return "modified", ""
	}
	now, err := guard.ReadBounded(p, 64<<20)
	if err != nil {
		return "modified", ""
	}
	if bytes.Equal(old, now) {
		return "", ""
	}
	if ok, why := keep(rel, old, now); !ok {
		return "modified", why
	}
	return "", ""
}
