package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// DefaultMaxInputSize bounds what wo reads from a file or standard input
// (wo import --max-size raises it): a document store's import is not a
// place for gigabytes, and /dev/zero must not fill the memory.
const DefaultMaxInputSize = 32 << 20

// readInputLimit reads a file, or standard input for "-", and stops with
// an error as soon as it has read more than limit bytes.
func (f *Factory) readInputLimit(name string, limit int64) ([]byte, string, error) {
	if name == "-" {
		b, err := readAtMost(f.Stdin, "stdin", limit)
		if err != nil && !errors.As(err, new(*usageError)) {
			err = fmt.Errorf("reading standard input: %w", err)
		}
		return b, "stdin", err
	}
	file, err := os.Open(name)
	if err != nil {
		return nil, name, &usageError{msg: fmt.Sprintf("cannot read %s: %v", name, unwrapPathError(err))}
	}
	defer file.Close()
	if fi, err := file.Stat(); err == nil && fi.IsDir() {
		return nil, name, &usageError{msg: fmt.Sprintf("cannot read %s: it is a folder", name)}
	}
	b, err := readAtMost(file, name, limit)
	if err != nil && !errors.As(err, new(*usageError)) {
		err = &usageError{msg: fmt.Sprintf("cannot read %s: %v", name, unwrapPathError(err))}
	}
	return b, name, err
}

func readAtMost(r io.Reader, source string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, usagef(fmt.Sprintf("%s is larger than %s, the most wo reads at once: stopped reading; raise the limit with wo import --max-size BYTES if this is really one import", source, byteSize(limit)))
	}
	return b, nil
}

// parseSize reads a byte count such as 1048576, 64MiB, 64M or 2G (binary
// multiples).
func parseSize(s string) (int64, error) {
	num := strings.TrimRight(s, "KMGiBkmgb")
	unit := strings.ToLower(s[len(num):])
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1 << 10,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "gb": 1 << 30}[unit]
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || mult == 0 || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a size: use a positive number of bytes, optionally with K, M or G (e.g. 64MiB)", s)
	}
	return n * mult, nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// readOnly is cfg for a command that only reads.
func readOnly(cfg StoreConfig) StoreConfig {
	cfg.ReadOnly = true
	return cfg
}
