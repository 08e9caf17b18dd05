package recipes

import "github.com/zkrecipes/recipes/internal/args"

// MaxDataSize is the most node data a recipe accepts, whatever its path:
// 1 MiB - 1 KiB. ZooKeeper drops the connection of a request larger than its
// jute.maxbuffer (by default MaxRequest), and the request carries the path
// and ACL too; the KiB kept back also lets a Java client, which takes a reply
// only below its own jute.maxbuffer, read the data back.
const MaxDataSize = 1<<20 - 1<<10

// MaxRequest is the largest request ZooKeeper takes with its default
// jute.maxbuffer, 0xfffff bytes (1 MiB - 1): a server drops the connection
// of a larger one, without an answer. Every recipe constructor works out the
// largest request the recipe sends, as go-zookeeper encodes it (its path under
// the session's chroot, with the sequence ZooKeeper appends, its data, the
// session's ACL, and the transactions the recipe builds), and refuses, with
// ErrInvalid, a recipe over this: so may a long path with data within
// MaxDataSize. docs/semantics.md ("Bad input") lists what is checked.
const MaxRequest = 0xfffff

// A NodeOption configures the nodes a recipe creates. Every constructor in
// the locks and barriers packages takes them; a Session is configured by
// Option instead.
type NodeOption func(*NodeOptions)

// NodeOptions is what a recipe's NodeOptions set, as its constructor reads
// it.
type NodeOptions struct {
	nodeSettings // what the internal packages read (args.Node)
}

// nodeSettings are the settings the NodeOptions carry for the constructors:
// embedded in NodeOptions under this unexported name, as a Session embeds
// its internals, they add nothing to its public API.
type nodeSettings = args.Node

// The constructors read the settings through this interface.
var _ args.NodeOptions = (*NodeOptions)(nil)

// Data returns the data that WithData set, and whether a WithData did.
//
// Deprecated: Data was exported for the recipes' own constructors, which no
// longer use it. What WithData sets is what the recipe's nodes carry: read
// it there (Participants, Inspect).
func (o *NodeOptions) Data() (data []byte, set bool) { return args.Data(&o.nodeSettings) }

// WithData sets the data stored in the recipe's nodes, which the recipes'
// Inspect and `zkrecipes inspect` show. The constructor keeps a copy: the
// caller may reuse the slice. Default: DefaultData(). Data over MaxDataSize,
// or that makes a request over MaxRequest with the recipe's path, is refused
// with ErrInvalid.
func WithData(data []byte) NodeOption {
	return func(o *NodeOptions) { args.SetData(&o.nodeSettings, data) }
}

// DefaultData identifies this process: "host:pid", which is what a recipe's
// nodes carry unless WithData says otherwise.
func DefaultData() []byte { return args.DefaultData() }
