package recipes

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// parseServers checks a server list before anything is dialled and returns
// it as go-zookeeper wants it: one "host:port" each. An element may hold
// several servers separated by commas, as ZooKeeper's own connection strings
// do; "host" alone means port 2181.
func parseServers(servers []string) ([]string, error) {
	var out []string
	for _, elem := range servers {
		for s := range strings.SplitSeq(elem, ",") {
			s = strings.TrimSpace(s)
			if err := checkServer(s); err != nil {
				return nil, fmt.Errorf("%w: server %q: %w", ErrInvalid, s, err)
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no ZooKeeper servers given", ErrInvalid)
	}
	return out, nil
}

func checkServer(s string) error {
	if s == "" {
		return fmt.Errorf("empty address")
	}
	if strings.Contains(s, "/") {
		return fmt.Errorf("a chroot suffix is not supported")
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
