package barriers

import (
	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
)

// MaxDataSize is the most node data a barrier accepts, 1 MiB - 1 KiB; see
// locks.MaxDataSize.
const MaxDataSize = args.MaxDataSize

// An Option configures a barrier.
type Option func(*args.Options)

// WithData sets the data of the nodes the barrier creates. The constructor
// keeps a copy: the caller may reuse the slice. Default: "host:pid" of this
// process.
func WithData(data []byte) Option {
	return func(o *args.Options) { o.SetData(data) }
}

type config struct {
	data []byte
}

// validate checks what every barrier constructor is given.
func validate(sess *recipes.Session, path string, opts []Option) (config, error) {
	data, err := args.Check(sess, path, opts, ErrInvalid)
	return config{data: data}, err
}
