package recipes

import "github.com/zkrecipes/recipes/internal/znode"

// internals is what a Session carries for the internal packages (the
// recorder, the writes it shows, what the recipes keep for it): embedded in
// Session under this unexported name, it gives the Session the unexported
// method that znode.Session asks for, and adds nothing to its public API.
type internals = znode.Internals

// The internal packages reach the session through this interface.
var _ znode.Session = (*Session)(nil)
