package mmapstore

// Compressed files' restart points: the table of a compressed file
// (package compressed's encoding) is kept in the segment holding its last
// lines, found by file id.

import "encoding/binary"

// Checkpoints returns the restart-point table of compressed file id if this
// segment holds it (ok false otherwise). The bytes alias the mapping.
func (s *Segment) Checkpoints(id uint64) (table []byte, ok bool, err error) {
	if err := s.check(); err != nil {
		return nil, false, err
	}
	if len(s.ckpts.data) == 0 {
		return nil, false, nil
	}
	head, err := s.readTail(&s.ckpts, 0, binary.MaxVarintLen64)
	if err != nil {
		return nil, false, err
	}
	n, w := binary.Uvarint(head)
	if w <= 0 || n > uint64(len(s.ckpts.data)) {
		return nil, false, s.damaged(s.corrupt("checkpoints", int64(s.ckpts.off), "bad count"))
	}
	// The list is small (one entry per compressed file of the segment):
	// read it whole, then the one table.
	list, err := s.readTail(&s.ckpts, 0, uint64(w)+n*3*binary.MaxVarintLen64)
	if err != nil {
		return nil, false, err
	}
	d := Decbuf{B: list[w:]}
	type ent struct{ id, off, n uint64 }
	var found *ent
	for range n {
		e := ent{d.Uvarint(), d.Uvarint(), d.Uvarint()}
		if d.Err != nil {
			return nil, false, s.damaged(s.corrupt("checkpoints", int64(s.ckpts.off), "%v", d.Err))
		}
		if e.id == id {
			found = &e
		}
	}
	if found == nil {
		return nil, false, nil
	}
	base := uint64(len(list) - d.Len())
	if found.off > uint64(len(s.ckpts.data))-base {
		return nil, false, s.damaged(s.corrupt("checkpoints", int64(s.ckpts.off), "file %d's table out of bounds", id))
	}
	b, err := s.read(&s.ckpts, base+found.off, found.n)
	return b, err == nil, err
}
