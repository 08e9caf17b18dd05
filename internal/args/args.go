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

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// MaxDataSize is the most node data a recipe accepts, whatever its path:
// 1 KiB below ZooKeeper's default jute.maxbuffer, for the path and ACL the
// request carries too, and so that a Java client, which reads a reply only
// below its own jute.maxbuffer, can read the data back. Every request is
// checked as a whole as well (Fits).
const MaxDataSize = 1<<20 - 1<<10

// MaxRequest is the largest request ZooKeeper takes with its default
// jute.maxbuffer: see package jute.
const MaxRequest = jute.MaxRequest

// Fits checks that a request of size bytes, described by what ("the create
// of a lock node in /a", say), is one ZooKeeper takes. Its error wraps
// ErrInvalid and names the limit and the size.
func Fits(what string, size int) error {
	if size <= MaxRequest {
		return nil
	}
	return fmt.Errorf("%w: %s would be a %d-byte request, over ZooKeeper's limit of %d bytes (its default jute.maxbuffer), past which the server drops the connection", ErrInvalid, what, size, MaxRequest)
}

// Short is p as an error message shows it: whole if short, else its start
// and its length.
func Short(p string) string {
	const keep = 48
	if len(p) <= keep+16 {
		return p
	}
	return fmt.Sprintf("%s... (%d bytes)", p[:keep], len(p))
}

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

// A Session is what a recipe is built on: only whether it is nil, its
// chroot and its ACL matter here. P is *recipes.Session, which this package
// cannot name.
type Session[S any] interface {
	*S
	Chroot() string
	ACL() []zk.ACL
	ParentACL() []zk.ACL
}

// Where checks the session and path that everything a recipe package does
// is given: sess must not be nil, and path must be a valid absolute
// ZooKeeper path, short enough, under the session's chroot, to be read and
// deleted (the recipes' checks of what they create come on top: see Fits).
// Its errors wrap ErrInvalid.
func Where[S any, P Session[S]](sess P, path string) error {
	if sess == nil {
		return fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if err := zpath.Validate(path); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	full := zpath.Under(sess.Chroot(), path)
	return Fits("a delete of "+Short(full), max(jute.Read(full), jute.Delete(full)))
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
	// The containers made above the path carry WithParentACL's ACL, which
	// may be longer than the nodes' own: the longest is made with the path's
	// parent's name.
	if up := zpath.Ancestors(t.Dir); len(up) > 0 {
		if err := Fits("the create of parent "+Short(up[0]), jute.Create(up[0], 0, sess.ParentACL())); err != nil {
			return Target{}, err
		}
	}
	if o.dataSet {
		// A copy, as Curator makes (CURATOR-140): the caller may reuse its
		// buffer, and every node the recipe creates must carry what was given.
		t.Data = bytes.Clone(o.data)
	}
	return t, nil
}
