package chaos

import (
	"fmt"
	"image/color"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // registers png (and jpg, tif) with draw.NewFormattedCanvas
	_ "gonum.org/v1/plot/vg/vgsvg" // registers svg
)

// Mark is one fault of a run, for the picture: when (from the run's start)
// and its kind ("kill-holder", "kill-waiter", "sigstop", "one-way",
// "both-way", "restart-3", "restart-5", ...: free strings).
type Mark struct {
	At   time.Duration
	Kind string
}

// Plot is what a run's picture shows: for each recipe ("mutex", "read",
// "write", "lease", "multi", "latch", "curator", ... free strings),
// sections entered in each second of the run (index i = second i from the
// start), and the faults.
type Plot struct {
	Title    string
	Sections map[string][]int
	Faults   []Mark
}

// The picture's size, and the share of its height the rates take; the
// rug of faults has the rest.
const (
	plotWidth  = 30 * vg.Centimeter
	plotHeight = 18 * vg.Centimeter
	ratesShare = 2.0 / 3
)

// Write draws p to path; the format follows the extension (.svg or .png).
// It takes any format registered with draw.NewFormattedCanvas, so .jpg
// and .tif also work; another extension is refused before path is made.
//
// The picture has two panels on one x axis, in minutes from the run's
// start (in seconds for a run under 3 minutes). Above, a line per recipe
// of sections per second, each a mean over a window of about 1/300 of the
// run (1 s for a minute, 20 s for two hours), so that two hours of five
// recipes stay lines rather than a band of noise. Below, a row per kind of
// fault, labelled with the kind and its count, with a tick at each fault;
// the ticks are partly transparent, so that where faults crowd the row is
// darker. A fault before the start is drawn at the start. Recipes and kinds are in sorted order. A run of two hours with
// ten thousand faults draws in a fraction of a second.
func (p *Plot) Write(path string) error {
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")))
	if err != nil {
		return fmt.Errorf("chaos: plot %s: want a .svg or .png file: %w", path, err)
	}
	seconds := p.seconds()
	unit, unitName := 1.0, "seconds"
	if seconds >= 180 {
		unit, unitName = 60, "minutes"
	}
	top, err := p.rates(seconds, unit)
	if err != nil {
		return err
	}
	bottom, glyphs, err := p.rug(unit, unitName)
	if err != nil {
		return err
	}
	ticks := timeTicks{}
	for _, pl := range []*plot.Plot{top, bottom} {
		pl.X.Min, pl.X.Max = 0, float64(seconds)/unit
		pl.X.Tick.Marker = ticks
	}

	// The legend goes in a margin right of the rates, so that no line
	// runs under it however high the rates are; both panels keep the same
	// margin, so that their x axes stay aligned.
	const gap = 3 * vg.Millimeter
	legend := top.Legend.Rectangle(draw.Canvas{}).Size().X
	top.Legend.XOffs = legend + gap
	pad := 2 * vg.Millimeter
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: pad, PadBottom: pad, PadLeft: pad,
		PadRight: legend + gap + pad, PadY: 4 * vg.Millimeter}
	whole := draw.New(c)
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, whole)
	// Align gives the panels equal heights; the rates take more. Only the
	// panels' heights change here, so their x axes stay where Align put
	// them.
	split := whole.Min.Y + pad + vg.Length(1-ratesShare)*(whole.Size().Y-2*pad)
	canvases[0][0].Min.Y = split + tiles.PadY/2
	canvases[1][0].Max.Y = split - tiles.PadY/2
	if len(glyphs) > 0 {
		// A tick spans half the distance between two rows.
		row := bottom.DataCanvas(canvases[1][0]).Size().Y / vg.Length(bottom.Y.Max-bottom.Y.Min)
		for _, g := range glyphs {
			g.GlyphStyle.Radius = row / 4
		}
	}
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])

	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chaos: plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("chaos: plot %s: %w", path, err)
	}
	return f.Close()
}

// seconds returns the run's length in whole seconds, at least one: its
// longest recipe's, or its last fault's if that came later.
func (p *Plot) seconds() int {
	seconds := 1
	for _, s := range p.Sections {
		seconds = max(seconds, len(s))
	}
	for _, f := range p.Faults {
		seconds = max(seconds, int(f.At/time.Second)+1)
	}
	return seconds
}

// window returns the seconds a rate is averaged over: the roundest length
// not over 1/300 of the run, so that a line has some 300 to 600 points.
func window(seconds int) int {
	w := 1
	for _, round := range []int{2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600} {
		if round <= seconds/300 {
			w = round
		}
	}
	return w
}

// rates is the upper panel: a line per recipe, with the legend.
func (p *Plot) rates(seconds int, unit float64) (*plot.Plot, error) {
	pl := plot.New()
	w := window(seconds)
	pl.Title.Text = p.Title
	pl.Y.Label.Text = "sections/s"
	if w > 1 {
		pl.Y.Label.Text = fmt.Sprintf("sections/s (mean over %d s)", w)
	}
	pl.Y.Min = 0
	pl.Y.Tick.Marker = plot.TickerFunc(roundTicks)
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	peak := 1.0
	for i, recipe := range slices.Sorted(maps.Keys(p.Sections)) {
		counts := p.Sections[recipe]
		xy := make(plotter.XYs, 0, seconds/w+1)
		for at := 0; at < seconds; at += w {
			end := min(at+w, seconds)
			n := 0
			for _, c := range counts[min(at, len(counts)):min(end, len(counts))] {
				n += c
			}
			// A mean is the rate in the middle of its window.
			rate := float64(n) / float64(end-at)
			xy = append(xy, plotter.XY{X: (float64(at+end) / 2) / unit, Y: rate})
			peak = max(peak, rate)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("chaos: plot %s: %w", recipe, err)
		}
		// Beyond the palette's seven colours, a recipe's line is dashed.
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		line.Width = vg.Points(1.2)
		pl.Add(line)
		pl.Legend.Add(recipe, line)
	}
	pl.Y.Max = peak * 1.05
	return pl, nil
}

// rug is the lower panel: a row of ticks per kind of fault, the first kind
// on top. It returns the rows, whose ticks' height Write sets once it
// knows the panel's.
func (p *Plot) rug(unit float64, unitName string) (*plot.Plot, []*plotter.Scatter, error) {
	pl := plot.New()
	pl.X.Label.Text = unitName + " from the start"
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	pl.Add(grid)
	byKind := map[string]plotter.XYs{}
	for _, f := range p.Faults {
		byKind[f.Kind] = append(byKind[f.Kind], plotter.XY{X: max(f.At, 0).Seconds() / unit})
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	// Hues spread round the wheel, dark enough to read on white.
	// Rainbow's colours are opaque here: palette.HSVA reports a colour
	// that is not premultiplied, so one with an alpha below 1 converts to
	// the wrong colour.
	colors := palette.Rainbow(max(2, len(kinds)), palette.Red, palette.Hue(1-1/float64(max(2, len(kinds)))), 0.9, 0.7, 1).Colors()
	var rows []*plotter.Scatter
	var labels []plot.Tick
	for i, kind := range kinds {
		xy := byKind[kind]
		y := float64(len(kinds) - 1 - i)
		for j := range xy {
			xy[j].Y = y
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, nil, fmt.Errorf("chaos: plot %s: %w", kind, err)
		}
		// Partly transparent, so that where faults crowd the row is darker.
		c := color.NRGBAModel.Convert(colors[i]).(color.NRGBA)
		c.A = 0xa0
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: tickGlyph{}}
		pl.Add(s)
		rows = append(rows, s)
		labels = append(labels, plot.Tick{Value: y, Label: fmt.Sprintf("%s (%d)", kind, len(xy))})
	}
	if len(kinds) == 0 {
		labels = []plot.Tick{{Value: 0, Label: "no faults"}}
	}
	pl.Y.Tick.Marker = plot.ConstantTicks(labels)
	pl.Y.Min, pl.Y.Max = -0.6, max(1, float64(len(kinds)))-0.4
	return pl, rows, nil
}

// tickGlyph draws a fault as a vertical line of twice the glyph's radius;
// the library's glyphs are all as wide as they are high, and ten thousand
// of them would hide each other.
type tickGlyph struct{}

func (tickGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X, pt.Y-sty.Radius, pt.X, pt.Y+sty.Radius)
}

// roundTicks are plot.DefaultTicks without the zeros it can put after a
// round number's point ("25.00").
func roundTicks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if strings.Contains(t.Label, ".") && !strings.Contains(t.Label, "e") {
			ticks[i].Label = strings.TrimSuffix(strings.TrimRight(t.Label, "0"), ".")
		}
	}
	return ticks
}

// timeTicks labels the x axis at round minutes or seconds, about a dozen
// labels, so that a fault can be read off against the rates above it;
// plot.DefaultTicks aims at three.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi-lo < 4 {
		return roundTicks(lo, hi)
	}
	step := 1.0
	for _, round := range []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 240, 360, 720, 1440} {
		step = round
		if (hi-lo)/round <= 12 {
			break
		}
	}
	for (hi-lo)/step > 12 {
		step *= 2
	}
	var ticks []plot.Tick
	for v := step * float64(int(lo/step)); v <= hi; v += step {
		if v >= lo {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprint(v)})
		}
	}
	return ticks
}
