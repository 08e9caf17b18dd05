package locks

import (
	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/znode"
)

// MaxDataSize is the most node data a lock accepts, 1 MiB - 1 KiB:
// ZooKeeper refuses a request larger than its jute.maxbuffer (by default
// 1 MiB - 1 byte), and the request carries the path and ACL too, for which
// 1 KiB is kept back.
const MaxDataSize = znode.MaxDataSize

// An Option configures a lock.
type Option func(*config)

type config struct {
	data    []byte
	dataSet bool
}

// WithData sets the data stored in the lock's node, which Participants and
// `zkrecipes inspect` show. The constructor keeps a copy: the caller may
// reuse the slice. Default: DefaultData().
func WithData(data []byte) Option {
	return func(c *config) { c.data, c.dataSet = data, true }
}

// DefaultData identifies this process: "host:pid".
func DefaultData() []byte { return znode.DefaultData() }

// validate checks what every lock constructor is given.
func validate(sess *recipes.Session, path string, opts []Option) (config, error) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	data, err := znode.CheckArgs(sess, path, c.data, c.dataSet, ErrInvalid)
	return config{data: data, dataSet: true}, err
}
