package barriers

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// readyNode is the child of a double barrier that marks it open (Curator's
// name): it exists once enough members have entered.
const readyNode = layout.ReadyNode

// A DoubleBarrier lets a group of processes start together and finish
// together: Curator's DistributedDoubleBarrier, on the same nodes, so Go and
// Java members rendezvous with each other. Enter waits until the member
// count is reached; Leave waits until every member has left.
//
// The member count is a threshold, as in Curator: once it is reached the
// barrier opens, and later members pass at once. Enter returns only when the
// barrier has really opened, never on a spurious wake-up (Curator 5.x's
// GH-1290). A member that gives up entering (its context ends) takes its
// node away; the member that opens the barrier checks, in the transaction
// that opens it, that every member it counted is still there, so nobody is
// counted in a group it did not join (and one that gave up too late to be
// left out is in).
//
// Every member must be made for the same member count: one whose Enter finds
// a member for another count at the barrier is refused with ErrMembers
// (its node name, a UUID, carries its count; see the package doc).
//
// A DoubleBarrier value is one member: its node name is a UUID chosen when
// the value is made. It is safe for concurrent use, but Enter and Leave
// alternate.
type DoubleBarrier struct {
	sess    *recipes.Session
	at      args.Target
	ready   string
	node    string // our member node
	members int

	mu      sync.Mutex // guards entered
	entered bool
}

// NewDoubleBarrier returns a member of the double barrier at path that opens
// when members have entered. It does no I/O, and refuses members < 1 or
// above math.MaxInt32 (Curator's limit: its memberQty is a Java int, as a
// semaphore's maxLeases is) besides what NewBarrier refuses, and a member
// count whose opening transaction (a check of each member counted, and the
// create of the ready node with the data) would be over recipes.MaxRequest.
func NewDoubleBarrier(sess *recipes.Session, path string, members int, opts ...recipes.NodeOption) (*DoubleBarrier, error) {
	at, err := recipe.Check(sess, path, opts, func() error {
		return args.Count(members, "a double barrier", "member")
	})
	if err != nil {
		return nil, err
	}
	b := &DoubleBarrier{
		sess:    sess,
		at:      at,
		ready:   zpath.Join(at.Dir, readyNode),
		node:    zpath.Join(at.Dir, memberName(members)),
		members: members,
	}
	what := fmt.Sprintf("in %s, with %d bytes of data,", args.Short(at.Dir), len(at.Data))
	if err := args.Fits("the create of a member "+what, jute.Create(b.node, len(at.Data), sess.ACL())); err != nil {
		return nil, err
	}
	// Members are named by UUIDs, as long as ours: the transaction that
	// opens the barrier checks members of them.
	ours := b.openOps([]string{zpath.Base(b.node)})
	size, _ := jute.Multi(ours...)                  // openOps makes only known ops
	check, _ := jute.Op(ours[0])                    // ours[0] checks our node
	size += min(members-1, jute.MaxRequest) * check // no overflow
	if err := args.Fits(fmt.Sprintf("opening the barrier for %d members %s", members, what), size); err != nil {
		return nil, err
	}
	return b, nil
}

// Path returns the barrier's path.
func (b *DoubleBarrier) Path() string { return b.at.Path }

// Members returns the member count that opens the barrier.
func (b *DoubleBarrier) Members() int { return b.members }

// Node returns the full path of this member's node.
func (b *DoubleBarrier) Node() string { return zpath.Outside(b.sess.Chroot(), b.node) }

// Arrived returns how many members are at the barrier now (entered, or
// waiting to enter), and whether it is open.
func (b *DoubleBarrier) Arrived(ctx context.Context) (int, bool, error) {
	if err := args.Context(ctx, "barriers: DoubleBarrier.Arrived"); err != nil {
		return 0, false, err
	}
	names, err := znode.Children(ctx, b.sess, b.at.Dir)
	if err != nil {
		return 0, false, fmt.Errorf("count %s: %w", b.at.Path, err)
	}
	open := slices.Contains(names, readyNode)
	if open {
		return len(names) - 1, true, nil
	}
	return len(names), false, nil
}
