// Package args is the one place where recipe constructors check what they
// are given, and where the options that locks and barriers share live: the
// recipe packages declare their own Option type over Options and wrap their
// own ErrInvalid, so both apply the same rules with the same words.
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
	if sess == nil {
		return nil, fmt.Errorf("%w: nil session", invalid)
	}
	if err := zpath.Validate(path); err != nil {
		return nil, fmt.Errorf("%w: %w", invalid, err)
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
