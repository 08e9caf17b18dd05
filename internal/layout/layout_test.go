package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zkrecipes/recipes"
)

func TestOf(t *testing.T) {
	const uuid = "0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f"
	for _, c := range []struct {
		name string
		want Kind
	}{
		{"_c_" + uuid + "-lock-0000000003", Mutex},
		{"lock-0000000003", Mutex},
		{"_c_" + uuid + "-__READ__0000000003", RWLock},
		{"_c_" + uuid + "-__WRIT__-000000001", RWLock},
		{"locks", Semaphore},
		{"leases", Semaphore},
		{uuid, DoubleBarrier},
		{"ready", DoubleBarrier},
		{"_c_" + uuid + "-lease-0000000003", None}, // lives under leases/, not the path
		{"lock-", None},
		{"config", None},
		{"0B9A4F1E-6C1D-4D5E-9F00-1A2B3C4D5E6F", None},
	} {
		assert.Equal(t, c.want, Of(c.name), c.name)
	}
}

func TestPresentAndCheck(t *testing.T) {
	names := []string{"leases", "config", "_c_0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f-lock-0000000001", "locks"}
	assert.Equal(t, []Kind{Mutex, Semaphore}, Present(names))
	assert.Empty(t, Present([]string{"config"}))

	err := Check("/p", names, Mutex)
	assert.ErrorIs(t, err, recipes.ErrOtherRecipe)
	assert.ErrorContains(t, err, `semaphore's node "leases"`)
	err = Check("/p", names, Semaphore)
	assert.ErrorContains(t, err, "mutex's node")
	assert.NoError(t, Check("/p", []string{"config", "locks"}, Semaphore))
	assert.Error(t, Check("/p", []string{"ready"}, Barrier))
}
