package lockapi_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// goroutine a Client starts (watchdog, loss monitor) must exit on Release
// or loss.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
