package indexer

import "bytes"

var nl = []byte{'\n'}

func countNL(b []byte) int { return bytes.Count(b, nl) }
func indexNL(b []byte) int { return bytes.IndexByte(b, '\n') }
