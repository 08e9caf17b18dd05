package recipes

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/zkrecipes/recipes/internal/zpath"
)

// parseServers checks a server list before anything is dialled and returns
// it as go-zookeeper wants it: one "host:port" each, and the chroot, if one
// is given. An element may hold several servers separated by commas and end
// with a chroot, as ZooKeeper's own connection strings do
// ("h1:2181,h2:2181/app"); "host" alone means port 2181.
func parseServers(servers []string) (out []string, chroot string, err error) {
	for _, elem := range servers {
		if i := strings.IndexByte(elem, '/'); i >= 0 {
			c, err := checkChroot(elem[i:])
			if err != nil {
				return nil, "", fmt.Errorf("%w: chroot of %q: %w", ErrInvalid, elem, err)
			}
			if chroot != "" && c != chroot {
				return nil, "", fmt.Errorf("%w: two chroots, %s and %s", ErrInvalid, chroot, c)
			}
			chroot, elem = c, elem[:i]
		}
		for s := range strings.SplitSeq(elem, ",") {
			s = strings.TrimSpace(s)
			if err := checkServer(s); err != nil {
				return nil, "", fmt.Errorf("%w: server %q: %w", ErrInvalid, s, err)
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("%w: no ZooKeeper servers given", ErrInvalid)
	}
	return out, chroot, nil
}

// checkChroot checks a chroot path and returns it as the recipes prefix it:
// "" for "/".
func checkChroot(p string) (string, error) {
	if p == "/" {
		return "", nil
	}
	if err := zpath.Validate(p); err != nil {
		return "", err
	}
	return p, nil
}

func checkServer(s string) error {
	if s == "" {
		return fmt.Errorf("empty address")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Contains(s, ":") {
			return err // go-zookeeper adds the default port only where there is no ':'
		}
		host, port = s, "2181"
	}
	if host == "" {
		return fmt.Errorf("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}
