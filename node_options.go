package recipes

import "github.com/zkrecipes/recipes/internal/args"

// MaxDataSize is the most node data a recipe accepts, 1 MiB - 1 KiB:
// ZooKeeper refuses a request larger than its jute.maxbuffer (by default
// 1 MiB - 1 byte), and the request carries the path and ACL too, for which
// 1 KiB is kept back.
const MaxDataSize = args.MaxDataSize

// A NodeOption configures the nodes a recipe creates. Every constructor in
// the locks and barriers packages takes them; a Session is configured by
// Option instead.
type NodeOption func(*args.Options)

// WithData sets the data stored in the recipe's nodes, which the recipes'
// Inspect and `zkrecipes inspect` show. The constructor keeps a copy: the
// caller may reuse the slice. Default: DefaultData(). Data over MaxDataSize
// is refused with ErrInvalid.
func WithData(data []byte) NodeOption {
	return func(o *args.Options) { o.SetData(data) }
}

// DefaultData identifies this process: "host:pid", which is what a recipe's
// nodes carry unless WithData says otherwise.
func DefaultData() []byte { return args.DefaultData() }
