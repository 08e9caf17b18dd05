package curatortest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/zktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(zktest.WithServer(m))
}
