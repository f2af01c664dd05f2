package mmapstore

// One packed dictionary block (format 5): up to BlockTerms sorted id-shaped
// terms with their postings references, front-coded and bit-packed. Random
// ids (hex trace ids, ULIDs, numbers) are most of a high-cardinality
// dictionary; a block's suffixes then use a handful of distinct bytes,
// stored at 4 or 5 bits each instead of the byte per character a vellum
// FST takes, and a block decodes in about a microsecond where walking an
// FST costs a microsecond a term. Other blocks go to FSTs (dictfst.go).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// MaxTermLen is the longest term a dictionary holds (longer tokens make
// their lines unindexed).
const MaxTermLen = 255

// Alphabet kinds of a block (the byte after the field widths).
const (
	alphaHex      = 0   // the 16 lower-case hex digits, 4 bits each
	alphaIdentity = 255 // every byte value, 8 bits each
	maxAlphaList  = 128 // 1..128: that many distinct bytes listed, ascending
)

const hexDigits = "0123456789abcdef"

var hexAlphabet = []byte(hexDigits) // shared: a block reader must not allocate

// blockHeaderSize is n−1, the prefix and suffix widths, the narrow and
// wide reference widths and the alphabet kind.
const blockHeaderSize = 6

// appendDictBlock encodes terms [lo, hi) of term (sorted, distinct,
// 1..MaxTermLen bytes) with their references refs[i].
func appendDictBlock(dst []byte, lo, hi int, term func(int) []byte, refs []uint64) ([]byte, error) {
	n := hi - lo
	if n < 1 || n > 256 {
		return nil, fmt.Errorf("dictionary block of %d terms", n)
	}
	var used [256]bool
	var pre [256]uint8 // each term's prefix shared with the one before (MaxTermLen fits)
	var maxP, maxS int
	var maxRef uint64
	var prev []byte
	for i := lo; i < hi; i++ {
		t := term(i)
		if len(t) == 0 || len(t) > MaxTermLen {
			return nil, fmt.Errorf("term of %d bytes", len(t))
		}
		p := commonPrefix(prev, t)
		if i > lo && (p == len(t) || p < len(prev) && t[p] < prev[p]) {
			return nil, fmt.Errorf("terms out of order: %q after %q", t, prev)
		}
		pre[i-lo] = uint8(p)
		for _, c := range t[p:] {
			used[c] = true
		}
		maxP, maxS, maxRef = max(maxP, p), max(maxS, len(t)-p), max(maxRef, refs[i])
		prev = t
	}
	var code [256]byte
	kind, width := alphabet(&used, &code)
	wp, ws, wr := uint(bits.Len(uint(maxP))), uint(bits.Len(uint(maxS))), uint(bits.Len64(maxRef))
	wn := narrowWidth(refs[lo:hi], wr)
	dst = append(dst, byte(n-1), byte(wp), byte(ws), byte(wn), byte(wr), byte(kind))
	if kind > alphaHex && kind <= maxAlphaList {
		for c := range used {
			if used[c] {
				dst = append(dst, byte(c))
			}
		}
	}
	var bw bitWriter
	for i := lo; i < hi; i++ {
		t, p := term(i), int(pre[i-lo])
		bw.put(uint64(p), wp)
		bw.put(uint64(len(t)-p), ws)
		if wn < wr {
			// A selector bit: 0 for a narrow reference, 1 for a wide one.
			wide := bits.Len64(refs[i]) > int(wn)
			bw.put(b2u(wide), 1)
			if !wide {
				bw.put(refs[i], wn)
				continue
			}
		}
		bw.put(refs[i], wr)
	}
	// The records' length in bits comes first, so that the suffixes are
	// found without decoding the records.
	recBits := uint64(len(bw.b))*8 + uint64(bw.nacc)
	for i := lo; i < hi; i++ {
		for _, c := range term(i)[pre[i-lo]:] {
			bw.put32(uint64(code[c]), width)
		}
	}
	dst = binary.AppendUvarint(dst, recBits)
	return append(dst, bw.flush()...), nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// narrowWidth picks the narrow reference width of a block: references
// wider than it take a selector bit and wr bits, the others a selector bit
// and the narrow width (or all wr bits, when no narrow width saves bits).
// Single line ids are narrower than list offsets and packed ids: one wide
// reference no longer widens every other of its block.
func narrowWidth(refs []uint64, wr uint) uint {
	var count [65]int // references by bit length
	for _, r := range refs {
		count[bits.Len64(r)]++
	}
	best, bestBits := wr, len(refs)*int(wr)
	fit := 0 // references of at most w bits
	for w := uint(0); w < wr; w++ {
		fit += count[w]
		if c := len(refs) + fit*int(w) + (len(refs)-fit)*int(wr); c < bestBits {
			best, bestBits = w, c
		}
	}
	return best
}

// alphabet picks the block's symbol coding for the bytes used and fills
// code with each byte's symbol.
func alphabet(used *[256]bool, code *[256]byte) (kind int, width uint) {
	k, hex := 0, true
	for c, u := range used {
		if u {
			code[c] = byte(k)
			k++
			hex = hex && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f')
		}
	}
	switch {
	case hex:
		for i := range len(hexDigits) {
			code[hexDigits[i]] = byte(i)
		}
		return alphaHex, 4
	case k <= maxAlphaList:
		return k, uint(bits.Len(uint(k - 1)))
	}
	for c := range code {
		code[c] = byte(c)
	}
	return alphaIdentity, 8
}

// bitWriter appends values of up to 64 bits, least significant bit first.
type bitWriter struct {
	b    []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) put(v uint64, n uint) {
	if n > 32 {
		w.put32(v&(1<<32-1), 32)
		v, n = v>>32, n-32
	}
	w.put32(v, n)
}

// put32 appends n ≤ 32 bits. Fewer than 32 bits wait in acc, and whole
// 32-bit words go out at once: most values are a few bits (4-bit symbols).
func (w *bitWriter) put32(v uint64, n uint) {
	w.acc |= (v & (1<<n - 1)) << w.nacc
	w.nacc += n
	if w.nacc >= 32 {
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(w.acc))
		w.acc >>= 32
		w.nacc -= 32
	}
}

func (w *bitWriter) flush() []byte {
	for w.nacc > 0 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.nacc -= min(w.nacc, 8)
	}
	return w.b
}

// getBits reads n ≤ 64 bits at bit position pos of b; the caller has
// checked that pos+n ≤ 8·len(b). The common case is one unaligned 8-byte
// load.
func getBits(b []byte, pos uint64, n uint) uint64 {
	if i := pos >> 3; n <= 56 && i+8 <= uint64(len(b)) {
		return binary.LittleEndian.Uint64(b[i:]) >> (pos & 7) & (1<<n - 1)
	}
	return getBitsSlow(b, pos, n)
}

// getBitsSlow is getBits near the end of b or for more than 56 bits.
func getBitsSlow(b []byte, pos uint64, n uint) uint64 {
	if n > 32 {
		return getBitsSlow(b, pos, 32) | getBitsSlow(b, pos+32, n-32)<<32
	}
	i := pos / 8
	var x uint64
	for k := uint64(0); k < 8 && i+k < uint64(len(b)); k++ {
		x |= uint64(b[i+k]) << (8 * k)
	}
	return x >> (pos % 8) & (1<<n - 1)
}

var errBlockShort = errors.New("block shorter than its terms")

// blockReader walks an encoded block's records and suffix symbols,
// checking every read against the block's bounds.
type blockReader struct {
	n              int
	wp, ws, wn, wr uint
	alpha          []byte // nil: identity
	width          uint   // bits per symbol
	body           []byte // the records' and symbols' bits
	recBits, limit uint64
	pos, sym       uint64 // bit positions of the next record and symbol
	plen           int    // length of the previous term
}

func newBlockReader(b []byte) (r blockReader, err error) {
	if len(b) < blockHeaderSize {
		return r, errBlockShort
	}
	r = blockReader{n: int(b[0]) + 1, wp: uint(b[1]), ws: uint(b[2]), wn: uint(b[3]), wr: uint(b[4])}
	if r.wp > 8 || r.ws > 8 || r.wr > 64 || r.wn > r.wr {
		return r, fmt.Errorf("field widths %d, %d, %d, %d out of range", r.wp, r.ws, r.wn, r.wr)
	}
	body := b[blockHeaderSize:]
	switch kind := int(b[5]); {
	case kind == alphaHex:
		r.alpha, r.width = hexAlphabet, 4
	case kind <= maxAlphaList:
		if len(body) < kind {
			return r, errBlockShort
		}
		r.alpha, body = body[:kind], body[kind:]
		for i := 1; i < kind; i++ {
			if r.alpha[i] <= r.alpha[i-1] {
				return r, fmt.Errorf("alphabet not ascending")
			}
		}
		r.width = uint(bits.Len(uint(kind - 1)))
	case kind == alphaIdentity:
		r.width = 8
	default:
		return r, fmt.Errorf("alphabet kind %d", kind)
	}
	recBits, k := binary.Uvarint(body)
	if k <= 0 {
		return r, errBlockShort
	}
	r.body = body[k:]
	r.limit = uint64(len(r.body)) * 8
	// A record takes at least wp + ws and the narrow width (and a
	// selector bit when there are two widths).
	minRec := uint64(r.wp + r.ws + r.wr)
	if r.wn < r.wr {
		minRec = uint64(r.wp + r.ws + 1 + r.wn)
	}
	if recBits > r.limit || recBits < uint64(r.n)*minRec {
		return r, fmt.Errorf("records of %d bits", recBits)
	}
	r.recBits, r.sym = recBits, recBits
	return r, nil
}

// record reads term i's record: its shared prefix, suffix length and
// reference.
func (r *blockReader) record(i int) (p, sl int, ref uint64, err error) {
	if r.pos+uint64(r.wp+r.ws) > r.recBits {
		return 0, 0, 0, errBlockShort
	}
	p = int(getBits(r.body, r.pos, r.wp))
	sl = int(getBits(r.body, r.pos+uint64(r.wp), r.ws))
	r.pos += uint64(r.wp + r.ws)
	w := r.wr
	if r.wn < r.wr {
		if r.pos+1 > r.recBits {
			return 0, 0, 0, errBlockShort
		}
		if getBits(r.body, r.pos, 1) == 0 {
			w = r.wn
		}
		r.pos++
	}
	if r.pos+uint64(w) > r.recBits {
		return 0, 0, 0, errBlockShort
	}
	ref = getBits(r.body, r.pos, w)
	r.pos += uint64(w)
	if i == 0 && p != 0 || p > r.plen || sl == 0 || p+sl > MaxTermLen {
		return 0, 0, 0, fmt.Errorf("term %d: prefix %d and suffix %d after a term of %d bytes", i, p, sl, r.plen)
	}
	if r.sym+uint64(sl)*uint64(r.width) > r.limit {
		return 0, 0, 0, errBlockShort
	}
	r.plen = p + sl
	return p, sl, ref, nil
}

// symbol reads the next suffix byte (record has checked the bounds).
func (r *blockReader) symbol() (byte, error) {
	c := getBits(r.body, r.sym, r.width)
	r.sym += uint64(r.width)
	if r.alpha == nil {
		return byte(c), nil
	}
	if c >= uint64(len(r.alpha)) {
		return 0, fmt.Errorf("symbol %d outside the alphabet", c)
	}
	return r.alpha[c], nil
}

// end checks that the records and symbols fill the block exactly.
func (r *blockReader) end() error {
	if r.pos != r.recBits {
		return fmt.Errorf("records of %d bits, %d declared", r.pos, r.recBits)
	}
	if (r.sym+7)/8 != uint64(len(r.body)) {
		return fmt.Errorf("%d bytes after the last term", uint64(len(r.body))-(r.sym+7)/8)
	}
	return nil
}

// decodeDictBlock calls fn for every term of an encoded block, in order,
// with its reference, until fn returns false. The term slice is only valid
// during the call. Damaged bytes give an error, never a panic: every field
// is checked against the block's length, the alphabet and the order of
// the terms.
func decodeDictBlock(b []byte, fn func(term []byte, ref uint64) bool) error {
	r, err := newBlockReader(b)
	if err != nil {
		return err
	}
	var buf [MaxTermLen]byte
	plen := 0
	for i := range r.n {
		p, sl, ref, err := r.record(i)
		if err != nil {
			return err
		}
		for k := p; k < p+sl; k++ {
			c, err := r.symbol()
			if err != nil {
				return fmt.Errorf("term %d: %w", i, err)
			}
			if k == p && p < plen && c <= buf[p] {
				return fmt.Errorf("term %d out of order", i)
			}
			buf[k] = c
		}
		plen = p + sl
		if !fn(buf[:plen], ref) {
			return nil
		}
	}
	return r.end()
}

// lookupDictBlock finds term in an encoded block. It compares as it goes
// instead of rebuilding every term: a term sharing more of its prefix with
// the previous one than that one shared with the target sorts before the
// target, and its suffix is skipped undecoded (front-coded search), so a
// lookup reads the records and a few symbols.
func lookupDictBlock(b []byte, term []byte) (ref uint64, ok bool, err error) {
	r, err := newBlockReader(b)
	if err != nil {
		return 0, false, err
	}
	m := 0 // bytes the previous term shares with term
	for i := range r.n {
		p, sl, ref, err := r.record(i)
		if err != nil {
			return 0, false, err
		}
		switch {
		case i > 0 && p > m:
			// Same as the previous term up to m and beyond: it still
			// differs from term at m (or is a prefix of it), below term.
			r.sym += uint64(sl) * uint64(r.width)
			continue
		case i > 0 && p < m:
			// It differs from the previous term at p, upwards, where the
			// previous term equalled term: above term.
			return 0, false, nil
		}
		// p == m: compare the suffix with term[m:].
		k := 0
		for ; k < sl; k++ {
			c, err := r.symbol()
			if err != nil {
				return 0, false, fmt.Errorf("term %d: %w", i, err)
			}
			if m+k == len(term) || c > term[m+k] {
				return 0, false, nil // above term
			}
			if c < term[m+k] {
				r.sym += uint64(sl-k-1) * uint64(r.width)
				break
			}
		}
		if k == sl { // term[:m+sl] matched
			if m+sl == len(term) {
				return ref, true, nil
			}
			m += sl // a prefix of term: below it
			continue
		}
		m += k
	}
	return 0, false, nil
}
