package statefile

import (
	"fmt"
	"hash/crc32"
)

// encodeSlot is a slot as the releases before the journal's records wrote
// it (format 1): a header line and the whole state, nothing after it.
func encodeSlot(seq uint64, pubs [2]string, payload []byte) []byte {
	head := fmt.Sprintf("%s 1 %d %d %s %s", journalMagic, seq, len(payload), orDash(pubs[0]), orDash(pubs[1]))
	sum := crc32.NewIEEE()
	sum.Write([]byte(head))
	sum.Write(payload)
	buf := fmt.Appendf(nil, "%s %08x\n", head, sum.Sum32())
	return append(buf, payload...)
}
