package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/locks"
)

// curatorSide is Curator's: a Java peer leads, another follows.
type curatorSide struct {
	dir     string
	peer    *curatortest.Peer
	servers string // for the follower
	leaders string // for the leaders
	log     string
	started int // leader processes started, for their ids
	// The follower's stdin, to which a line asks for a campaign, and the
	// times of its "leader" lines.
	campaign io.Writer
	led      chan campaigned
}

// newCuratorSide makes Curator's side: leaders at path reach the server at
// leaders, the follower directly. It starts the follower, which runs until
// b's end, or ctx's.
func newCuratorSide(b *testing.B, ctx context.Context, path, leaders string) *curatorSide {
	b.Helper()
	s := &curatorSide{
		dir:     path,
		peer:    curatortest.EnsureT(b),
		servers: curatortest.ServersArg(servers(b)),
		leaders: leaders,
		log:     filepath.Join(b.TempDir(), "events"),
		led:     make(chan campaigned, 1),
	}
	cmd := s.peer.Command(ctx, s.sessionFlag(), "bench-latch-follow", s.servers, path, curatortest.ClientID(0))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s.campaign = in
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(s.led)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			at := time.Now()
			if lines.Text() == "leader" {
				s.led <- campaigned{at: at}
			}
		}
	}()
	b.Cleanup(func() {
		_ = in.Close() // the end of its campaigns: it exits
		if b.Failed() {
			_ = cmd.Process.Kill() // it may be campaigning still
		}
		<-read
		if err := cmd.Wait(); err != nil && !b.Failed() {
			b.Errorf("the Curator follower: %v\n%s", err, stderr.Bytes())
		}
	})
	return s
}

// sessionFlag is the Java peer's option for failoverSession.
func (s *curatorSide) sessionFlag() string {
	return fmt.Sprintf("--session-ms=%d", failoverSession.Milliseconds())
}

func (s *curatorSide) name() string { return "curator" }
func (s *curatorSide) path() string { return s.dir }

func (s *curatorSide) lead(ctx context.Context, b *testing.B) *exec.Cmd {
	b.Helper()
	s.started++
	id := curatortest.ClientID(s.started)
	// One term, held for an hour unless killed.
	cmd := s.peer.Command(ctx, s.sessionFlag(), "latch", s.leaders, s.dir, "1", "3600000", s.log, id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // if a round fails before its kill
	deadline := time.Now().Add(time.Minute)
	for {
		events, _ := os.ReadFile(s.log)
		if bytes.Contains(events, []byte("+ E "+id+"\n")) {
			return cmd
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			b.Fatalf("the Curator leader %s did not lead within a minute: %s", id, stderr.Bytes())
		}
		time.Sleep(5 * time.Millisecond) // polling its event log
	}
}

func (s *curatorSide) follow(_ context.Context, b *testing.B) <-chan campaigned {
	b.Helper()
	if _, err := io.WriteString(s.campaign, "campaign\n"); err != nil {
		b.Fatal(err)
	}
	return s.led
}

// resign does nothing: the Java follower resigns as soon as it has said it
// leads.
func (s *curatorSide) resign(context.Context, *testing.B, *locks.Hold) {}
