package barriers

import (
	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/znode"
)

// MaxDataSize is the most node data a barrier accepts, 1 MiB - 1 KiB; see
// locks.MaxDataSize.
const MaxDataSize = znode.MaxDataSize

// An Option configures a barrier.
type Option func(*config)

type config struct {
	data    []byte
	dataSet bool
}

// WithData sets the data of the nodes the barrier creates. The constructor
// keeps a copy: the caller may reuse the slice. Default: "host:pid" of this
// process.
func WithData(data []byte) Option {
	return func(c *config) { c.data, c.dataSet = data, true }
}

// validate checks what every barrier constructor is given.
func validate(sess *recipes.Session, path string, opts []Option) (config, error) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	data, err := znode.CheckArgs(sess, path, c.data, c.dataSet, ErrInvalid)
	return config{data: data, dataSet: true}, err
}
