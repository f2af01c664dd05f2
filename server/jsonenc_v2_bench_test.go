//go:build goexperiment.jsonv2

package server

import (
	stdjsonv1 "encoding/json"
	"encoding/json/jsontext"
	stdjsonv2 "encoding/json/v2"
)

// Go 1.26 ships encoding/json/v2 only under GOEXPERIMENT=jsonv2 (which
// also reimplements encoding/json on top of it, which then writes invalid
// UTF-8 as a raw U+FFFD, not \ufffd); then the page benchmark measures it
// too:
//
//	GOEXPERIMENT=jsonv2 go test ./server -run '^$' -bench SearchPage -benchmem
func init() {
	v2Shape := stdjsonv2.JoinOptions(
		jsontext.AllowInvalidUTF8(true),
		jsontext.EscapeForHTML(true),
		jsontext.EscapeForJS(true),
		stdjsonv2.FormatNilSliceAsNull(true),
		stdjsonv1.OmitEmptyWithLegacySemantics(true),
	)
	pageEncoders[1].sameBytes = false // encoding/json, now on top of v2
	pageEncoders = append(pageEncoders, pageEncoder{"encoding-json-v2", false,
		marshalEach(func(v any) ([]byte, error) { return stdjsonv2.Marshal(v, v2Shape) })})
}
