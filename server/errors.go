package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/logdex/logdex/query/lang"
)

// apiError is the body of every error response. Messages are written for
// the client; internal errors (with paths) go to the log only.
type apiError struct {
	Error    string `json:"error"`
	Position *int   `json:"position,omitempty"` // character offset in q, for malformed queries
}

// statusError is a request rejected with a status and a client message.
type statusError struct {
	code int
	msg  string
	pos  *int
}

func (e *statusError) Error() string { return e.msg }

func badRequest(msg string) *statusError { return &statusError{code: http.StatusBadRequest, msg: msg} }
func unprocessable(msg string) *statusError {
	return &statusError{code: http.StatusUnprocessableEntity, msg: msg}
}
func notFound(msg string) *statusError { return &statusError{code: http.StatusNotFound, msg: msg} }

// queryError turns a compile error into a 400, with the position when it
// is a parse error.
func queryError(err error) *statusError {
	var pe *lang.ParseError
	if errors.As(err, &pe) {
		pos := pe.Pos
		return &statusError{code: http.StatusBadRequest, msg: pe.Msg, pos: &pos}
	}
	return badRequest(err.Error())
}

func writeStatusError(w http.ResponseWriter, e *statusError) {
	writeJSON(w, e.code, apiError{Error: e.msg, Position: e.pos})
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

// unavailable is a 503 that tells the client when to come back.
func unavailable(w http.ResponseWriter, retryAfter int, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeError(w, http.StatusServiceUnavailable, msg)
}

// writeJSON sends v with a Content-Length (so small answers keep the
// connection alive without chunking).
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b)
}
