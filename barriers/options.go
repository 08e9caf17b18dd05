package barriers

import (
	"fmt"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// MaxDataSize is the most node data a barrier accepts; see locks.MaxDataSize.
const MaxDataSize = znode.MaxDataSize

// An Option configures a barrier.
type Option func(*config)

type config struct {
	data    []byte
	dataSet bool
}

// WithData sets the data of the nodes the barrier creates. Default:
// "host:pid" of this process.
func WithData(data []byte) Option {
	return func(c *config) { c.data, c.dataSet = data, true }
}

// validate checks what every barrier constructor is given.
func validate(sess *recipes.Session, path string, opts []Option) (config, error) {
	var c config
	if sess == nil {
		return c, fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if err := zpath.Validate(path); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for _, opt := range opts {
		opt(&c)
	}
	if !c.dataSet {
		c.data = znode.DefaultData()
	}
	if len(c.data) > MaxDataSize {
		return c, fmt.Errorf("%w: node data is %d bytes, more than MaxDataSize (%d)", ErrInvalid, len(c.data), MaxDataSize)
	}
	return c, nil
}
