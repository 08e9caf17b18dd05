package chaos

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPlotWrite draws an empty run, a minute's and two hours' with nine
// thousand faults, as SVG and PNG: each file is written, each SVG is
// well-formed XML that names every recipe and kind of fault with its
// count, and the two hours draw within 10 s (about 0.15 s each; some 3 s
// under the race detector).
// With CHAOS_PLOT_SAMPLE set to a .png or .svg path, the two hours' picture
// is also written there, to look at.
func TestPlotWrite(t *testing.T) {
	small := &Plot{Title: "a minute", Sections: map[string][]int{"mutex": make([]int, 60), "read": make([]int, 45)},
		Faults: []Mark{{At: 5 * time.Second, Kind: "sigstop"}, {At: 30 * time.Second, Kind: "kill-holder"},
			{At: 31500 * time.Millisecond, Kind: "kill-holder"}}}
	for i := range 60 {
		small.Sections["mutex"][i] = 5 + i%4
	}
	for i := range 45 {
		small.Sections["read"][i] = 20 + i%7
	}
	large := largePlot()
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		p     *Plot
		words []string
	}{
		{"empty", &Plot{}, []string{"no faults"}},
		{"small", small, []string{"mutex", "read", "sigstop (1)", "kill-holder (2)", "seconds from the start"}},
		{"large", large, []string{"mutex", "read", "write", "lease", "latch", "kill-holder (1500)", "kill-waiter (1500)",
			"sigstop (1500)", "one-way (1500)", "both-way (1500)", "restart-3 (1500)", "minutes from the start"}},
	} {
		for _, ext := range []string{".svg", ".png"} {
			path := filepath.Join(dir, c.name+ext)
			start := time.Now()
			if err := c.p.Write(path); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("%s took %v to draw", path, took)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 {
				t.Errorf("%s is empty", path)
			}
			if ext == ".svg" {
				checkSVG(t, path, b, c.words)
			}
		}
	}
	if sample := os.Getenv("CHAOS_PLOT_SAMPLE"); sample != "" {
		if err := large.Write(sample); err != nil {
			t.Fatal(err)
		}
		t.Logf("the two hours' picture is in %s", sample)
	}
}

// TestPlotWriteFormat refuses a file whose extension names no format it
// draws, and leaves no file behind.
func TestPlotWriteFormat(t *testing.T) {
	for _, name := range []string{"soak.gif", "soak", "soak.svg.txt"} {
		path := filepath.Join(t.TempDir(), name)
		if err := (&Plot{}).Write(path); err == nil {
			t.Errorf("Write(%q) = nil, want an error", name)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Write(%q) left a file: %v", name, err)
		}
	}
}

// largePlot is two hours of five recipes whose rates drift and dip every
// quarter of an hour, with six kinds of 1500 faults each at random times.
func largePlot() *Plot {
	r := rand.New(rand.NewPCG(1, 2))
	p := &Plot{Title: "soak of 0123abc, 2h0m0s: 612345 sections, 9000 faults", Sections: map[string][]int{}}
	for j, recipe := range []string{"mutex", "read", "write", "lease", "latch"} {
		s := make([]int, 7200)
		for i := range s {
			rate := 10 + 6*float64(j) + 3*math.Sin(float64(i)/600+float64(j)) + 3*r.NormFloat64()
			if i%900 > 880 {
				rate = 0
			}
			s[i] = max(0, int(rate))
		}
		p.Sections[recipe] = s
	}
	for _, kind := range []string{"kill-holder", "kill-waiter", "sigstop", "one-way", "both-way", "restart-3"} {
		for range 1500 {
			p.Faults = append(p.Faults, Mark{At: time.Duration(r.Int64N(int64(2 * time.Hour))), Kind: kind})
		}
	}
	return p
}

// checkSVG checks that b, the SVG file at path, is well-formed XML and
// has each of words in its text.
func checkSVG(t *testing.T, path string, b []byte, words []string) {
	t.Helper()
	var text bytes.Buffer
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v", path, err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			fmt.Fprintf(&text, "%s\n", cd)
		}
	}
	for _, w := range words {
		if !bytes.Contains(text.Bytes(), []byte(w)) {
			t.Errorf("%s has no text %q", path, w)
		}
	}
}
