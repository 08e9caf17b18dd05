package zkserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// A port the harness chooses is free when chosen and bound by the JVM
// about a second later (more on a loaded machine), and again whenever a
// stopped member starts. A port from the kernel's ephemeral range can be
// taken in between as the local port of any outgoing connection on the
// machine, and a busy test run makes thousands: the JVM then cannot bind
// it. ZooKeeper binds its election port in a thread of its own and, after
// three failed binds a second apart, exits with code 14, so an ensemble
// can reach its quorum first and lose a member seconds later. The harness
// therefore chooses its ports outside the ephemeral range, where only
// another process listening could take them.
const (
	lowestPort = 10000 // below: well-known services (2181, 8080, ...)
	portTries  = 200   // random picks per port before falling back to the kernel
)

// ephemeralRange is where the kernel picks outgoing connections' local
// ports: Linux's ip_local_port_range, or IANA's range (macOS and the BSDs
// use it) where that file does not exist.
func ephemeralRange() (lo, hi int) {
	lo, hi = 49152, 65535
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l > h {
		return lo, hi
	}
	return l, h
}

// candidatePorts returns the larger of the two ranges [lo, hi] around the
// ephemeral range that a test server may use; ok is false if both are
// empty.
func candidatePorts() (lo, hi int, ok bool) {
	elo, ehi := ephemeralRange()
	below := [2]int{lowestPort, elo - 1}
	above := [2]int{max(ehi+1, lowestPort), 65535}
	best := below
	if above[1]-above[0] > below[1]-below[0] {
		best = above
	}
	return best[0], best[1], best[0] <= best[1]
}

// freePorts reserves n distinct free TCP ports outside the ephemeral range
// (or from the kernel if none is free there). Each is checked by binding
// it on every address, as a member binds its peer ports; the listeners are
// held until all ports are chosen, so the ports are distinct, and then
// released for the servers to bind.
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	lo, hi, ok := candidatePorts()
	ports := make([]int, 0, n)
	for range n {
		var l net.Listener
		for try := 0; ok && l == nil && try < portTries; try++ {
			p := lo + rand.IntN(hi-lo+1)
			l, _ = net.Listen("tcp4", "0.0.0.0:"+strconv.Itoa(p))
		}
		if l == nil {
			var err error
			if l, err = net.Listen("tcp4", "0.0.0.0:0"); err != nil {
				return nil, fmt.Errorf("zkserver: reserve port: %w", err)
			}
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
