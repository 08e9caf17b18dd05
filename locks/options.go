package locks

import (
	"fmt"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// MaxDataSize is the most node data a lock accepts: ZooKeeper refuses a
// request larger than its jute.maxbuffer (by default 1 MiB - 1 byte), and
// the request carries the path and ACL too, for which 1 KiB is kept back.
const MaxDataSize = znode.MaxDataSize

// An Option configures a lock.
type Option func(*config)

type config struct {
	data    []byte
	dataSet bool
}

// WithData sets the data stored in the lock's node, which Participants and
// `zkrecipes inspect` show. Default: DefaultData().
func WithData(data []byte) Option {
	return func(c *config) { c.data, c.dataSet = data, true }
}

func buildConfig(opts []Option) (config, error) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if !c.dataSet {
		c.data = DefaultData()
	}
	if len(c.data) > MaxDataSize {
		return c, fmt.Errorf("%w: node data is %d bytes, more than MaxDataSize (%d)", ErrInvalid, len(c.data), MaxDataSize)
	}
	return c, nil
}

// DefaultData identifies this process: "host:pid".
func DefaultData() []byte { return znode.DefaultData() }

// validate checks what every lock constructor is given.
func validate(sess *recipes.Session, path string, opts []Option) (config, error) {
	if sess == nil {
		return config{}, fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if err := zpath.Validate(path); err != nil {
		return config{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return buildConfig(opts)
}
