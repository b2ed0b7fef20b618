package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestNextEveryAndCron(t *testing.T) {
	base := time.Date(2026, 11, 30, 10, 7, 0, 0, time.UTC)
	s, err := Parse(15*time.Minute, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(base); !got.Equal(base.Add(15 * time.Minute)) {
		t.Fatalf("every: %s", got)
	}
	c, err := Parse(0, "*/20 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Next(base); !got.Equal(time.Date(2026, 11, 30, 10, 20, 0, 0, time.UTC)) {
		t.Fatalf("cron: %s", got)
	}
	for _, bad := range []struct {
		every time.Duration
		cron  string
	}{{0, ""}, {time.Minute, "* * * * *"}, {0, "61 * * * *"}, {0, "* * *"}, {-time.Minute, ""}} {
		if _, err := Parse(bad.every, bad.cron); err == nil {
			t.Errorf("Parse(%s, %q) accepted", bad.every, bad.cron)
		}
	}
}

func TestCrontabLines(t *testing.T) {
	cases := map[time.Duration]string{
		10 * time.Minute: "*/10 * * * *",
		time.Hour:        "0 * * * *",
		6 * time.Hour:    "0 */6 * * *",
		24 * time.Hour:   "0 0 * * *",
	}
	for d, want := range cases {
		s, _ := Parse(d, "")
		got, err := s.CronSpec()
		if err != nil || got != want {
			t.Errorf("every %s: %q %v, want %q", d, got, err, want)
		}
	}
	for _, d := range []time.Duration{7 * time.Minute, 90 * time.Second, 5 * time.Hour} {
		s, _ := Parse(d, "")
		if _, err := s.CronSpec(); err == nil {
			t.Errorf("every %s has a crontab line", d)
		}
	}
	s, _ := Parse(0, "0 3 * * *")
	line, _ := s.Crontab("looprinter schedule --once")
	if line != "0 3 * * * looprinter schedule --once" {
		t.Fatal(line)
	}
}

func TestOnCalendar(t *testing.T) {
	cases := map[string]string{
		"30 3 * * 1-5":    "Mon..Fri *-*-* 03:30:00",
		"*/15 * * * *":    "*-*-* *:0/15:00",
		"0 9 1 */2 *":     "*-1/2-01 09:00:00",
		"0 0 * * 0,6":     "Sun,Sat *-*-* 00:00:00",
		"5,35 8-17 * * *": "*-*-* 8..17:5,35:00",
	}
	for expr, want := range cases {
		got, err := OnCalendar(expr)
		if err != nil || got != want {
			t.Errorf("OnCalendar(%q) = %q %v, want %q", expr, got, err, want)
		}
	}
	s, _ := Parse(0, "30 3 * * 1-5")
	svc, timer, err := s.Systemd("nightly", "/src", "looprinter schedule --once -f 'loop.yaml'")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svc, "WorkingDirectory=/src") || !strings.Contains(svc, `ExecStart=/bin/sh -c 'looprinter schedule --once -f '\''loop.yaml'\'''`) {
		t.Fatal(svc)
	}
	if !strings.Contains(timer, "OnCalendar=Mon..Fri *-*-* 03:30:00") || !strings.Contains(timer, "Unit=looprinter-nightly.service") {
		t.Fatal(timer)
	}
}
