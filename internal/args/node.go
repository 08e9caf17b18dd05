package args

// Node is what a recipe's node options set, as its constructor reads it:
// the data WithData set, and, for the election's recipes, which take a
// Mutex's lock on nodes of their own, the Role that Mutex plays.
//
// recipes.NodeOptions embeds Node under an unexported name. The one method
// of Node is unexported, so a *recipes.NodeOptions is a NodeOptions here,
// while nothing of Node enters the public API: only WithData, and the
// election package through SetRole, set it.
type Node struct {
	data    []byte
	dataSet bool // even to nil or empty: then the nodes carry no data
	role    Role
}

func (n *Node) node() *Node { return n }

// What a type embedding Node gets: the method NodeOptions asks for.
var _ NodeOptions = (*Node)(nil)

// NodeOptions is a *recipes.NodeOptions.
type NodeOptions interface{ node() *Node }

// A Role is the part a Mutex plays for the recipe that made it.
type Role int

const (
	// RoleLock is a Mutex's own: a lock whose users lock.
	RoleLock Role = iota
	// RoleSelector is election.Selector's: a Mutex's nodes, whose users
	// campaign (their errors say so).
	RoleSelector
	// RoleLatch is election.Latch's: Curator's LeaderLatch nodes (the
	// lock name "latch-"), taken as a Mutex's, whose users campaign.
	RoleLatch
)

// SetData sets the data of the nodes of the recipe that o configures.
func SetData(o NodeOptions, data []byte) {
	n := o.node()
	n.data, n.dataSet = data, true
}

// Data returns the data SetData set, and whether it did.
func Data(o NodeOptions) (data []byte, set bool) {
	n := o.node()
	return n.data, n.dataSet
}

// SetRole sets the role of the Mutex that o configures.
func SetRole(o NodeOptions, r Role) { o.node().role = r }

// RoleOf returns the role SetRole set: RoleLock if none.
func RoleOf(o NodeOptions) Role { return o.node().role }
