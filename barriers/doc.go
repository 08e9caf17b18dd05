// Package barriers implements Apache Curator's barrier recipes on ZooKeeper,
// on the same znodes, so Go and Java (Curator 5.x) processes rendezvous with
// each other.
//
//	barriers.Barrier        Curator DistributedBarrier: hold everyone until removed
//	barriers.DoubleBarrier  DistributedDoubleBarrier: start together, finish together
//
// Constructors do no I/O and refuse bad input with [recipes.ErrInvalid], creating
// nothing, among it a barrier whose requests ZooKeeper would drop: a
// barrier's create, a member's, and a double barrier's opening transaction,
// which checks as many members as it waits for, must each be within
// [recipes.MaxRequest] with the path under the chroot, the data and the ACL
// (docs/semantics.md, "Request size").
//
// # Barrier
//
// [Barrier.Set] creates a persistent node at the barrier's path;
// [Barrier.Wait] returns once the node is gone; [Barrier.Remove] deletes it. A waiter whose session ends (expired, or
// cut off from the ensemble for the session timeout) gets the session's error:
// it is never told the barrier passed when it cannot know.
//
// # Double barrier
//
// Each member has an ephemeral node under the barrier's path, named by a UUID
// chosen when the [DoubleBarrier] value is made. [DoubleBarrier.Enter] adds it and waits until
// the member count is reached; the member that completes the count creates the
// persistent node "ready", which lets everyone through (and lets later members
// straight through: the count is a threshold). Leave deletes the members'
// nodes in Curator's order (every member but the lowest first, the lowest
// last) and returns when all are gone; the last deletes "ready".
//
// Unlike Curator 5.4 to 5.9:
//   - Enter never returns before the count is really reached: it re-checks
//     after any wake-up (GH-1290).
//   - A member that gives up entering (its context ends) removes its node,
//     and the member that opens the barrier checks, in the transaction that
//     creates "ready", that every member it counted is still there: nobody
//     is counted in a group it did not join. A member that gave up just
//     after being counted finds "ready" and is in after all.
//   - Waiters watch only "ready", so an arrival wakes nobody, and the last
//     arrival opens the barrier in three round trips.
//   - Members must agree on the member count (Curator never checks, and a
//     member for 2 beside one for 3 waits forever): a member's UUID carries
//     its count (see the layout below), and Enter refuses with ErrMembers
//     when the barrier's listing shows a member for another count, before
//     the barrier opens. Curator members carry no count and are not
//     checked.
//   - A Leave that times out removes this member's node rather than leaving
//     it behind (CURATOR-536 made Curator's Leave return on timeout at all).
//
// # Znode layout
//
//	Barrier at P        P                  persistent, data "host:pid"
//	DoubleBarrier at P  P/<uuid>           ephemeral, one per member
//	                    P/ready            persistent, while the barrier is open
//
// Curator's member names are random (version 4) UUIDs; ours are version 8
// UUIDs whose first 8 hex digits are the member count, the rest random
// ("00000003-5f0c-8a1e-9b7d-2c4e6f8a0b1d" for a barrier of 3). Curator
// counts the children and never reads their names, so it counts ours as
// any member.
//
// Missing parents are created as container nodes. A double barrier whose
// path holds a lock's nodes (which it would count as members), and a Barrier
// whose node exists as a lock's directory (Set, Remove and Wait alike), are
// refused with recipes.ErrOtherRecipe.
package barriers
