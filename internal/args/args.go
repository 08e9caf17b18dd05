// Package args is the one place where recipe constructors check what they
// are given, and where what recipes.NodeOption sets lives (the root package
// declares the option type over Options; internal packages cannot import
// it), so every recipe applies the same rules with the same words.
package args

import (
	"bytes"
	"errors"
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

// ErrInvalid is wrapped by every error for bad input. The root package
// exports it as recipes.ErrInvalid, and the recipe packages as theirs.
var ErrInvalid = errors.New("recipes: invalid argument")

// A Session is what a recipe is built on: only whether it is nil, and its
// chroot, matter here. P is *recipes.Session, which this package cannot name.
type Session[S any] interface {
	*S
	Chroot() string
}

// Where checks the session and path that everything a recipe package does
// is given: sess must not be nil, and path must be a valid absolute
// ZooKeeper path. Its errors wrap ErrInvalid.
func Where[S any, P Session[S]](sess P, path string) error {
	if sess == nil {
		return fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if err := zpath.Validate(path); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// AtLeastOne checks a recipe's count (a semaphore's leases, a double
// barrier's members): n must be 1 or more. unit names one of what is
// counted; its error wraps ErrInvalid.
func AtLeastOne(n int, recipe, unit string) error {
	if n < 1 {
		return fmt.Errorf("%w: %s needs at least 1 %s, not %d", ErrInvalid, recipe, unit, n)
	}
	return nil
}

// A Target is where a recipe's nodes go and what they carry, from arguments
// that passed Check.
type Target struct {
	Path string // as the caller gave it
	Dir  string // in ZooKeeper: Path under the session's chroot
	Data []byte // what the recipe's nodes carry
}

// Check applies opts and checks what every recipe constructor is given: a
// session, a valid path, data within MaxDataSize, and then the recipe's own
// checks (more: AtLeastOne's results), the first failed one reported. The
// Target's data is its own copy of what was set, or DefaultData. Its errors
// wrap ErrInvalid.
func Check[S any, P Session[S], O ~func(*Options)](sess P, path string, opts []O, more ...error) (Target, error) {
	var o Options
	for _, opt := range opts {
		if opt == nil {
			return Target{}, fmt.Errorf("%w: a nil option", ErrInvalid)
		}
		opt(&o)
	}
	if err := Where(sess, path); err != nil {
		return Target{}, err
	}
	if o.dataSet && len(o.data) > MaxDataSize {
		return Target{}, fmt.Errorf("%w: node data is %d bytes, more than MaxDataSize (%d)", ErrInvalid, len(o.data), MaxDataSize)
	}
	for _, err := range more {
		if err != nil {
			return Target{}, err
		}
	}
	t := Target{Path: path, Dir: zpath.Under(sess.Chroot(), path), Data: DefaultData()}
	if o.dataSet {
		// A copy, as Curator makes (CURATOR-140): the caller may reuse its
		// buffer, and every node the recipe creates must carry what was given.
		t.Data = bytes.Clone(o.data)
	}
	return t, nil
}
