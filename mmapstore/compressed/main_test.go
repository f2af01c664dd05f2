package compressed

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no decoder leaves a goroutine behind: Readers have
// no Close, so the zstd decoder must run synchronously.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
