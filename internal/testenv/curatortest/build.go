package curatortest

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sources are CuratorPeer's Java sources (its main class, and the soak
// worker it runs in mode soak-mutex), compiled by Ensure.
//
//go:embed java/*.java
var sources embed.FS

const (
	// javaDir is where Debian installs its jars.
	javaDir = "/usr/share/java"
	// aptPackage provides Curator; it depends on the ZooKeeper client,
	// Guava and SLF4J packages.
	aptPackage = "libcurator-recipes-java"
)

// jars is what CuratorPeer needs at compile and run time, in /usr/share/java.
// The ZooKeeper client uses NIO sockets by default, so Netty and the server's
// dependencies (which zookeeper.jar's manifest lists, and the JVM then adds
// on its own) are not needed. slf4j-nop silences the logging.
var jars = []string{
	"curator-recipes.jar",
	"curator-framework.jar",
	"curator-client.jar",
	"zookeeper.jar",
	"zookeeper-jute.jar",
	"guava.jar",
	"slf4j-api.jar",
	"slf4j-nop.jar",
}

// CacheDir returns the directory holding compiled peers, one subdirectory
// per hash of the source, the class path and the JDK: zkrecipes/curatortest
// under os.UserCacheDir, or under os.TempDir if there is no user cache.
// If it cannot be created, Ensure uses zkrecipes-curatortest under
// os.TempDir instead.
func CacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "zkrecipes", "curatortest")
}

// ensureInstalled installs the Curator package if its jar is missing.
func ensureInstalled() error {
	jar := filepath.Join(javaDir, "curator-recipes.jar")
	if _, err := os.Stat(jar); err == nil {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("curatortest: %s is missing and there is no apt-get to install %s", jar, aptPackage)
	}
	out, err := apt("install", "-y", aptPackage)
	if err != nil {
		// Stale package lists are the usual cause; refresh them once.
		if upOut, upErr := apt("update"); upErr != nil {
			return fmt.Errorf("curatortest: apt-get install %s: %v: %s; apt-get update: %v: %s",
				aptPackage, err, tail(out, 10), upErr, tail(upOut, 10))
		}
		if out, err = apt("install", "-y", aptPackage); err != nil {
			return fmt.Errorf("curatortest: apt-get install %s: %v\n%s", aptPackage, err, tail(out, 20))
		}
	}
	if _, err := os.Stat(jar); err != nil {
		return fmt.Errorf("curatortest: %s still missing after installing %s: %w", jar, aptPackage, err)
	}
	return nil
}

func apt(args ...string) ([]byte, error) {
	// Other test binaries may be installing packages at the same time:
	// wait for dpkg's lock rather than fail.
	cmd := exec.Command("apt-get", append([]string{"-o", "DPkg::Lock::Timeout=300"}, args...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	return cmd.CombinedOutput()
}

// classPathJars returns the full paths of jars, failing if one is missing.
func classPathJars() ([]string, error) {
	out := make([]string, len(jars))
	for i, j := range jars {
		out[i] = filepath.Join(javaDir, j)
		if _, err := os.Stat(out[i]); err != nil {
			return nil, fmt.Errorf("curatortest: class path: %w", err)
		}
	}
	return out, nil
}

// jdkTool returns $JAVA_HOME/bin/name if it exists, else name from $PATH.
func jdkTool(name string) (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("curatortest: no %s (install default-jdk-headless or set JAVA_HOME): %w", name, err)
	}
	return p, nil
}

// compile returns a directory holding the compiled CuratorPeer, compiling it
// unless the cache already has it. The cache key covers the source, the
// javac binary and each jar's path, size and modification time, so an
// upgraded package or JDK gets a fresh build. Concurrent processes each
// compile into a private directory and rename it into place; the first
// rename wins and the others use its result.
func compile(jarPaths []string) (string, error) {
	javac, err := jdkTool("javac")
	if err != nil {
		return "", err
	}
	key, err := cacheKey(javac, jarPaths)
	if err != nil {
		return "", err
	}
	cache := CacheDir()
	dir := filepath.Join(cache, key)
	if compiled(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		// An unwritable home: fall back to a cache in the temporary directory.
		cache = filepath.Join(os.TempDir(), "zkrecipes-curatortest")
		dir = filepath.Join(cache, key)
		if compiled(dir) {
			return dir, nil
		}
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return "", fmt.Errorf("curatortest: %w", err)
		}
	}
	work, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return "", fmt.Errorf("curatortest: %w", err)
	}
	defer os.RemoveAll(work) // after a successful rename, nothing is left
	classes := filepath.Join(work, "classes")
	names, err := fs.Glob(sources, "java/*.java")
	if err != nil {
		return "", fmt.Errorf("curatortest: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(work, "src"), 0o755); err != nil {
		return "", fmt.Errorf("curatortest: %w", err)
	}
	args := []string{"-Xlint:all,-path", "-encoding", "UTF-8",
		"-cp", strings.Join(jarPaths, string(os.PathListSeparator)), "-d", classes}
	for _, name := range names {
		src := filepath.Join(work, "src", filepath.Base(name))
		data, _ := sources.ReadFile(name) // listed by the glob
		if err := os.WriteFile(src, data, 0o644); err != nil {
			return "", fmt.Errorf("curatortest: %w", err)
		}
		args = append(args, src)
	}
	cmd := exec.Command(javac, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("curatortest: javac %s: %v\n%s", MainClass, err, tail(out, 40))
	}
	if err := os.Rename(classes, dir); err != nil {
		if compiled(dir) {
			return dir, nil // another process got there first
		}
		return "", fmt.Errorf("curatortest: %w", err)
	}
	return dir, nil
}

// compiled reports whether dir holds a compiled CuratorPeer.
func compiled(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MainClass+".class"))
	return err == nil
}

// cacheKey hashes what the compiled classes depend on.
func cacheKey(javac string, jarPaths []string) (string, error) {
	h := sha256.New()
	names, err := fs.Glob(sources, "java/*.java")
	if err != nil {
		return "", fmt.Errorf("curatortest: %w", err)
	}
	for _, name := range names {
		data, _ := sources.ReadFile(name) // listed by the glob
		fmt.Fprintf(h, "source %s %d\n%s\n", name, len(data), data)
	}
	fmt.Fprintf(h, "javac %s\n", javac)
	if real, err := filepath.EvalSymlinks(javac); err == nil {
		fmt.Fprintf(h, "javac-real %s\n", real)
	}
	for _, j := range jarPaths {
		st, err := os.Stat(j)
		if err != nil {
			return "", fmt.Errorf("curatortest: class path: %w", err)
		}
		fmt.Fprintf(h, "jar %s %d %d\n", j, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
