// Package zktest runs real ZooKeeper servers for the tests of code that uses
// ZooKeeper, and puts the faults such code must survive in those tests'
// hands: what Curator's curator-test (TestingServer, TestingCluster,
// KillSession) does for Java.
//
// A test starts a standalone server or an ensemble of its own with Start or
// StartEnsemble, or shares one server among all the tests of a package with
// Servers and Main; every server runs on loopback and is stopped, its
// files removed, when the test or the package's tests end. With ZK_SERVERS
// set (host:port,...), Servers uses the servers it names instead.
//
// A test binary that is killed (go test -timeout) kills its servers too,
// on Linux, but leaves their temporary directories (zktest-*) behind.
//
// ZooKeeper itself is found under ZOOKEEPER_HOME, an Apache ZooKeeper binary
// release (apache-zookeeper-X-bin.tar.gz unpacked; with Homebrew,
// $(brew --prefix zookeeper)/libexec), or else where Debian's zookeeper
// package installs it; it needs a Java runtime (JAVA_HOME, or java on the
// PATH). When either is missing, the test fails saying which.
//
// The faults a test needs, each done when its call returns:
//
//   - ExpireSession ends a client's session on the server, as a session
//     timeout would: its ephemeral nodes are gone, and the client hears
//     that its session expired when it next reaches the server. A lock's
//     hold, or an election's term, names the session it is held in
//     (locks.Hold's Session), so a test can end a session that the code
//     under test made, an election.Runner's for one (see ExpireSession's
//     examples).
//   - A Proxy stands between clients and servers: Cut partitions them,
//     Heal ends the partition, Drop closes the connections.
//   - Ensemble's Stop, Start, Restart, Pause and Isolate stop, restart,
//     freeze and partition one member.
//
// Root gives a test a path of its own and checks, when the test ends, that
// nothing was left under it; Leftovers does that check for any path.
//
// Every address this package hands out (Server.Servers, Ensemble.Servers,
// Servers) reaches its server through a forwarder in the test process that
// reads each session's id and password off the server's answer: this is
// how ExpireSession can end any session that connected through one, as
// Curator's KillSession did, without the client's help.
package zktest
