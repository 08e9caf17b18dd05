package main

import "io"

// BenchmarkIdleSessions' results, and issue 30's target: what an idle
// session costs the server, in CPU above the server alone, ours ÷
// go-zookeeper's.
const (
	idleNone            = "BenchmarkIdleSessions/none"
	idleConn            = "BenchmarkIdleSessions/zk.Conn"
	idleSession         = "BenchmarkIdleSessions/session"
	idleUnit            = "server-%cpu"
	maxIdleSessionRatio = 2.0
)

// printIdle prints the server's CPU per idle recipes.Session ÷ per idle
// go-zookeeper connection, each less the server alone, against its target.
func (r *results) printIdle(w io.Writer) {
	if !r.has(idleNone, idleConn, idleSession) {
		return
	}
	none, okNone := r.mean(idleNone, idleUnit)
	conn, okConn := r.mean(idleConn, idleUnit)
	sess, okSess := r.mean(idleSession, idleUnit)
	ok := okNone && okConn && okSess && conn > none
	r.verdict(w, "idle sessions: server CPU, session/zk.Conn (less the server alone)", (sess-none)/(conn-none), ok, false, maxIdleSessionRatio)
}
