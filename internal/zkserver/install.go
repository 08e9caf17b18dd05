package zkserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// HomeEnv names the environment variable that points at an Apache ZooKeeper
// installation: the directory of its binary release
// (apache-zookeeper-X-bin.tar.gz, or Homebrew's libexec), whose lib/ holds
// zookeeper-X.jar and every jar it needs.
const HomeEnv = "ZOOKEEPER_HOME"

const (
	// javaDir is where Debian's zookeeper package installs its jars.
	javaDir = "/usr/share/java"
	// debianJar is Debian's main ZooKeeper jar. Its manifest Class-Path
	// lists every runtime dependency (zookeeper-jute, netty, slf4j-api,
	// jetty, ...), so it is the only jar the server itself needs.
	debianJar = javaDir + "/zookeeper.jar"
	// slf4jSimpleJar is an SLF4J binding that logs to stderr. Without a
	// binding Debian's server logs nothing, which makes start failures
	// opaque.
	slf4jSimpleJar = javaDir + "/slf4j-simple.jar"
)

// installation is a ZooKeeper found on this machine: how to run it.
type installation struct {
	classPath string
	props     []string // logging configuration of a release, if it has one
}

// found remembers the installation found for each value of ZOOKEEPER_HOME.
var found struct {
	sync.Mutex
	inst map[string]*installation
}

// EnsureInstalled reports whether a ZooKeeper server and a Java runtime can
// be found, saying exactly what is missing if not: see locate. It installs
// nothing (InstallDebian does). A success is remembered for the life of the
// process.
func EnsureInstalled() error {
	_, err := installed()
	return err
}

func installed() (*installation, error) {
	home := os.Getenv(HomeEnv)
	found.Lock()
	defer found.Unlock()
	if inst := found.inst[home]; inst != nil {
		return inst, nil
	}
	inst, err := locate()
	if err != nil {
		return nil, err
	}
	if _, err := javaPath(); err != nil {
		return nil, err
	}
	if found.inst == nil {
		found.inst = map[string]*installation{}
	}
	found.inst[home] = inst
	return inst, nil
}

// locate finds ZooKeeper: under $ZOOKEEPER_HOME if it is set (and only
// there), else as Debian's zookeeper package installs it.
func locate() (*installation, error) {
	if home := os.Getenv(HomeEnv); home != "" {
		return release(home)
	}
	if _, err := os.Stat(debianJar); err != nil {
		return nil, fmt.Errorf("zkserver: no ZooKeeper found: %s is not set and %s is missing. "+
			"Set %s to an Apache ZooKeeper binary release (the directory with lib/zookeeper-*.jar; "+
			"with Homebrew, $(brew --prefix zookeeper)/libexec), or install Debian's zookeeper package "+
			"(apt-get install zookeeper), or set ZK_SERVERS to servers you run", HomeEnv, debianJar, HomeEnv)
	}
	cp := []string{debianJar}
	// Debian's zookeeper.jar lists netty-handler but not the netty-codec
	// and netty-resolver jars it needs, which the Netty server (and so TLS)
	// loads; libnetty-java, which zookeeper depends on, has them.
	for _, jar := range []string{slf4jSimpleJar, javaDir + "/netty-codec.jar", javaDir + "/netty-resolver.jar"} {
		if _, err := os.Stat(jar); err == nil {
			cp = append(cp, jar)
		}
	}
	return &installation{classPath: strings.Join(cp, string(os.PathListSeparator))}, nil
}

// release is the installation of an Apache binary release at home: every
// jar of home/lib on the class path, and the release's own logging
// configuration (logback from 3.8, log4j before) if conf/ has it.
func release(home string) (*installation, error) {
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("zkserver: %s=%s, which is not a directory: point it at an Apache ZooKeeper binary release, or unset it to use Debian's package (%s)", HomeEnv, home, debianJar)
	}
	lib := filepath.Join(home, "lib")
	jars, _ := filepath.Glob(filepath.Join(lib, "zookeeper-*.jar"))
	server := false
	for _, j := range jars {
		if !strings.HasPrefix(filepath.Base(j), "zookeeper-jute") {
			server = true
		}
	}
	if !server {
		hint := "point it at an Apache ZooKeeper binary release (apache-zookeeper-X-bin.tar.gz unpacked), not a source release"
		if exists(debianJar) {
			hint += fmt.Sprintf(", or unset it to use Debian's package (%s)", debianJar)
		}
		return nil, fmt.Errorf("zkserver: %s=%s, but %s has no zookeeper-*.jar: %s", HomeEnv, home, lib, hint)
	}
	inst := &installation{classPath: filepath.Join(lib, "*")}
	if c := filepath.Join(home, "conf", "logback.xml"); exists(c) {
		inst.props = append(inst.props, "-Dlogback.configurationFile="+c)
	}
	if c := filepath.Join(home, "conf", "log4j.properties"); exists(c) {
		inst.props = append(inst.props, "-Dlog4j.configuration=file:"+c)
	}
	return inst, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// InstallDebian installs Debian's zookeeper package with apt-get unless
// ZooKeeper can already be found (see EnsureInstalled). It is for the demo's
// launcher on a fresh Debian machine; the test kit never installs anything.
func InstallDebian() error {
	if os.Getenv(HomeEnv) != "" || exists(debianJar) {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("zkserver: %s is missing and apt-get is not available to install the zookeeper package", debianJar)
	}
	out, err := apt("install", "-y", "zookeeper")
	if err == nil {
		return nil
	}
	if upOut, upErr := apt("update"); upErr != nil {
		return fmt.Errorf("zkserver: apt-get install zookeeper failed (%v: %s) and apt-get update failed: %v: %s",
			err, tail(out, 20), upErr, tail(upOut, 20))
	}
	if out, err = apt("install", "-y", "zookeeper"); err != nil {
		return fmt.Errorf("zkserver: apt-get install -y zookeeper failed: %v\n%s", err, tail(out, 20))
	}
	return nil
}

func apt(args ...string) ([]byte, error) {
	cmd := exec.Command("apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	return cmd.CombinedOutput()
}

// javaPath returns the java binary to run: $JAVA_HOME/bin/java if
// JAVA_HOME is set (and only that), otherwise java from $PATH, otherwise
// /usr/bin/java.
func javaPath() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("zkserver: JAVA_HOME=%s, but %s is missing: point it at a Java runtime, or unset it to use java from the PATH", home, p)
		}
		return p, nil
	}
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/java"); err == nil {
		return "/usr/bin/java", nil
	}
	return "", errors.New("zkserver: no java binary found: set JAVA_HOME, put java on PATH, or install a Java runtime (Debian: default-jre-headless)")
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// fileTail returns the last n lines of the file at path, or a note saying
// why it could not be read. The lines that log the harness's own "srvr"
// polls (every 20 ms while it waits) are left out: a server that does not
// come to serve would otherwise show nothing but them.
func fileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	var kept [][]byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if !bytes.Contains(line, []byte("Processing srvr command")) {
			kept = append(kept, line)
		}
	}
	return tail(bytes.Join(kept, []byte("\n")), n)
}
