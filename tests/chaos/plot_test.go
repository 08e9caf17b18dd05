package chaos

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlot draws an empty run, and a two-hour one with thousands of
// faults, as SVG and PNG; the SVG is well-formed and names every recipe
// and kind of fault.
func TestPlot(t *testing.T) {
	big := &Plot{Title: "two hours", Sections: map[string][]int{}}
	for _, r := range []string{"mutex", "read", "write", "lease", "latch"} {
		s := make([]int, 7200)
		for i := range s {
			s[i] = 20 + i%7
		}
		big.Sections[r] = s
	}
	for k := range 6 {
		for i := range 1500 {
			big.Faults = append(big.Faults, Mark{At: time.Duration(i*4800+k) * time.Millisecond, Kind: fmt.Sprint("kind-", k)})
		}
	}
	dir := t.TempDir()
	for name, p := range map[string]*Plot{"empty": {}, "big": big} {
		for _, ext := range []string{".svg", ".png"} {
			path := filepath.Join(dir, name+ext)
			require.NoError(t, p.Write(path))
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Positive(t, st.Size())
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "big.svg"))
	require.NoError(t, err)
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is not well-formed")
	}
	for _, want := range []string{"mutex", "latch", "kind-0 (1500)", "kind-5 (1500)"} {
		assert.Contains(t, string(svg), want)
	}
	assert.Error(t, big.Write(filepath.Join(dir, "big.gif")), "an unknown format")
}
