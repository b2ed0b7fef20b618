package fleetcmd

import "testing"

func TestAbsRemote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"../r.git", "/src/r.git"},
		{"r.git", "/src/app/r.git"},
		{"/srv/r.git", "/srv/r.git"},
		{"git@host:team/app.git", "git@host:team/app.git"},
		{"https://host/team/app.git", "https://host/team/app.git"},
		{"file:///srv/r.git", "file:///srv/r.git"},
	} {
		if got := absRemote("/src/app", c.in); got != c.want {
			t.Errorf("absRemote(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
