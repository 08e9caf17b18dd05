package integration_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv"
)

// TestTLS: a mutex and a barrier over TLS, against a real server's
// secureClientPort; a client that does not trust the server's CA is
// refused, and Connect says why.
func TestTLS(t *testing.T) {
	t.Parallel()
	srv := testenv.StartTLST(t)
	s, err := recipes.Connect(bg(), []string{srv.SecureAddr}, recipes.WithTLS(srv.CA.ClientConfig()))
	require.NoError(t, err)
	defer s.Close()

	h, err := newMutex(t, s, "/tls/lock").Lock(bg())
	require.NoError(t, err)
	assert.Positive(t, h.Token())
	require.NoError(t, h.Release(bg()))

	b, err := barriers.NewBarrier(s, "/tls/gate")
	require.NoError(t, err)
	require.NoError(t, b.Set(bg()))
	up, err := b.IsSet(bg())
	require.NoError(t, err)
	assert.True(t, up)
	require.NoError(t, b.Remove(bg()))

	other := testenv.NewCA(t, "some other CA")
	_, err = recipes.Connect(bg(), []string{srv.SecureAddr}, recipes.WithTLS(other.ClientConfig()),
		recipes.WithConnectTimeout(2*time.Second))
	var unknown x509.UnknownAuthorityError
	require.ErrorAs(t, err, &unknown, "a server signed by a CA we do not trust")
	assert.Contains(t, err.Error(), "TLS handshake with "+srv.SecureAddr)
}
