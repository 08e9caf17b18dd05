package znode

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
)

// Session is what the recipes' node operations need of a session.
// *recipes.Session is the one implementation; the internal packages name
// this interface instead of importing the package that uses them.
type Session interface {
	// Retry calls op until it gets past connection problems; see
	// recipes.Session.Retry.
	Retry(ctx context.Context, op func(conn *zk.Conn) error) error
	// Delete is Curator's guaranteed delete; see recipes.Session.Delete.
	Delete(ctx context.Context, path string) error
	// Go runs f on a goroutine the session's Close waits for, unless the
	// session has ended.
	Go(f func()) bool
	Done() <-chan struct{}
	Err() error
	ID() int64
	Timeout() time.Duration
	// Disconnects counts the connections the session lost, and reports
	// whether it can; see recipes.Session.Disconnects.
	Disconnects() (n int64, ok bool)
	// ACL is the ACL of every node the recipes create at and below
	// their own paths; see recipes.WithACL.
	ACL() []zk.ACL
	// ParentACL is the ACL of the container parents the recipes create
	// above their own paths; see recipes.WithParentACL.
	ParentACL() []zk.ACL
	// Chroot is the path the recipes work under ("" for none); see
	// recipes.WithChroot.
	Chroot() string

	// internals returns what the session carries for the internal
	// packages (internals.go).
	internals() *Internals
}

// ErrSessionExpired is what a watch that go-zookeeper stops because the
// session expired reports, even before the session has heard. It is
// recipes.ErrSessionExpired: declared here, where the watches that report
// it can name it, and exported by the root package.
var ErrSessionExpired = errors.New("recipes: session expired")
