package recipes_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// servers is where the examples find ZooKeeper: "host:port,host:port", as a
// program would be given it.
func servers() []string { return strings.Split(os.Getenv("ZK_SERVERS"), ",") }

func ExampleConnect() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, servers(),
		recipes.WithStateListener(func(s recipes.State) { fmt.Println("session:", s) }))
	if err != nil {
		log.Fatal(err)
	}
	// Every recipe on sess ends its holds when the session ends: Close
	// releases them all.
	if err := sess.Close(); err != nil {
		log.Fatal(err)
	}
	<-sess.Done()
	// Output:
	// session: connected
	// session: closed
}

func ExampleWithACL() {
	ctx := context.Background()
	// The nodes the owner's recipes create belong to its identity. The
	// parent it creates above the lock (/billing) is its own too, but lets
	// others create beside it (WithParentACL's default): no one else can
	// delete the lock's directory.
	owner, err := recipes.Connect(ctx, servers(),
		recipes.WithAuth("digest", "billing:s3cret"),
		recipes.WithACL(recipes.CreatorOnly()))
	if err != nil {
		log.Fatal(err)
	}
	defer owner.Close()
	m, err := locks.NewMutex(owner, "/billing/invoices")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)

	// A session without the credentials cannot even queue.
	stranger, err := recipes.Connect(ctx, servers())
	if err != nil {
		log.Fatal(err)
	}
	defer stranger.Close()
	other, err := locks.NewMutex(stranger, "/billing/invoices")
	if err != nil {
		log.Fatal(err)
	}
	_, _, err = other.TryLock(ctx)
	fmt.Println("stranger refused:", errors.Is(err, zk.ErrNoAuth))
	// Output:
	// stranger refused: true
}

func ExampleWithChroot() {
	ctx := context.Background()
	// As in ZooKeeper's connect string, the chroot follows the last server
	// ("h1:2181,h2:2181/tenant-a"); WithChroot("/examples/tenant-a") says
	// the same.
	s := servers()
	s[len(s)-1] += "/examples/tenant-a"
	sess, err := recipes.Connect(ctx, s)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/jobs/nightly")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)
	// The recipes speak in paths below the chroot; what goes to ZooKeeper
	// itself (a guard, Session.Conn) is the full path.
	fmt.Println(path.Dir(h.Node()))
	fmt.Println(path.Dir(h.Guard()[0].Path))
	// Output:
	// /jobs/nightly
	// /examples/tenant-a/jobs/nightly
}

func ExampleWithSlog() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		// Leave out the time and the error (which names the node), so that
		// the output below stays the same.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "error" {
				return slog.Attr{}
			}
			return a
		},
	}))
	sess, err := recipes.Connect(ctx, servers(), recipes.WithSlog(logger))
	if err != nil {
		log.Fatal(err)
	}
	m, err := locks.NewMutex(sess, "/examples/slog")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Someone deletes the holder's node: the loss is logged at Warn.
	if err := sess.Conn().Delete(h.Guard()[0].Path, -1); err != nil {
		log.Fatal(err)
	}
	<-h.Done()
	// The holder is told first (Done, its Context); the record follows, and
	// Release, which reports the loss, returns once it is written.
	if err := h.Release(ctx); !errors.Is(err, locks.ErrLockLost) {
		log.Fatal(err)
	}
	// So is the end of the session.
	if err := sess.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// level=WARN msg="lock lost" recipe=mutex path=/examples/slog cause=node_deleted
	// level=WARN msg="zookeeper session" state=closed
}

func ExampleWithMeterProvider() {
	ctx := context.Background()
	// Any OpenTelemetry MeterProvider: here the SDK's, read by hand.
	reader := sdkmetric.NewManualReader()
	sess, err := recipes.Connect(ctx, servers(),
		recipes.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/metrics")
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		h, err := m.Lock(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			log.Fatal(err)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			if sum, ok := md.Data.(metricdata.Sum[int64]); ok && md.Name == "zkrecipes.acquisitions" {
				for _, dp := range sum.DataPoints {
					recipe, _ := dp.Attributes.Value("recipe")
					result, _ := dp.Attributes.Value("result")
					fmt.Println(md.Name, recipe.AsString(), result.AsString(), dp.Value)
				}
			}
		}
	}
	// Output:
	// zkrecipes.acquisitions mutex acquired 3
}

// ExampleWithTLS connects to ZooKeeper's secureClientPort, trusting the CA
// in ca.pem and showing the client certificate in client.pem (which
// ZooKeeper's x509 provider makes the session's identity).
func ExampleWithTLS() {
	ca, err := os.ReadFile("ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		log.Fatal("ca.pem holds no certificate")
	}
	cert, err := tls.LoadX509KeyPair("client.pem", "client-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	sess, err := recipes.Connect(context.Background(), []string{"zk1.example.com:2281"},
		recipes.WithTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
}
