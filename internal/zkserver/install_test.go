package zkserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestZooKeeperHome runs a server from an Apache binary release's layout:
// ZOOKEEPER_HOME/lib with zookeeper-X.jar. The release here is made of
// Debian's jars, whose manifest names its dependencies by absolute path.
func TestZooKeeperHome(t *testing.T) {
	home := t.TempDir()
	lib := filepath.Join(home, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"zookeeper-3.8.4.jar": debianJar, "slf4j-simple-1.7.jar": slf4jSimpleJar} {
		if err := os.Symlink(target, filepath.Join(lib, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(HomeEnv, home)
	s, err := Start()
	if err != nil {
		t.Fatalf("start from %s=%s: %v", HomeEnv, home, err)
	}
	defer s.Close()
	if mode, err := ServerMode(s.Addr()); err != nil || mode != "standalone" {
		t.Fatalf("mode = %q, %v", mode, err)
	}
}

// TestZooKeeperHomeWithoutServer: a ZOOKEEPER_HOME with no server jar (a
// source release, a typo) is refused, naming what it lacks, and nothing
// else is tried.
func TestZooKeeperHomeWithoutServer(t *testing.T) {
	home := t.TempDir()
	t.Setenv(HomeEnv, home)
	_, err := Start()
	if err == nil {
		t.Fatal("Start succeeded with an empty ZOOKEEPER_HOME")
	}
	for _, want := range []string{HomeEnv + "=" + home, filepath.Join(home, "lib"), "zookeeper-*.jar", "binary release"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// TestZooKeeperHomeMissing: a ZOOKEEPER_HOME that does not exist says so.
func TestZooKeeperHomeMissing(t *testing.T) {
	home := filepath.Join(t.TempDir(), "nowhere")
	t.Setenv(HomeEnv, home)
	_, err := Start()
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Start with a missing ZOOKEEPER_HOME: %v", err)
	}
}

// TestJavaHomeWithoutJava: a JAVA_HOME with no java is refused, not passed
// over for the PATH's.
func TestJavaHomeWithoutJava(t *testing.T) {
	home := t.TempDir()
	t.Setenv("JAVA_HOME", home)
	_, err := javaPath()
	if err == nil || !strings.Contains(err.Error(), "JAVA_HOME="+home) {
		t.Fatalf("javaPath with an empty JAVA_HOME: %v", err)
	}
}
