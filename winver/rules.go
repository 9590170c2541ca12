package winver

import "fmt"

// Range is an inclusive span of versions, as the notes write "6.1 to 6.2" or "6.2 and
// higher". A zero To means "and higher".
type Range struct {
	From, To Version
}

// Since is the range "v and higher".
func Since(v Version) Range { return Range{From: v} }

// Only is the range holding just v.
func Only(v Version) Range { return Range{From: v, To: v} }

// Between is the range "from to to", inclusive.
func Between(from, to Version) Range { return Range{From: from, To: to} }

// Contains reports whether v falls in r.
func (r Range) Contains(v Version) bool {
	return v >= r.From && (r.To == 0 || v <= r.To)
}

// String writes the range as error messages and the notes do: "6.2 and later" (the
// notes write "and higher"), "6.0 only", "6.1 to 6.2".
func (r Range) String() string {
	switch {
	case r.To == 0:
		return r.From.String() + " and later"
	case r.From == r.To:
		return r.From.String() + " only"
	default:
		return fmt.Sprintf("%s to %s", r.From, r.To)
	}
}

// Step is one row of a Steps table: from version Since on, the value is Value.
type Step[T any] struct {
	Since Version
	Value T
}

// Steps is a rule table whose value changes at given versions. Rows are in ascending
// order of Since; the first row should start at Oldest.
type Steps[T any] []Step[T]

// At returns the value in force at version v: the value of the last row whose Since is
// not after v. It panics if no row applies, which means the table itself is malformed.
func (s Steps[T]) At(v Version) T {
	for i := len(s) - 1; i >= 0; i-- {
		if v >= s[i].Since {
			return s[i].Value
		}
	}
	panic(fmt.Sprintf("winver: rule table has no row for %s", v))
}
