// Package args is the one place where recipe constructors check what they
// are given, and where what recipes.NodeOption sets lives (the root package
// declares the option type over Options; internal packages cannot import
// it), so every recipe applies the same rules with the same words.
package args

import (
	"bytes"
	"fmt"
	"os"

	"github.com/zkrecipes/recipes/internal/zpath"
)

// MaxDataSize is the most node data a recipe accepts: ZooKeeper refuses a
// request larger than its jute.maxbuffer (by default 1 MiB - 1 byte), and the
// request carries the path and ACL too, for which 1 KiB is kept back.
const MaxDataSize = 1<<20 - 1<<10

// DefaultData identifies this process: "host:pid".
func DefaultData() []byte {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Appendf(nil, "%s:%d", host, os.Getpid())
}

// Options is what the shared options set.
type Options struct {
	data    []byte
	dataSet bool // even to nil or empty: then the nodes carry no data
}

// SetData sets the data of the nodes a recipe creates (WithData).
func (o *Options) SetData(data []byte) { o.data, o.dataSet = data, true }

// Where checks the session and path that everything a recipe package does
// is given: sess must not be nil, and path must be a valid absolute
// ZooKeeper path. Its errors wrap invalid.
func Where[S any](sess *S, path string, invalid error) error {
	if sess == nil {
		return fmt.Errorf("%w: nil session", invalid)
	}
	if err := zpath.Validate(path); err != nil {
		return fmt.Errorf("%w: %w", invalid, err)
	}
	return nil
}

// AtLeastOne checks a recipe's count (a semaphore's leases, a double
// barrier's members): n must be 1 or more. unit names one of what is
// counted; its error wraps invalid.
func AtLeastOne(n int, recipe, unit string, invalid error) error {
	if n < 1 {
		return fmt.Errorf("%w: %s needs at least 1 %s, not %d", invalid, recipe, unit, n)
	}
	return nil
}

// Check applies opts and checks what every recipe constructor is given: a
// session (a *recipes.Session; only whether it is nil is checked), a valid
// path, and data within MaxDataSize. It returns the data the recipe's nodes
// carry: its own copy of what was set, or DefaultData. Its errors wrap
// invalid, the recipe package's own sentinel.
func Check[S any, O ~func(*Options)](sess *S, path string, opts []O, invalid error) ([]byte, error) {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	if err := Where(sess, path, invalid); err != nil {
		return nil, err
	}
	if !o.dataSet {
		return DefaultData(), nil
	}
	if len(o.data) > MaxDataSize {
		return nil, fmt.Errorf("%w: node data is %d bytes, more than MaxDataSize (%d)", invalid, len(o.data), MaxDataSize)
	}
	// A copy, as Curator makes (CURATOR-140): the caller may reuse its
	// buffer, and every node the recipe creates must carry what was given.
	return bytes.Clone(o.data), nil
}
