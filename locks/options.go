package locks

import (
	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
)

// MaxDataSize is the most node data a lock accepts, 1 MiB - 1 KiB:
// ZooKeeper refuses a request larger than its jute.maxbuffer (by default
// 1 MiB - 1 byte), and the request carries the path and ACL too, for which
// 1 KiB is kept back.
const MaxDataSize = args.MaxDataSize

// An Option configures a lock.
type Option func(*args.Options)

// WithData sets the data stored in the lock's node, which Participants and
// `zkrecipes inspect` show. The constructor keeps a copy: the caller may
// reuse the slice. Default: DefaultData().
func WithData(data []byte) Option {
	return func(o *args.Options) { o.SetData(data) }
}

// DefaultData identifies this process: "host:pid".
func DefaultData() []byte { return args.DefaultData() }

type config struct {
	data []byte
}

// validate checks what every lock constructor is given.
func validate(sess *recipes.Session, path string, opts []Option) (config, error) {
	data, err := args.Check(sess, path, opts, ErrInvalid)
	return config{data: data}, err
}
