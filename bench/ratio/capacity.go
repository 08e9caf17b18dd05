package main

import "io"

// Issue 30's benchmarks and targets: what one ensemble serves
// (BenchmarkCapacity), a multi-lock's round trips (BenchmarkMultiLock),
// and what an idle session costs the server (BenchmarkIdleSessions).
const (
	capFloor   = "BenchmarkCapacity/floor"
	capListed  = "BenchmarkCapacity/listed"
	capWatched = "BenchmarkCapacity/listed-watched"
	capMutex   = "BenchmarkCapacity/mutex"
	capZKLock  = "BenchmarkCapacity/zk.Lock"
	capCurator = "BenchmarkCapacity/curator"

	multiAtOnce = "BenchmarkMultiLock/multilock/members="
	multiSerial = "BenchmarkMultiLock/one-by-one/members="

	idleNone    = "BenchmarkIdleSessions/none"
	idleConn    = "BenchmarkIdleSessions/zk.Conn"
	idleSession = "BenchmarkIdleSessions/session"
	idleLazy    = "BenchmarkIdleSessions/session-no-idle-probes"
	idleUnit    = "server-%cpu"

	firstBusy      = "BenchmarkFirstAcquire/busy"
	firstAfterIdle = "BenchmarkFirstAcquire/after-idle"
	firstLazy      = "BenchmarkFirstAcquire/after-idle-no-idle-probes"
	firstUnit      = "median-ns"

	minCapacityFloor    = 0.85 // mutex ops/s ÷ the floor's, at least
	minCapacityPeers    = 1.0  // mutex ops/s ÷ zk.Lock's and Curator's, at least
	maxIdleSessionRatio = 2.0  // an idle session's server CPU ÷ go-zookeeper's, at most
	maxIdleLazyRatio    = 1.2  // the same WithoutIdleProbes, at most
	maxFirstAcquire     = 1.1  // the first Lock after idleness ÷ a busy session's, at most
	maxMultiRTTs        = 2.05 // a multi-lock's round trips to acquire and release, any size, at most
	minMultiDelayed     = 2.0  // one-by-one's ns/op ÷ the multi-lock's at 4 members with a delay, at least
)

// printCapacity prints BenchmarkCapacity's ratios, BenchmarkMultiLock's
// round trips and its gain over taking the members one by one, and the
// server's CPU per idle recipes.Session ÷ per idle go-zookeeper
// connection, each less the server alone, against their targets.
func (r *results) printCapacity(w io.Writer) {
	const atLeast, atMost = true, false
	r.check(w, "capacity mutex/floor ops/s", capMutex, capFloor, "ops/s", atLeast, minCapacityFloor)
	r.note(w, "capacity listed/floor ops/s (the least a lock of sequential nodes asks)", capListed, capFloor, "ops/s")
	r.note(w, "capacity listed-watched/floor ops/s", capWatched, capFloor, "ops/s")
	r.note(w, "capacity mutex/listed ops/s", capMutex, capListed, "ops/s")
	r.check(w, "capacity mutex/zk.Lock ops/s", capMutex, capZKLock, "ops/s", atLeast, minCapacityPeers)
	r.check(w, "capacity mutex/Curator ops/s", capMutex, capCurator, "ops/s", atLeast, minCapacityPeers)
	r.note(w, "capacity mutex/zk.Lock server CPU per op", capMutex, capZKLock, "server-us/op")
	r.note(w, "capacity mutex/Curator server CPU per op", capMutex, capCurator, "server-us/op")
	for _, n := range []string{"1", "2", "4", "8"} {
		r.checkMean(w, "multi-lock of "+n+" round trips to acquire and release", multiAtOnce+n, "rtts/op", atMost, maxMultiRTTs)
	}
	if r.delayed() {
		r.check(w, "multi-lock of 4: one-by-one/multilock ns/op", multiSerial+"4", multiAtOnce+"4", "ns/op", atLeast, minMultiDelayed)
	} else {
		r.note(w, "multi-lock of 4: one-by-one/multilock ns/op", multiSerial+"4", multiAtOnce+"4", "ns/op")
	}
	r.checkMean(w, "first Lock after idleness ÷ a busy session's beside it (median)", firstAfterIdle, "x-busy", atMost, maxFirstAcquire)
	r.note(w, "first Lock after idleness ÷ back-to-back Locks (median)", firstAfterIdle, firstBusy, firstUnit)
	r.note(w, "first Lock after idleness without idle probes ÷ back-to-back Locks (median)", firstLazy, firstBusy, firstUnit)
	if !r.has(idleNone, idleConn, idleSession) {
		return
	}
	none, okNone := r.mean(idleNone, idleUnit)
	conn, okConn := r.mean(idleConn, idleUnit)
	sess, okSess := r.mean(idleSession, idleUnit)
	ok := okNone && okConn && okSess && conn > none
	r.verdict(w, "idle sessions: server CPU, session/zk.Conn (less the server alone)", (sess-none)/(conn-none), ok, atMost, maxIdleSessionRatio)
	if r.has(idleLazy) {
		lazy, okLazy := r.mean(idleLazy, idleUnit)
		ok := okNone && okConn && okLazy && conn > none
		r.verdict(w, "idle sessions without idle probes: server CPU, session/zk.Conn (less the server alone)", (lazy-none)/(conn-none), ok, atMost, maxIdleLazyRatio)
	}
}
