// Package schedule fires a loop repeatedly: every N minutes or on a cron
// expression. It computes firing times, gives the crontab and systemd timer
// lines for those who prefer the system's scheduler, and runs the built-in
// scheduler (Scheduler), whose firings are refused while a run holds the
// loop. `looprinter schedule` only parses flags, calls it and prints.
package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is when a loop fires.
type Schedule struct {
	Every time.Duration // fire every this long, or
	Cron  string        // on this standard 5-field cron expression
	sched cron.Schedule
}

// Parse checks a schedule; exactly one of every and cronExpr is set.
func Parse(every time.Duration, cronExpr string) (*Schedule, error) {
	cronExpr = strings.TrimSpace(cronExpr)
	switch {
	case every > 0 && cronExpr != "":
		return nil, fmt.Errorf("a schedule is either every DURATION or a cron expression, not both")
	case every < 0:
		return nil, fmt.Errorf("schedule every %s: must be positive", every)
	case every > 0:
		return &Schedule{Every: every}, nil
	case cronExpr != "":
		s, err := parseCron(cronExpr)
		if err != nil {
			return nil, fmt.Errorf("schedule cron %q: %v", cronExpr, err)
		}
		return &Schedule{Cron: cronExpr, sched: s}, nil
	}
	return nil, fmt.Errorf("no schedule: set schedule.every or schedule.cron in the loop file, or pass --every or --cron")
}

func (s *Schedule) String() string {
	if s.Cron != "" {
		return "cron " + s.Cron
	}
	return "every " + s.Every.String()
}

// Next is the first firing strictly after t. An every-schedule fires first
// one period after the scheduler starts (start runs the loop at once if
// that is wanted).
func (s *Schedule) Next(t time.Time) time.Time {
	if s.sched != nil {
		return s.sched.Next(t)
	}
	return t.Add(s.Every)
}

// CronSpec is the crontab time fields for the schedule; an every-schedule
// must divide an hour or a day evenly to have one.
func (s *Schedule) CronSpec() (string, error) {
	if s.Cron != "" {
		return s.Cron, nil
	}
	d := s.Every
	switch {
	case d%time.Minute != 0:
		return "", fmt.Errorf("every %s is not a whole number of minutes: cron cannot express it", d)
	case d < time.Hour && time.Hour%d == 0:
		return fmt.Sprintf("*/%d * * * *", int(d/time.Minute)), nil
	case d == time.Hour:
		return "0 * * * *", nil
	case d%time.Hour == 0 && d < 24*time.Hour && (24*time.Hour)%d == 0:
		return fmt.Sprintf("0 */%d * * *", int(d/time.Hour)), nil
	case d == 24*time.Hour:
		return "0 0 * * *", nil
	}
	return "", fmt.Errorf("every %s does not divide an hour or a day evenly: use a cron expression, or the systemd timer", d)
}

// Crontab is one crontab line that fires the loop with cmd.
func (s *Schedule) Crontab(cmd string) (string, error) {
	spec, err := s.CronSpec()
	if err != nil {
		return "", err
	}
	return spec + " " + cmd, nil
}

// Systemd returns a service and a timer unit that fire the loop with cmd
// (run in dir).
func (s *Schedule) Systemd(name, dir, cmd string) (service, timer string, err error) {
	service = fmt.Sprintf(`[Unit]
Description=looprinter loop %[1]s (one firing)

[Service]
Type=oneshot
WorkingDirectory=%[2]s
ExecStart=/bin/sh -c %[3]s
`, name, dir, shellQuote(cmd))
	var when string
	if s.Cron != "" {
		cal, cerr := OnCalendar(s.Cron)
		if cerr != nil {
			return "", "", cerr
		}
		when = "OnCalendar=" + cal + "\nPersistent=true"
	} else {
		when = fmt.Sprintf("OnActiveSec=%d\nOnUnitActiveSec=%d", int(s.Every.Seconds()), int(s.Every.Seconds()))
	}
	timer = fmt.Sprintf(`[Unit]
Description=looprinter loop %[1]s, %[2]s

[Timer]
%[3]s
Unit=looprinter-%[1]s.service

[Install]
WantedBy=timers.target
`, name, s, when)
	return service, timer, nil
}

var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// OnCalendar translates a 5-field cron expression (numbers, *, lists,
// ranges and steps) to a systemd OnCalendar value.
func OnCalendar(expr string) (string, error) {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return "", fmt.Errorf("cron %q: needs five fields", expr)
	}
	conv := func(field string, width int) (string, error) {
		if field == "*" {
			return "*", nil
		}
		var parts []string
		for _, p := range strings.Split(field, ",") {
			base, step, hasStep := strings.Cut(p, "/")
			if base == "*" {
				base = "0"
				if width == 1 { // day or month start at 1
					base = "1"
				}
			}
			base = strings.Replace(base, "-", "..", 1)
			if hasStep {
				if strings.Contains(base, "..") {
					return "", fmt.Errorf("cron %q: a stepped range has no OnCalendar form; use --every", expr)
				}
				base += "/" + step
			}
			parts = append(parts, base)
		}
		return strings.Join(parts, ","), nil
	}
	min, err := conv(f[0], 0)
	if err != nil {
		return "", err
	}
	hour, err := conv(f[1], 0)
	if err != nil {
		return "", err
	}
	dom, err := conv(f[2], 1)
	if err != nil {
		return "", err
	}
	mon, err := conv(f[3], 1)
	if err != nil {
		return "", err
	}
	dow := ""
	if f[4] != "*" {
		var names []string
		for _, p := range strings.Split(f[4], ",") {
			lo, hi, isRange := strings.Cut(p, "-")
			a, err1 := strconv.Atoi(lo)
			if err1 != nil || a < 0 || a > 7 {
				return "", fmt.Errorf("cron %q: weekday %q has no OnCalendar form", expr, p)
			}
			if isRange {
				b, err2 := strconv.Atoi(hi)
				if err2 != nil || b < 0 || b > 7 {
					return "", fmt.Errorf("cron %q: weekday %q has no OnCalendar form", expr, p)
				}
				names = append(names, weekdays[a]+".."+weekdays[b])
			} else {
				names = append(names, weekdays[a])
			}
		}
		dow = strings.Join(names, ",") + " "
	}
	pad := func(s string) string {
		if len(s) == 1 && s != "*" {
			return "0" + s
		}
		return s
	}
	return fmt.Sprintf("%s*-%s-%s %s:%s:00", dow, pad(mon), pad(dom), pad(hour), pad(min)), nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string { return shellQuote(s) }

// parseCron is cron.ParseStandard, which panics on some malformed time zone
// prefixes ("TZ=Zone" with nothing after it): a bad --cron is an error.
func parseCron(expr string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("not a cron expression (%v)", r)
		}
	}()
	return cron.ParseStandard(expr)
}
