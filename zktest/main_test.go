package zktest

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(WithServer(m))
}

var acl = zk.WorldACL(zk.PermAll)
