package recipes

import "github.com/zkrecipes/recipes/internal/zpath"

// ValidatePath reports whether p can name a recipe: an absolute ZooKeeper
// path other than the root, with no trailing or doubled '/', no "." or ".."
// segment, and none of the characters ZooKeeper forbids. Every recipe
// constructor applies it; it is exported for tools that check input before
// connecting.
func ValidatePath(p string) error {
	return zpath.Validate(p)
}
