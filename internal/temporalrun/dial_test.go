package temporalrun

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
)

// writeCert writes a self-signed client certificate and key.
func writeCert(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ralph"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

func TestClientOptions(t *testing.T) {
	cert, key := writeCert(t)
	t.Setenv("RALPH_TEST_TEMPORAL_KEY", "secret-key")
	for _, tc := range []struct {
		name     string
		cfg      config.Temporal
		flag     string
		tls      bool
		certs    int
		apiKey   bool
		errWants string
	}{
		{name: "plain", cfg: config.Temporal{Address: "localhost:7233"}},
		{name: "flag overrides", cfg: config.Temporal{Address: "elsewhere:1"}, flag: "localhost:7233"},
		{name: "no address", errWants: "no Temporal address"},
		{name: "mTLS", cfg: config.Temporal{Address: "ns.tmprl.cloud:7233", TLSCert: cert, TLSKey: key}, tls: true, certs: 1},
		{name: "cert without key", cfg: config.Temporal{Address: "a:1", TLSCert: cert}, errWants: "go together"},
		{name: "bad cert", cfg: config.Temporal{Address: "a:1", TLSCert: key, TLSKey: key}, errWants: "client certificate"},
		{name: "api key", cfg: config.Temporal{Address: "a:1", APIKeyEnv: "RALPH_TEST_TEMPORAL_KEY"}, tls: true, apiKey: true},
		{name: "api key unset", cfg: config.Temporal{Address: "a:1", APIKeyEnv: "RALPH_TEST_NOT_SET"}, errWants: "not set"},
		{name: "tls only", cfg: config.Temporal{Address: "a:1", TLS: true}, tls: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := FromConfig(tc.cfg, tc.flag, "", "")
			if s.Namespace != DefaultNamespace || s.TaskQueue != DefaultTaskQueue {
				t.Errorf("defaults: %+v", s)
			}
			o, err := s.ClientOptions(nil)
			if tc.errWants != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWants) {
					t.Fatalf("err = %v, want %q", err, tc.errWants)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.cfg.Address
			if tc.flag != "" {
				want = tc.flag
			}
			if o.HostPort != want {
				t.Errorf("HostPort = %q, want %q", o.HostPort, want)
			}
			if got := o.ConnectionOptions.TLS != nil; got != tc.tls {
				t.Fatalf("TLS = %v, want %v", got, tc.tls)
			}
			if tc.tls && len(o.ConnectionOptions.TLS.Certificates) != tc.certs {
				t.Errorf("certificates = %d, want %d", len(o.ConnectionOptions.TLS.Certificates), tc.certs)
			}
			if got := o.Credentials != nil; got != tc.apiKey {
				t.Errorf("credentials = %v, want %v", got, tc.apiKey)
			}
		})
	}
}
