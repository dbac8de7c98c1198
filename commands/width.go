package commands

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// defaultWidth is the width of the human output when neither $COLUMNS nor
// the terminal says.
const defaultWidth = 80

// wideFlag turns the fitting to the terminal's width off.
func wideFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wide", Usage: "show every column and every value whole, however wide the terminal"}
}

// textWidth is how many columns the human output may fill: no limit (0)
// with --wide; else $COLUMNS; else the terminal's width when stdout is
// one; else 80.
func (f *Factory) textWidth(wide bool) int {
	if wide {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(f.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if file, ok := f.Stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(file.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return defaultWidth
}

// view is how this command's human output is drawn.
func (f *Factory) view(wide bool) textView {
	return textView{width: f.textWidth(wide), colour: useColour(f), now: f.now()}
}

// now is the factory's clock: Now when a test set one, else the time.
func (f *Factory) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}
