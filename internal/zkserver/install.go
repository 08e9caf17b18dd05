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

const (
	// javaDir is where Debian's zookeeper package installs its jars.
	javaDir = "/usr/share/java"
	// zkJar is the main ZooKeeper jar. Its manifest Class-Path lists every
	// runtime dependency (zookeeper-jute, netty, slf4j-api, jetty, ...), so it
	// is the only jar the server itself needs on the class path.
	zkJar = javaDir + "/zookeeper.jar"
	// slf4jSimpleJar is an SLF4J binding that logs to stderr. Without a
	// binding the server logs nothing, which makes start failures opaque.
	slf4jSimpleJar = javaDir + "/slf4j-simple.jar"
)

var (
	installMu  sync.Mutex
	installErr error
	installed  bool
)

// EnsureInstalled makes sure the Debian zookeeper package and a Java runtime
// are available, installing the package with apt-get if the ZooKeeper jar is
// missing. The result is cached for the life of the process once it succeeds.
func EnsureInstalled() error {
	installMu.Lock()
	defer installMu.Unlock()
	if installed {
		return nil
	}
	installErr = ensureInstalled()
	installed = installErr == nil
	return installErr
}

func ensureInstalled() error {
	if _, err := os.Stat(zkJar); err != nil {
		if err := aptInstall(); err != nil {
			return err
		}
		if _, err := os.Stat(zkJar); err != nil {
			return fmt.Errorf("zkserver: %s still missing after installing the zookeeper package: %w", zkJar, err)
		}
	}
	if _, err := javaPath(); err != nil {
		return err
	}
	return nil
}

// aptInstall runs "apt-get install -y zookeeper", refreshing the package
// lists with "apt-get update" and retrying once if the first attempt fails.
func aptInstall() error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("zkserver: %s is missing and apt-get is not available to install the zookeeper package", zkJar)
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

// javaPath returns the java binary to run: $JAVA_HOME/bin/java if set,
// otherwise java from $PATH, otherwise /usr/bin/java.
func javaPath() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/java"); err == nil {
		return "/usr/bin/java", nil
	}
	return "", errors.New("zkserver: no java binary found (set JAVA_HOME or install default-jre-headless)")
}

// classPath returns the class path used to run the server.
func classPath() string {
	cp := []string{zkJar}
	// Debian's zookeeper.jar lists netty-handler but not the netty-codec
	// and netty-resolver jars it needs, which the Netty server (and so TLS)
	// loads; libnetty-java, which zookeeper depends on, has them.
	for _, jar := range []string{slf4jSimpleJar, javaDir + "/netty-codec.jar", javaDir + "/netty-resolver.jar"} {
		if _, err := os.Stat(jar); err == nil {
			cp = append(cp, jar)
		}
	}
	return strings.Join(cp, string(os.PathListSeparator))
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
