package barriers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

func TestMemberNamesCarryTheCount(t *testing.T) {
	for _, n := range []int{1, 2, 100, maxMembers} {
		name := memberName(n)
		assert.Equal(t, layout.DoubleBarrier, layout.Of(name), "%s is not a member's name to Curator's layout", name)
		got, ok := membersOf(name)
		assert.True(t, ok, name)
		assert.Equal(t, n, got, name)
	}
	assert.NotEqual(t, memberName(2), memberName(2), "member names are not random")
	// Java's UUID.randomUUID, and members made before counts were carried.
	for _, name := range []string{seqnode.NewUUID(), "0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f", "ready",
		"00000000-6c1d-8d5e-9f00-1a2b3c4d5e6f", "80000000-6c1d-8d5e-9f00-1a2b3c4d5e6f"} {
		_, ok := membersOf(name)
		assert.False(t, ok, name)
	}
	assert.Equal(t, 3, disagreeing([]string{"ready", seqnode.NewUUID(), memberName(2), memberName(3)}, 2))
	assert.Zero(t, disagreeing([]string{"ready", seqnode.NewUUID(), memberName(2)}, 2))
}
