// Package cells reads the version and offset cells of the layout tables in Geoff Chappell's
// articles (geoffchappell.com), as they write them: "5.0 to 6.0", "6.1 and higher", "6.0
// only", and offsets such as "0x14 (5.0); 0x18 (5.1 to 6.0); 0x14", where the last value,
// without versions, holds for every version of the row that the parts before it do not name.
// The layout catalogue writes ETW_UM_LOGGER_CONTEXT in this notation, and the generator of
// its test (layout/internal/seedgen) reads the article with the same functions.
package cells

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etwemu/etwemu/winver"
)

// Versions reads a versions cell into the versions it names, oldest first. Parts are
// separated by ';': "5.0 to 5.2; not in 6.0; 6.1 and higher".
func Versions(cell string) ([]winver.Version, error) {
	var out []winver.Version
	for _, part := range strings.Split(cell, ";") {
		part = strings.TrimSpace(part)
		if part == "" || strings.HasPrefix(part, "not in ") {
			continue
		}
		r, err := span(part)
		if err != nil {
			return nil, err
		}
		for _, v := range winver.All() {
			if r.Contains(v) {
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cells: versions cell %q names no version", cell)
	}
	return out, nil
}

// span reads one version span: "5.0", "6.0 only", "6.1 and higher", "5.1 to 6.0".
func span(s string) (winver.Range, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), " only")
	if from, ok := strings.CutSuffix(s, " and higher"); ok {
		v, err := winver.Parse(from)
		return winver.Since(v), err
	}
	if from, to, ok := strings.Cut(s, " to "); ok {
		a, err := winver.Parse(from)
		if err != nil {
			return winver.Range{}, err
		}
		b, err := winver.Parse(to)
		if b < a {
			return winver.Range{}, fmt.Errorf("cells: span %q runs backwards", s)
		}
		return winver.Between(a, b), err
	}
	v, err := winver.Parse(s)
	return winver.Only(v), err
}

// Offsets reads one architecture's offset cell for a row whose versions are row. Each part
// is "0xNN (span)", "not in span" or, last, a bare "0xNN" for every remaining version of the
// row. A colon is read as ';' (the ETW_UM_LOGGER_CONTEXT article has one such typo). The
// result maps each version to its offset; versions the cell leaves out are absent.
func Offsets(cell string, row []winver.Version) (map[winver.Version]int, error) {
	out := map[winver.Version]int{}
	skip := map[winver.Version]bool{}
	parts := strings.Split(strings.ReplaceAll(cell, ":", ";"), ";")
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(part, "not in "); ok {
			r, err := span(rest)
			if err != nil {
				return nil, err
			}
			for _, v := range row {
				if r.Contains(v) {
					skip[v] = true
				}
			}
			continue
		}
		num, spec, hasSpec := strings.Cut(part, "(")
		off, err := strconv.ParseInt(strings.TrimSpace(num), 0, 32)
		if err != nil {
			return nil, fmt.Errorf("cells: offset %q in %q: %v", num, cell, err)
		}
		if !hasSpec {
			if i != len(parts)-1 {
				return nil, fmt.Errorf("cells: bare offset %q before the end of %q", part, cell)
			}
			for _, v := range row {
				if _, ok := out[v]; !ok && !skip[v] {
					out[v] = int(off)
				}
			}
			continue
		}
		r, err := span(strings.TrimSuffix(strings.TrimSpace(spec), ")"))
		if err != nil {
			return nil, err
		}
		for _, v := range row {
			if r.Contains(v) {
				if _, dup := out[v]; dup {
					return nil, fmt.Errorf("cells: %q names %v twice", cell, v)
				}
				out[v] = int(off)
			}
		}
	}
	return out, nil
}
