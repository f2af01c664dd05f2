package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogBuffer: info lines are batched but out within the flush period,
// warnings go out at once, Close writes the rest.
func TestLogBuffer(t *testing.T) {
	var out syncBuf
	lb := newLogBuffer(&out)
	log := zerolog.New(lb)
	log.Info().Msg("first")
	log.Warn().Msg("trouble")
	if s := out.String(); !strings.Contains(s, "first") || !strings.Contains(s, "trouble") {
		t.Fatalf("a warning did not flush: %q", s)
	}
	log.Info().Msg("second")
	for start := time.Now(); !strings.Contains(out.String(), "second"); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("buffered line never flushed")
		}
	}
	lb.mu.Lock()
	lb.buf = append(lb.buf, "last\n"...) // as if just written, before any tick
	lb.mu.Unlock()
	lb.Close()
	if !strings.HasSuffix(out.String(), "last\n") {
		t.Fatalf("Close lost the tail: %q", out.String())
	}
}
