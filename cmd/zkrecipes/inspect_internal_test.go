package main

import "testing"

func TestRWHolders(t *testing.T) {
	r, w := inspected{Kind: "read"}, inspected{Kind: "write"}
	for _, c := range []struct {
		nodes []inspected
		want  int
	}{
		{nil, 0}, // gone between the listing and the reads
		{[]inspected{w, r, w}, 1},
		{[]inspected{r, r, w, r}, 2},
		{[]inspected{r, r}, 2},
	} {
		if got := rwHolders(c.nodes); got != c.want {
			t.Errorf("rwHolders(%v) = %d, want %d", c.nodes, got, c.want)
		}
	}
}
