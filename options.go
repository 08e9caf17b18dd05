package recipes

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/telemetry"
)

// DefaultSessionTimeout is the session timeout asked of ZooKeeper when no
// WithSessionTimeout option is given. The server may grant a different one
// (it clamps to its minSessionTimeout..maxSessionTimeout, by default 2 to 20
// ticks); a session made by Connect uses the granted value.
const DefaultSessionTimeout = 10 * time.Second

// MaxSessionTimeout is the longest session timeout ZooKeeper can be asked
// for: the handshake carries it as a 32-bit count of milliseconds (about
// 24.8 days). WithSessionTimeout takes 1ms to this; the server then grants
// what its minSessionTimeout and maxSessionTimeout allow (Session.Timeout).
const MaxSessionTimeout = math.MaxInt32 * time.Millisecond

// DefaultConnectTimeout bounds how long Connect waits for a session when its
// context has no earlier deadline (Curator's default connection timeout).
const DefaultConnectTimeout = 15 * time.Second

// An Option configures a Session.
type Option func(*options)

type options struct {
	timeout        time.Duration
	connectTimeout time.Duration
	tick           time.Duration // 0: half the session timeout
	noIdleProbes   bool          // WithoutIdleProbes
	dialer         zk.Dialer
	logger         zk.Logger
	listener       func(State)
	slog           *slog.Logger
	meters         metric.MeterProvider // nil: otel's global provider
	auth           []authCreds
	acl            []zk.ACL // nil: OpenACL
	aclSet         bool
	parentACL      []zk.ACL // nil: derived from the nodes' ACL (parentACL())
	parentACLSet   bool
	tls            *tls.Config
	chroot         string // "" for none
	chrootSet      bool
	chrootErr      error
	nilOption      bool // an Option was nil
}

// authCreds are one WithAuth.
type authCreds struct{ scheme, auth string }

func buildOptions(opts []Option) options {
	o := options{timeout: DefaultSessionTimeout, connectTimeout: DefaultConnectTimeout, logger: quietLogger{}}
	for _, opt := range opts {
		if opt == nil {
			o.nilOption = true
			continue
		}
		opt(&o)
	}
	return o
}

// check reports options no session can work with.
func (o options) check() error {
	switch {
	case o.nilOption:
		return fmt.Errorf("%w: a nil Option", ErrInvalid)
	case o.timeout <= 0:
		return fmt.Errorf("%w: session timeout %v is not positive", ErrInvalid, o.timeout)
	case o.timeout < time.Millisecond || o.timeout > MaxSessionTimeout:
		return fmt.Errorf("%w: session timeout %v: ZooKeeper takes 1ms to %v", ErrInvalid, o.timeout, MaxSessionTimeout)
	case o.connectTimeout <= 0:
		return fmt.Errorf("%w: connect timeout %v is not positive", ErrInvalid, o.connectTimeout)
	case o.tick < 0:
		return fmt.Errorf("%w: tickTime %v is negative", ErrInvalid, o.tick)
	case o.tick >= o.timeout:
		return fmt.Errorf("%w: tickTime %v is not below the session timeout %v", ErrInvalid, o.tick, o.timeout)
	case o.aclSet && len(o.acl) == 0:
		return fmt.Errorf("%w: empty ACL: nobody could use the nodes", ErrInvalid)
	case o.parentACLSet && len(o.parentACL) == 0:
		return fmt.Errorf("%w: empty parent ACL: nobody could create below the parents", ErrInvalid)
	case o.chrootErr != nil:
		return fmt.Errorf("%w: chroot: %w", ErrInvalid, o.chrootErr)
	}
	for _, c := range o.auth {
		if err := c.check(); err != nil {
			return err
		}
	}
	var granted int32
	for _, a := range o.acl {
		if err := checkACL("ACL", a); err != nil {
			return err
		}
		granted |= a.Perms
	}
	if o.aclSet {
		for _, p := range recipePerms {
			if granted&p.perm == 0 {
				return fmt.Errorf("%w: the ACL grants nobody %s permission, which the recipes need on the nodes they make (to list, create and delete their children, and to write a revocation or a semaphore's maximum)", ErrInvalid, p.name)
			}
		}
	}
	granted = 0
	for _, a := range o.parentACL {
		if err := checkACL("parent ACL", a); err != nil {
			return err
		}
		granted |= a.Perms
	}
	if o.parentACLSet && granted&zk.PermCreate == 0 {
		return fmt.Errorf("%w: the parent ACL grants nobody create permission, which the recipes need to make their nodes below the parents", ErrInvalid)
	}
	return nil
}

// recipePerms are the permissions some identity needs on the nodes the
// recipes make: they list, create and delete their children, and write a
// revocation request (locks.Revoke) or a semaphore's maximum.
var recipePerms = []struct {
	perm int32
	name string
}{{zk.PermRead, "read"}, {zk.PermWrite, "write"}, {zk.PermCreate, "create"}, {zk.PermDelete, "delete"}}

func (c authCreds) check() error {
	switch {
	case c.scheme == "":
		return fmt.Errorf("%w: authentication with no scheme", ErrInvalid)
	case c.scheme == "digest" && !strings.Contains(c.auth, ":"):
		return fmt.Errorf("%w: digest credentials are not user:password", ErrInvalid)
	}
	// go-zookeeper sends them again on every connection: an oversized
	// one would be dropped every time.
	return args.Fits("the authentication with scheme "+args.Short(c.scheme), jute.SetAuth(c.scheme, len(c.auth)))
}

// checkACL checks one entry of the ACL named what.
func checkACL(what string, a zk.ACL) error {
	switch {
	case a.Perms <= 0 || a.Perms > zk.PermAll:
		return fmt.Errorf("%w: %s %s:%s has permissions %d, not a set of cdrwa", ErrInvalid, what, a.Scheme, a.ID, a.Perms)
	case a.Scheme == "":
		return fmt.Errorf("%w: %s entry with no scheme", ErrInvalid, what)
	case a.Scheme == "world" && a.ID != "anyone":
		return fmt.Errorf("%w: %s world:%s: the world scheme's only id is anyone", ErrInvalid, what, a.ID)
	}
	return nil
}

// checkConnect reports options that Connect cannot work with: an ACL for
// the creator's identities needs at least one (WithAuth, or a TLS client
// certificate, which ZooKeeper's x509 provider makes one).
func (o options) checkConnect() error {
	certified := o.tls != nil && (len(o.tls.Certificates) > 0 || o.tls.GetClientCertificate != nil)
	for _, a := range o.acl {
		if a.Scheme == "auth" && len(o.auth) == 0 && !certified {
			return fmt.Errorf("%w: ACL auth:%s gives the nodes to the session's identities, and it has none (WithAuth)", ErrInvalid, a.ID)
		}
	}
	for _, a := range o.parentACL {
		if a.Scheme == "auth" && len(o.auth) == 0 && !certified {
			return fmt.Errorf("%w: parent ACL auth:%s gives the parents to the session's identities, and it has none (WithAuth)", ErrInvalid, a.ID)
		}
	}
	return nil
}

// recorder makes the session's telemetry recorder.
func (o options) recorder() *telemetry.Recorder {
	mp := o.meters
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return telemetry.New(mp, o.slog)
}

// nodeACL is the ACL of the nodes the session's recipes create.
func (o options) nodeACL() []zk.ACL {
	if o.aclSet {
		return o.acl
	}
	return OpenACL()
}

// parentACLs is the ACL of the container parents the session's recipes
// create above their own paths: WithParentACL's, else the nodes' ACL with
// world:anyone given create and read besides what it has.
func (o options) parentACLs() []zk.ACL {
	if o.parentACLSet {
		return o.parentACL
	}
	acl := slices.Clone(o.nodeACL())
	for i, a := range acl {
		if a.Scheme == "world" && a.ID == "anyone" {
			acl[i].Perms |= zk.PermCreate | zk.PermRead
			return acl
		}
	}
	return append(acl, zk.ACL{Perms: zk.PermCreate | zk.PermRead, Scheme: "world", ID: "anyone"})
}

// tickTime is the ensemble's tickTime as far as the session knows it, for a
// session granted timeout.
func (o options) tickTime(timeout time.Duration) time.Duration {
	if o.tick > 0 {
		return o.tick
	}
	// A server never grants less than its minSessionTimeout, which is two
	// ticks unless its operator lowered it.
	return timeout / 2
}

// WithSessionTimeout sets the session timeout, from 1ms to MaxSessionTimeout
// (else ErrInvalid). Connect asks the server for it, and uses what the server
// grants (Session.Timeout tells it); NewSession must be told the timeout its
// connection was made with. Default: DefaultSessionTimeout.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithConnectTimeout bounds how long Connect waits for ZooKeeper to grant a
// session, unless the context given to Connect ends sooner. Default:
// DefaultConnectTimeout.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) { o.connectTimeout = d }
}

// WithDialer sets how Connect opens its TCP connections, as zk.WithDialer
// does. The timeout it is given is go-zookeeper's (one second) or a tenth of
// the session timeout, whichever is shorter, and the connection it returns is
// closed if ZooKeeper has not answered the connect request within that tenth
// of the session timeout from the start of the dial (see Connect; before the
// session exists, within a third of the connect timeout if that is longer).
// The session reads the connection through a 4 KiB buffer, so its Read must
// return what has arrived rather than wait to fill the slice it is given,
// as io.Reader asks and net.Conn does. Default: net.DialTimeout.
// NewSession ignores it.
func WithDialer(d zk.Dialer) Option {
	return func(o *options) { o.dialer = d }
}

// WithLogger receives go-zookeeper's connection log. Default: discarded.
// NewSession ignores it.
func WithLogger(l zk.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithStateListener calls f with the session's initial state (Connected,
// once the session is granted) and then on every state change, in order,
// from the goroutine that observed it. f must not block or call back into
// the session. Default: none.
func WithStateListener(f func(State)) Option {
	return func(o *options) { o.listener = f }
}

// WithAuth adds credentials the session authenticates with, as zkCli's
// addauth does: scheme "digest" with "user:password", for one. Connect
// authenticates before it returns, and go-zookeeper sends the credentials
// again after every reconnect, before any other request. NewSession adds
// them to the caller's connection. Repeat the option for several identities.
// Default: none.
func WithAuth(scheme, credentials string) Option {
	return func(o *options) { o.auth = append(o.auth, authCreds{scheme, credentials}) }
}

// WithACL sets the ACL of every node the session's recipes create at and
// below a recipe's own path: lock, lease, barrier and member nodes, and the
// recipe's path itself when a recipe creates it (a lock's directory, a
// barrier's node). CreatorOnly gives them to the session's own identities
// (WithAuth) and to no one else: a client without the credentials can then
// neither join, inspect nor delete them. The parents a recipe creates above
// its path get WithParentACL's ACL, which by default is derived from this
// one. The slice is copied. An ACL applies to the nodes created from then
// on; existing nodes keep theirs. An ACL whose entries together grant nobody
// read, write, create or delete is refused with ErrInvalid: the recipes need
// all four on the nodes they make (admin is not needed).
// Default: OpenACL, Curator's default.
func WithACL(acl []zk.ACL) Option {
	acl = slices.Clone(acl)
	return func(o *options) { o.acl, o.aclSet = acl, true }
}

// WithParentACL sets the ACL of the container parents a recipe creates
// above its own path: /shared and /shared/billing for a lock at
// /shared/billing/job. A recipe creates them only when they are missing; an
// existing parent keeps its ACL, whoever made it. The slice is copied. An
// ACL that grants nobody create permission is refused with ErrInvalid.
//
// Default: the WithACL ACL with world:anyone given create and read besides
// what it already has. With the default OpenACL that is OpenACL, as in
// Curator. With CreatorOnly it is auth::cdrwa plus world:anyone:cr, so that
// two services with creator-only ACLs can share a parent: ZooKeeper checks a
// create against the create permission of the parent and a delete against
// the delete permission of the parent, so another identity can create its
// own recipes beside this session's (and list the parent's children), but
// can delete neither the parents nor a recipe's path below them, and the
// recipe's own nodes keep WithACL's ACL. (A parent is a container:
// ZooKeeper itself removes it once it is empty, whatever its ACL.) Curator's
// ACLProvider gives parents whatever it gives every path, so a Curator client
// with CREATOR_ALL_ACL makes /shared creator-only and locks every other
// identity out of it. Give CreatorOnly here for that, to keep others from
// creating anything below the parents this session makes.
func WithParentACL(acl []zk.ACL) Option {
	acl = slices.Clone(acl)
	return func(o *options) { o.parentACL, o.parentACLSet = acl, true }
}

// WithTLS makes Connect talk TLS, with config, to each server: give it the
// servers' secureClientPort. The handshake happens as a connection is
// dialled (over WithDialer's connections, if given), so a server whose
// certificate config does not trust fails that attempt, and Connect's error
// names why. config's ServerName defaults to each server's host. The config
// is cloned; nil means no TLS. NewSession ignores it: its connection is the
// caller's.
func WithTLS(config *tls.Config) Option {
	config = config.Clone()
	return func(o *options) { o.tls = config }
}

// WithChroot makes the session's recipes work under path, as a ZooKeeper
// client chrooted there would: every path given to a recipe's constructor,
// to locks.Inspect, barriers.Inspect and locks.Revoke is taken below it, and
// the paths they report (Hold.Node, Participant.Path and Waits) are relative
// to it again. Two sessions with different chroots never see each other's
// recipes. The ops given to Hold.Multi, like everything on the session's
// connection, use full paths. Connect also takes a chroot at the end of a server string, as
// ZooKeeper's own clients do ("h1:2181,h2:2181/app"). The session's own
// methods that take or give paths (Conn, Retry, Delete) and Hold.Guard work
// with full paths, as ZooKeeper sees them. "/" means none. Default: none.
func WithChroot(path string) Option {
	c, err := checkChroot(path)
	return func(o *options) { o.chroot, o.chrootSet, o.chrootErr = c, true, err }
}

// WithSlog logs the session's and its recipes' events to l (its handler is
// called from the session's own goroutines and must not block): state changes
// (Info; the end of the session at Warn), holds lost (Warn), a lock waiter
// that waits for a node of its own session (Warn: see the locks package's
// Reentrancy), revocation requests and acquisitions that waited a second or
// more (Info), every acquisition and each retry after a connection problem
// (Debug). Default (and for nil): none.
func WithSlog(l *slog.Logger) Option {
	return func(o *options) { o.slog = l }
}

// WithMeterProvider records the session's and its recipes' metrics through
// mp (docs/observability.md lists them). Default (and for nil):
// OpenTelemetry's global provider, which records nothing unless the program
// sets one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meters = mp }
}

// OpenACL returns world:anyone:cdrwa (Curator's OPEN_ACL_UNSAFE), the
// default: anyone may do anything with the nodes, delete a holder's node
// included.
func OpenACL() []zk.ACL { return zk.WorldACL(zk.PermAll) }

// CreatorOnly returns auth::cdrwa (Curator's CREATOR_ALL_ACL): every
// permission to the identities the creating session authenticated with
// (WithAuth), none to anyone else.
func CreatorOnly() []zk.ACL { return zk.AuthACL(zk.PermAll) }

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
