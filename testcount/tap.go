package testcount

import (
	"bytes"
	"strings"
)

// TAP

func (p *Parser) tapLine(b []byte, tapLast bool) {
	trim := bytes.TrimLeft(b, " \t")
	switch trim[0] {
	case 'T', '1', 'B':
		if tapVersion.Match(b) || tapPlan.Match(b) || tapBail.Match(b) {
			p.tapSeen = true
			for _, n := range p.tapPending {
				p.pendName(n.name, n.skipped)
			}
			p.tapPending = nil
		}
		return
	case '#', '-', 'o', 'n':
	default:
		return
	}
	if m := tapSubtest.FindSubmatch(b); m != nil {
		ind := indentOf(m[1])
		p.tapPop(ind)
		if len(p.tapStack) < 64 {
			p.tapStack = append(p.tapStack, indented{ind, string(m[2])})
		}
		return
	}
	if tapLast && bytes.Equal(trim, []byte("---")) {
		p.tapYAML = indentOf(b)
		return
	}
	if !bytes.HasPrefix(trim, []byte("ok")) && !bytes.HasPrefix(trim, []byte("not ok")) {
		return
	}
	m := tapPoint.FindSubmatch(b)
	if m == nil {
		return
	}
	ind := indentOf(m[1])
	desc := string(m[3])
	directive := ""
	if d := tapDirective.FindStringSubmatchIndex(desc); d != nil {
		directive = strings.ToLower(desc[d[2]:d[3]])
		desc = strings.TrimSpace(desc[:d[0]])
	}
	p.tapPop(ind + 1)
	if n := len(p.tapStack); n > 0 && p.tapStack[n-1].indent == ind {
		p.tapStack = p.tapStack[:n-1] // this test point closes its own subtest
	}
	name := desc
	if len(p.tapStack) > 0 && desc != "" {
		parts := make([]string, 0, len(p.tapStack)+1)
		for _, s := range p.tapStack {
			parts = append(parts, s.name)
		}
		name = strings.Join(append(parts, desc), "/")
	}
	p.tap.seen = true
	p.tapLast = true
	switch {
	case directive != "":
		p.tap.skipped++
		p.tapName(name, true)
	case len(m[2]) > 0:
		p.tap.failed++
		p.fails.tapFail, p.fails.tapName, p.fails.tapPointIn = true, name, ind
	default:
		p.tap.passed++
		p.tapName(name, false)
	}
}

// tapName keeps a TAP test point's name; until a version, plan or bail-out
// line says the output is TAP, the names wait (a stray "ok" is not a test).
func (p *Parser) tapName(name string, skipped bool) {
	if p.tapSeen {
		p.pendName(name, skipped)
		return
	}
	if len(p.tapPending) < 1<<16 {
		p.tapPending = append(p.tapPending, pendingName{name, skipped})
	}
}

func (p *Parser) pendName(name string, skipped bool) {
	if skipped {
		p.skipped.add(name)
	} else {
		p.passed.add(name)
	}
}

// tapPop drops the subtests at indent or deeper.
func (p *Parser) tapPop(indent int) {
	for len(p.tapStack) > 0 && p.tapStack[len(p.tapStack)-1].indent >= indent {
		p.tapStack = p.tapStack[:len(p.tapStack)-1]
	}
}
