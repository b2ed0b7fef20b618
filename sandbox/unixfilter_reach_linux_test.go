package sandbox

import (
	"testing"

	"golang.org/x/net/bpf"
)

// TestUnixSocketProgramJumpReach: the filter's assembler refuses a
// conditional jump farther than BPF's 8-bit offset reaches (it would wrap
// and land on the wrong instruction: a filter that allows what it should
// refuse), and resolves one at the farthest reach exactly, from a jump
// that is not the program's first instruction. A jump to itself or back
// is refused too (its offset would wrap to 255).
func TestUnixSocketProgramJumpReach(t *testing.T) {
	build := func(gap int) ([]bpf.Instruction, error) {
		var p prog
		p.add(bpf.LoadAbsolute{Off: seccompNr, Size: 4})
		p.jumpIf(41, "far") // instruction 1
		for range gap {
			p.add(bpf.RetConstant{Val: 1})
		}
		p.label("far")
		p.add(bpf.RetConstant{Val: 0})
		return p.resolve()
	}
	ins, err := build(255)
	if err != nil {
		t.Fatalf("a jump of 255 instructions from instruction 1: %v", err)
	}
	if j, ok := ins[1].(bpf.JumpIf); !ok || j.SkipTrue != 255 {
		t.Errorf("instruction 1 = %#v, want a JumpIf skipping 255", ins[1])
	}
	if _, err := build(256); err == nil {
		t.Error("a jump of 256 instructions resolved; BPF's conditional offset cannot hold it")
	}
	for _, back := range []int{0, 1} {
		var p prog
		p.add(bpf.LoadAbsolute{Off: seccompNr, Size: 4})
		if back == 1 {
			p.label("here")
		}
		p.add(bpf.LoadAbsolute{Off: seccompArg0, Size: 4})
		if back == 0 {
			p.label("here")
		}
		p.jumpIf(41, "here")
		p.add(bpf.RetConstant{Val: 0})
		if ins, err := p.resolve(); err == nil {
			t.Errorf("a jump %d back resolved: %#v", back, ins)
		}
	}
}
