package znode

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zpath"
)

// A Denied error is zk.ErrNoAuth with what ZooKeeper's access control
// refused: the node whose ACL was checked and the permission the request
// needed there. go-zookeeper's error names neither, and the node is often
// not the one the request was about: creating or deleting a node is checked
// against its parent's ACL.
type Denied struct {
	Node string // the node whose ACL refused the request
	Perm int32  // the permission the request needed on it: one zk.Perm*
	Err  error  // the error ZooKeeper's answer became, wrapping zk.ErrNoAuth
}

func (e *Denied) Error() string {
	return fmt.Sprintf("%v: needs %s permission on %s", e.Err, PermName(e.Perm), e.Node)
}

func (e *Denied) Unwrap() error { return e.Err }

// PermName is the name of one ZooKeeper permission: create, read, write,
// delete or admin.
func PermName(perm int32) string {
	switch perm {
	case zk.PermCreate:
		return "create"
	case zk.PermRead:
		return "read"
	case zk.PermWrite:
		return "write"
	case zk.PermDelete:
		return "delete"
	case zk.PermAdmin:
		return "admin"
	}
	return fmt.Sprintf("permissions %d", perm)
}

// Refused returns err as a Denied error for node and perm if it is
// zk.ErrNoAuth and does not name its node yet, and err otherwise (nil
// included).
func Refused(err error, perm int32, node string) error {
	var d *Denied
	if !errors.Is(err, zk.ErrNoAuth) || errors.As(err, &d) {
		return err
	}
	return &Denied{Node: node, Perm: perm, Err: err}
}

// What ZooKeeper checks, and where: a create needs create permission on the
// parent, a delete delete permission on the parent; getData and getChildren
// need read on the node, setData write on the node (and a multi's check op
// read). ZooKeeper 3.8 does not check exists; a refused one is named as a
// read.

// RefusedCreate is Refused for a create of the node at path.
func RefusedCreate(err error, path string) error {
	return refusedAbove(err, zk.PermCreate, path)
}

// RefusedDelete is Refused for a delete of the node at path.
func RefusedDelete(err error, path string) error {
	return refusedAbove(err, zk.PermDelete, path)
}

// refusedAbove is Refused for a request that ZooKeeper checks on the parent
// of path. The parent is worked out only for a refusal: on every create and
// delete it would cost an allocation.
func refusedAbove(err error, perm int32, path string) error {
	if !errors.Is(err, zk.ErrNoAuth) {
		return err
	}
	return Refused(err, perm, parentOf(path))
}

// RefusedRead is Refused for a read (data, children, existence) of the node
// at path.
func RefusedRead(err error, path string) error {
	return Refused(err, zk.PermRead, path)
}

// RefusedWrite is Refused for a write of the data of the node at path.
func RefusedWrite(err error, path string) error {
	return Refused(err, zk.PermWrite, path)
}

// RefusedMulti is Refused for a zk.Multi of ops that answered res and err:
// it names the op ZooKeeper refused.
func RefusedMulti(res []zk.MultiResponse, err error, ops []any) error {
	if !errors.Is(err, zk.ErrNoAuth) {
		return err
	}
	for i, r := range res {
		if i >= len(ops) || !errors.Is(r.Error, zk.ErrNoAuth) {
			continue
		}
		switch op := ops[i].(type) {
		case *zk.CreateRequest:
			return RefusedCreate(err, op.Path)
		case *zk.DeleteRequest:
			return RefusedDelete(err, op.Path)
		case *zk.SetDataRequest:
			return RefusedWrite(err, op.Path)
		case *zk.CheckVersionRequest:
			return RefusedRead(err, op.Path)
		}
	}
	return err
}

// Delete deletes the node at path, any version, as conn.Delete does, with a
// refusal naming its parent.
func Delete(conn *zk.Conn, path string) error {
	if err := conn.Delete(path, -1); err != nil {
		return RefusedDelete(err, path)
	}
	return nil
}

// Set writes data to the node at path if its version is version (-1: any),
// as conn.Set does, with a refusal naming the node.
func Set(conn *zk.Conn, path string, data []byte, version int32) (*zk.Stat, error) {
	st, err := conn.Set(path, data, version)
	return st, RefusedWrite(err, path)
}

// Multi runs ops as conn.Multi does, with a refusal naming the op's node.
func Multi(conn *zk.Conn, ops ...any) ([]zk.MultiResponse, error) {
	res, err := conn.Multi(ops...)
	return res, RefusedMulti(res, err, ops)
}

func parentOf(path string) string {
	if a := zpath.Ancestors(path); len(a) > 0 {
		return a[0]
	}
	return "/"
}
