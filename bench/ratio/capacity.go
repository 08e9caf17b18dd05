package main

import "io"

// Issue 30's benchmarks and targets: what one ensemble serves
// (BenchmarkCapacity), and what an idle session costs the server
// (BenchmarkIdleSessions).
const (
	capFloor   = "BenchmarkCapacity/floor"
	capMutex   = "BenchmarkCapacity/mutex"
	capZKLock  = "BenchmarkCapacity/zk.Lock"
	capCurator = "BenchmarkCapacity/curator"

	idleNone    = "BenchmarkIdleSessions/none"
	idleConn    = "BenchmarkIdleSessions/zk.Conn"
	idleSession = "BenchmarkIdleSessions/session"
	idleUnit    = "server-%cpu"

	minCapacityFloor    = 0.85 // mutex ops/s ÷ the floor's, at least
	minCapacityPeers    = 1.0  // mutex ops/s ÷ zk.Lock's and Curator's, at least
	maxIdleSessionRatio = 2.0  // an idle session's server CPU ÷ go-zookeeper's, at most
)

// printCapacity prints BenchmarkCapacity's ratios and the server's CPU per
// idle recipes.Session ÷ per idle go-zookeeper connection, each less the
// server alone, against their targets.
func (r *results) printCapacity(w io.Writer) {
	const atLeast, atMost = true, false
	r.check(w, "capacity mutex/floor ops/s", capMutex, capFloor, "ops/s", atLeast, minCapacityFloor)
	r.check(w, "capacity mutex/zk.Lock ops/s", capMutex, capZKLock, "ops/s", atLeast, minCapacityPeers)
	r.check(w, "capacity mutex/Curator ops/s", capMutex, capCurator, "ops/s", atLeast, minCapacityPeers)
	r.note(w, "capacity mutex/zk.Lock server CPU per op", capMutex, capZKLock, "server-us/op")
	r.note(w, "capacity mutex/Curator server CPU per op", capMutex, capCurator, "server-us/op")
	if !r.has(idleNone, idleConn, idleSession) {
		return
	}
	none, okNone := r.mean(idleNone, idleUnit)
	conn, okConn := r.mean(idleConn, idleUnit)
	sess, okSess := r.mean(idleSession, idleUnit)
	ok := okNone && okConn && okSess && conn > none
	r.verdict(w, "idle sessions: server CPU, session/zk.Conn (less the server alone)", (sess-none)/(conn-none), ok, atMost, maxIdleSessionRatio)
}
