package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
)

// authValue is --auth SCHEME:CREDENTIALS, which may be given several times;
// $ZKRECIPES_AUTH is the first.
type authValue struct{ creds *[]credential }

type credential struct{ scheme, auth string }

func (v authValue) String() string { return "" } // never shows credentials

// repeatable lets --auth be given more than once (see parse).
func (authValue) repeatable() bool { return true }

func (v authValue) Set(s string) error {
	c, err := parseCredential(s)
	if err != nil {
		return err
	}
	*v.creds = append(*v.creds, c)
	return nil
}

func parseCredential(s string) (credential, error) {
	scheme, auth, ok := strings.Cut(s, ":")
	switch {
	case !ok || scheme == "":
		return credential{}, errors.New("not SCHEME:CREDENTIALS (e.g. digest:user:password)")
	case scheme == "digest" && !strings.Contains(auth, ":"):
		return credential{}, errors.New("digest credentials are user:password")
	}
	return credential{scheme, auth}, nil
}

// aclValue is --acl, in zkCli's syntax: SCHEME:ID:PERMS entries separated by
// commas (world:anyone:cdrwa, auth::cdrwa, digest:user:hash:cdrwa,
// ip:127.0.0.1:r), or one of the words creator (auth::cdrwa) and open
// (world:anyone:cdrwa).
type aclValue struct{ acl *[]zk.ACL }

func (v aclValue) String() string {
	if v.acl == nil {
		return ""
	}
	return formatACL(*v.acl)
}

func (v aclValue) Set(s string) error {
	acl, err := parseACL(s)
	if err != nil {
		return err
	}
	*v.acl = acl
	return nil
}

var permLetters = map[rune]int32{
	'c': zk.PermCreate, 'd': zk.PermDelete, 'r': zk.PermRead, 'w': zk.PermWrite, 'a': zk.PermAdmin,
}

func parseACL(s string) ([]zk.ACL, error) {
	switch strings.TrimSpace(s) {
	case "creator":
		return recipes.CreatorOnly(), nil
	case "open":
		return recipes.OpenACL(), nil
	case "":
		return nil, errors.New("is empty")
	}
	var acl []zk.ACL
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		scheme, rest, ok1 := strings.Cut(entry, ":")
		i := strings.LastIndex(rest, ":")
		if !ok1 || i < 0 || scheme == "" {
			return nil, fmt.Errorf("entry %q is not SCHEME:ID:PERMS", entry)
		}
		id, letters := rest[:i], rest[i+1:]
		var perms int32
		for _, l := range letters {
			p, ok := permLetters[l]
			if !ok {
				return nil, fmt.Errorf("entry %q: permission %q is not one of cdrwa", entry, l)
			}
			perms |= p
		}
		if perms == 0 {
			return nil, fmt.Errorf("entry %q gives no permission", entry)
		}
		acl = append(acl, zk.ACL{Perms: perms, Scheme: scheme, ID: id})
	}
	return acl, nil
}

func formatACL(acl []zk.ACL) string {
	var entries []string
	for _, a := range acl {
		var letters strings.Builder
		for _, l := range "cdrwa" {
			if a.Perms&permLetters[l] != 0 {
				letters.WriteRune(l)
			}
		}
		entries = append(entries, a.Scheme+":"+a.ID+":"+letters.String())
	}
	return strings.Join(entries, ",")
}

// accessFromEnv reads $ZKRECIPES_AUTH (one SCHEME:CREDENTIALS),
// $ZKRECIPES_ACL (as --acl) and $ZKRECIPES_PARENT_ACL (as --parent-acl)
// into g.
func accessFromEnv(g *globals) error {
	if v := os.Getenv("ZKRECIPES_AUTH"); v != "" {
		c, err := parseCredential(v)
		if err != nil {
			return usagef("$ZKRECIPES_AUTH: %v", err)
		}
		g.auth = append(g.auth, c)
	}
	for _, e := range []struct {
		name string
		acl  *[]zk.ACL
	}{{"ZKRECIPES_ACL", &g.acl}, {"ZKRECIPES_PARENT_ACL", &g.parentACL}} {
		if v := os.Getenv(e.name); v != "" {
			acl, err := parseACL(v)
			if err != nil {
				return usagef("$%s: %v", e.name, err)
			}
			*e.acl = acl
		}
	}
	return nil
}

// accessOptions are the session options for g's credentials and ACL.
func accessOptions(g globals) []recipes.Option {
	var opts []recipes.Option
	for _, c := range g.auth {
		opts = append(opts, recipes.WithAuth(c.scheme, c.auth))
	}
	if g.acl != nil {
		opts = append(opts, recipes.WithACL(g.acl))
	}
	if g.parentACL != nil {
		opts = append(opts, recipes.WithParentACL(g.parentACL))
	}
	return opts
}

// notAllowed reports an error from ZooKeeper's access control.
func notAllowed(err error) bool {
	return errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrAuthFailed)
}

// notAllowedHint is what to do about a refusal, printed under its error,
// which names the node whose ACL refused and the permission it needs there
// where the recipes know them ("needs create permission on /a/b").
const notAllowedHint = "The nodes' ACL does not let this identity in: authenticate with --auth or $ZKRECIPES_AUTH as an identity it lets in, or have the node's owner change its ACL."

// tlsOptions are the session options for --tls-ca, --tls-cert and
// --tls-key: TLS when any is given, trusting the CAs in --tls-ca (else the
// system's) and presenting the client certificate if there is one.
func tlsOptions(g globals) ([]recipes.Option, error) {
	if g.tlsCA == "" && g.tlsCert == "" && g.tlsKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.tlsCA != "" {
		pemCerts, err := os.ReadFile(g.tlsCA)
		if err != nil {
			return nil, usagef("--tls-ca %s: %v", g.tlsCA, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pemCerts) {
			return nil, usagef("--tls-ca %s: no PEM certificate in it", g.tlsCA)
		}
	}
	switch {
	case (g.tlsCert == "") != (g.tlsKey == ""):
		return nil, usagef("--tls-cert and --tls-key go together")
	case g.tlsCert != "":
		cert, err := tls.LoadX509KeyPair(g.tlsCert, g.tlsKey)
		if err != nil {
			return nil, usagef("--tls-cert %s, --tls-key %s: %v", g.tlsCert, g.tlsKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return []recipes.Option{recipes.WithTLS(cfg)}, nil
}
