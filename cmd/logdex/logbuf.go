package main

import (
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// logBuffer batches the server's log lines: one write(2) per access-log
// line cost about 5% of a busy server's CPU. Lines wait at most
// logFlushEvery (nginx's access_log buffer/flush does the same); warnings
// and errors go out at once, and Close writes what is left.
type logBuffer struct {
	mu   sync.Mutex
	out  io.Writer
	buf  []byte
	stop chan struct{}
	done chan struct{}
}

const (
	logFlushEvery = 100 * time.Millisecond
	logFlushBytes = 64 << 10
)

func newLogBuffer(out io.Writer) *logBuffer {
	b := &logBuffer{out: out, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(logFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.flush()
			case <-b.stop:
				return
			}
		}
	}()
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	return b.WriteLevel(zerolog.NoLevel, p)
}

// WriteLevel makes logBuffer a zerolog.LevelWriter.
func (b *logBuffer) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) >= logFlushBytes || (l >= zerolog.WarnLevel && l != zerolog.NoLevel) {
		b.flushLocked()
	}
	return len(p), nil
}

func (b *logBuffer) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	if len(b.buf) > 0 {
		b.out.Write(b.buf)
		b.buf = b.buf[:0]
	}
}

// Close stops the flusher and writes what is buffered.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	b.flush()
	return nil
}
