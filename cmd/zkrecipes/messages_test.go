package main_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zkrecipes/recipes/zktest"
)

// TestElectFailureSaysCampaign: a campaign refused on another recipe's path
// says so as a campaign, not as a lock, with or without --requeue, and names
// the path once.
func TestElectFailureSaysCampaign(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/mx"
	holder := startHolding(t, "lock", path)
	defer stop(holder)
	for _, c := range []struct {
		extra  []string
		prefix string
	}{
		{nil, "zkrecipes: campaign "},
		{[]string{"--requeue"}, "zkrecipes: election: campaign "}, // the Runner says whose failure
	} {
		code, _, stderr := zkrecipes(t, append(append([]string{"elect", path}, c.extra...), "--", "true")...)
		assert.Equal(t, 65, code, stderr)
		assert.True(t, strings.HasPrefix(stderr, c.prefix+path+": recipes: path used by another recipe"), "%q: %s", c.extra, stderr)
		assert.Equal(t, 1, strings.Count(stderr, path+":"), "%q: %s", c.extra, stderr)
	}
}
