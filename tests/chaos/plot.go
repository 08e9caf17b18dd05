package chaos

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Mark is one fault of a run, for its picture: when, from the run's start,
// and its kind.
type Mark struct {
	At   time.Duration
	Kind string
}

// Plot is what a run's picture shows: for each recipe, the sections
// entered in each second of the run (index i: second i from the start),
// and the faults.
type Plot struct {
	Title    string
	Sections map[string][]int
	Faults   []Mark
}

// Write draws p to path, as SVG or PNG after its extension: sections per
// second of each recipe over time, averaged over a window that suits the
// run's length, above one row of ticks per kind of fault.
func (p *Plot) Write(path string) error {
	const width, height = 30 * vg.Centimeter, 18 * vg.Centimeter
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch filepath.Ext(path) {
	case ".svg":
		c = vgsvg.New(width, height)
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	default:
		return fmt.Errorf("chaos: plot %s: want a .svg or .png file", path)
	}
	seconds := 1
	for _, s := range p.Sections {
		seconds = max(seconds, len(s))
	}
	for _, f := range p.Faults {
		seconds = max(seconds, int(f.At/time.Second)+1)
	}
	unit, unitName := 1.0, "seconds"
	if seconds >= 180 {
		unit, unitName = 60, "minutes"
	}
	top, err := p.rates(seconds, unit)
	if err != nil {
		return err
	}
	bottom, err := p.rug(unit, unitName)
	if err != nil {
		return err
	}
	for _, pl := range []*plot.Plot{top, bottom} {
		pl.X.Min, pl.X.Max = 0, float64(seconds)/unit
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4, PadY: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.New(c))
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

// window returns the seconds to average a rate over: about 1/200 of the
// run, at least one.
func window(seconds int) int { return max(1, seconds/200) }

// rates is the upper panel: a line per recipe.
func (p *Plot) rates(seconds int, unit float64) (*plot.Plot, error) {
	pl := plot.New()
	w := window(seconds)
	pl.Title.Text = p.Title
	pl.Y.Label.Text = fmt.Sprintf("sections/s (mean over %d s)", w)
	pl.Y.Min = 0
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	peak := 1.0
	for i, recipe := range slices.Sorted(maps.Keys(p.Sections)) {
		counts := p.Sections[recipe]
		var xy plotter.XYs
		for at := 0; at < seconds; at += w {
			n := 0
			for s := at; s < at+w && s < len(counts); s++ {
				n += counts[s]
			}
			xy = append(xy, plotter.XY{X: float64(at) / unit, Y: float64(n) / float64(w)})
			peak = max(peak, float64(n)/float64(w))
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("chaos: plot %s: %w", recipe, err)
		}
		line.Color = plotutil.Color(i)
		line.Width = vg.Points(1)
		pl.Add(line)
		pl.Legend.Add(recipe, line)
	}
	pl.Y.Max = peak * 1.4 // room for the legend
	return pl, nil
}

// rug is the lower panel: a row of ticks per kind of fault.
func (p *Plot) rug(unit float64, unitName string) (*plot.Plot, error) {
	pl := plot.New()
	pl.X.Label.Text = unitName + " from the start"
	byKind := map[string]plotter.XYs{}
	for _, f := range p.Faults {
		byKind[f.Kind] = append(byKind[f.Kind], plotter.XY{X: f.At.Seconds() / unit})
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	var ticks []plot.Tick
	for i, kind := range kinds {
		xy := byKind[kind]
		for j := range xy {
			xy[j].Y = float64(i)
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, fmt.Errorf("chaos: plot %s: %w", kind, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(i), Radius: vg.Points(4), Shape: tick{}}
		pl.Add(s)
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: fmt.Sprintf("%s (%d)", kind, len(xy))})
	}
	pl.Y.Tick.Marker = plot.ConstantTicks(ticks)
	pl.Y.Min, pl.Y.Max = -0.7, max(0.7, float64(len(kinds))-0.3)
	if len(kinds) == 0 {
		pl.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "no faults"}})
	}
	return pl, nil
}

// tick draws a fault as a short vertical line.
type tick struct{}

func (tick) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.6)}, pt.X, pt.Y-sty.Radius, pt.X, pt.Y+sty.Radius)
}
