package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/zktest"
)

// A CA is a throwaway certificate authority for TLS tests.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte // the CA certificate, PEM-encoded
}

// NewCA makes a CA, failing t if it cannot.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	tmpl := certTemplate(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, key := sign(t, tmpl, nil, nil)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue returns a certificate for 127.0.0.1 and localhost signed by the CA,
// and its key, both PEM-encoded.
func (ca *CA) Issue(t testing.TB, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	tmpl := certTemplate(name)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.IPAddresses, tmpl.DNSNames = []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}
	der, key := sign(t, tmpl, ca.Cert, ca.Key)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// certTemplate is a certificate for name valid from an hour ago for a day.
func certTemplate(name string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

// sign makes a key and a certificate from tmpl for it, signed by parent's
// key (self-signed if parent is nil), and returns the certificate's DER.
func sign(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// ClientConfig is a TLS configuration that trusts the CA.
func (ca *CA) ClientConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// ServerConfig is a TLS configuration with a certificate for 127.0.0.1 and
// localhost issued by the CA, for a server of the test's own.
func (ca *CA) ServerConfig(t testing.TB) *tls.Config {
	t.Helper()
	certPEM, keyPEM := ca.Issue(t, "zktest server")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// A TLSServer is a standalone server that also serves TLS on SecureAddr.
type TLSServer struct {
	*zktest.Server
	SecureAddr string
	CA         *CA
}

// StartTLST starts a standalone server with a TLS client port (Netty, as
// ZooKeeper needs for TLS), its certificate issued by a new CA, and closes it
// when t's cleanup runs.
func StartTLST(t testing.TB) *TLSServer {
	t.Helper()
	ca := NewCA(t, "zktest CA")
	certPEM, keyPEM := ca.Issue(t, "zktest server")
	dir := t.TempDir()
	keyStore := filepath.Join(dir, "server.pem")
	trustStore := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(keyStore, append(keyPEM, certPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trustStore, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := zktest.Start(t,
		zktest.WithConfig("secureClientPort", strconv.Itoa(port)),
		zktest.WithConfig("secureClientPortAddress", "127.0.0.1"),
		zktest.WithSystemProperty("zookeeper.serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"),
		zktest.WithSystemProperty("zookeeper.ssl.keyStore.location", keyStore),
		zktest.WithSystemProperty("zookeeper.ssl.keyStore.type", "PEM"),
		zktest.WithSystemProperty("zookeeper.ssl.keyStore.password", ""),
		zktest.WithSystemProperty("zookeeper.ssl.trustStore.location", trustStore),
		zktest.WithSystemProperty("zookeeper.ssl.trustStore.type", "PEM"),
		zktest.WithSystemProperty("zookeeper.ssl.clientAuth", "none"),
	)
	return &TLSServer{Server: s, SecureAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), CA: ca}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
