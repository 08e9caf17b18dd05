package integration_test

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/zkrecipes/recipes"
)

// TestConnectRefusesASessionTimeoutZooKeeperCannotCarry: the handshake
// carries the timeout as 32-bit milliseconds, so below 1ms or above
// MaxSessionTimeout it would reach the server as 0 or wrapped around;
// Connect refuses it with ErrInvalid before dialling. The bounds themselves
// are accepted (the dial fails instead).
func TestConnectRefusesASessionTimeoutZooKeeperCannotCarry(t *testing.T) {
	t.Parallel()
	var dialled atomic.Bool
	dialer := recipes.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
		dialled.Store(true)
		return nil, errors.New("dialled")
	})
	for _, d := range []time.Duration{time.Microsecond, recipes.MaxSessionTimeout + time.Millisecond, 1000 * time.Hour} {
		_, err := recipes.Connect(bg(), []string{"127.0.0.1:1"}, dialer, recipes.WithSessionTimeout(d))
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%v", d)
	}
	assert.False(t, dialled.Load(), "bad input was dialled")
	for _, d := range []time.Duration{time.Millisecond, recipes.MaxSessionTimeout} {
		_, err := recipes.Connect(bg(), []string{"127.0.0.1:1"}, dialer, recipes.WithSessionTimeout(d),
			recipes.WithTickTime(d/2), recipes.WithConnectTimeout(100*time.Millisecond))
		assert.NotErrorIs(t, err, recipes.ErrInvalid, "%v", d)
		assert.Error(t, err, "%v", d)
	}
}
