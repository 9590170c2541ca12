package etw

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"strings"
	"time"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
	tl "github.com/etwemu/etwemu/tracelogging"
)

// eventMetadata is the event metadata (EVENT_SCHEMA_TL) being built.
type eventMetadata struct {
	b   tl.Builder
	bad string // why the event cannot be written (a nil field option inside a Struct, a string with a NUL); "" if none
}

// fail notes why the event cannot be written, if nothing did before.
func (em *eventMetadata) fail(why string) {
	if em.bad == "" {
		em.bad = why
	}
}

// nulFree is opt, or for a string value holding a NUL an option that fails the event: the
// string's in-type ends it at its first NUL, and the fields after it would be read from
// its rest.
func nulFree(name string, array bool, values []string, opt FieldOpt) FieldOpt {
	for n, v := range values {
		if i := strings.IndexByte(v, 0); i >= 0 {
			what := fmt.Sprintf("string field %s", tl.QuoteName(name))
			if array {
				what = fmt.Sprintf("element %d of string array %s", n, tl.QuoteName(name))
			}
			return func(em *eventMetadata, ed *eventData) {
				em.fail(fmt.Sprintf("%s holds a NUL at byte %d, where a TraceLogging string ends", what, i))
			}
		}
	}
	return opt
}

// eventData is the payload being built.
type eventData struct{ b []byte }

// FieldOpt adds one field to an event: its definition to the metadata, its value to the
// payload.
type FieldOpt func(em *eventMetadata, ed *eventData)

// WithFields gathers fields for WriteEvent.
func WithFields(opts ...FieldOpt) []FieldOpt { return opts }

// The encoders of one value, one per payload type.
var (
	le = binary.LittleEndian

	putBool    = func(b []byte, v bool) []byte { return append(b, boolByte(v)) }
	putString  = func(b []byte, v string) []byte { return append(append(b, v...), 0) }
	putInt8    = func(b []byte, v int8) []byte { return append(b, byte(v)) }
	putUint8   = func(b []byte, v uint8) []byte { return append(b, v) }
	putInt16   = func(b []byte, v int16) []byte { return le.AppendUint16(b, uint16(v)) }
	putUint16  = le.AppendUint16
	putInt32   = func(b []byte, v int32) []byte { return le.AppendUint32(b, uint32(v)) }
	putUint32  = le.AppendUint32
	putInt64   = func(b []byte, v int64) []byte { return le.AppendUint64(b, uint64(v)) }
	putUint64  = le.AppendUint64
	putFloat32 = func(b []byte, v float32) []byte { return le.AppendUint32(b, math.Float32bits(v)) }
	putFloat64 = func(b []byte, v float64) []byte { return le.AppendUint64(b, math.Float64bits(v)) }
	putUintptr = func(b []byte, v uintptr) []byte {
		if bits.UintSize == 32 {
			return le.AppendUint32(b, uint32(v))
		}
		return le.AppendUint64(b, uint64(v))
	}
	putInt = func(b []byte, v int) []byte {
		if bits.UintSize == 32 {
			return le.AppendUint32(b, uint32(v))
		}
		return le.AppendUint64(b, uint64(v))
	}
	putUint = func(b []byte, v uint) []byte {
		if bits.UintSize == 32 {
			return le.AppendUint32(b, uint32(v))
		}
		return le.AppendUint64(b, uint64(v))
	}
)

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// The in-types of Go's int, uint and uintptr, by the platform's word size, as go-winio
// chooses them.
var (
	inInt, inUint, inUintptr = wordTypes()
)

func wordTypes() (tl.InType, tl.InType, tl.InType) {
	if bits.UintSize == 32 {
		return tl.InInt32, tl.InUInt32, tl.InHexInt32
	}
	return tl.InInt64, tl.InUInt64, tl.InHexInt64
}

// scalar is a field of one value.
func scalar[T any](name string, in tl.InType, out tl.OutType, v T, put func([]byte, T) []byte) FieldOpt {
	return func(em *eventMetadata, ed *eventData) {
		em.b.Field(name, in, out, 0, tl.Scalar, 0)
		ed.b = put(ed.b, v)
	}
}

// array is a variable-count array field: a u16 count, then the values. The count is
// 16 bits: values past the 65535th are not written.
func array[T any](name string, in tl.InType, out tl.OutType, vs []T, put func([]byte, T) []byte) FieldOpt {
	vs = counted16(vs)
	return counted(name, in, out, uint16(len(vs)), func(b []byte) []byte {
		for _, v := range vs {
			b = put(b, v)
		}
		return b
	})
}

// counted16 is vs up to what a 16-bit count or length holds: values past the 65535th are
// not written.
func counted16[T any](vs []T) []T { return vs[:min(len(vs), math.MaxUint16)] }

// counted is a variable-count array field of n values, which appendValues appends after
// the count.
func counted(name string, in tl.InType, out tl.OutType, n uint16, appendValues func([]byte) []byte) FieldOpt {
	return func(em *eventMetadata, ed *eventData) {
		em.b.Field(name, in, out, 0, tl.Vcount, 0)
		ed.b = appendValues(le.AppendUint16(ed.b, n))
	}
}

// BoolField is a bool, as one byte shown as Boolean.
func BoolField(name string, value bool) FieldOpt {
	return scalar(name, tl.InUInt8, tl.OutBoolean, value, putBool)
}

// BoolArray is an array of bools.
func BoolArray(name string, values []bool) FieldOpt {
	return array(name, tl.InUInt8, tl.OutBoolean, values, putBool)
}

// StringField is a UTF-8 string.
func StringField(name string, value string) FieldOpt {
	return nulFree(name, false, []string{value}, scalar(name, tl.InAnsiString, tl.OutUTF8, value, putString))
}

// JSONStringField is a string holding JSON.
func JSONStringField(name string, value string) FieldOpt {
	return nulFree(name, false, []string{value}, scalar(name, tl.InAnsiString, tl.OutJSON, value, putString))
}

// StringArray is an array of UTF-8 strings.
func StringArray(name string, values []string) FieldOpt {
	return nulFree(name, true, counted16(values), array(name, tl.InAnsiString, tl.OutUTF8, values, putString))
}

// IntField is an int: Int32 or Int64 by the platform's int size.
func IntField(name string, value int) FieldOpt {
	return scalar(name, inInt, tl.OutDefault, value, putInt)
}

// IntArray is an array of ints.
func IntArray(name string, values []int) FieldOpt {
	return array(name, inInt, tl.OutDefault, values, putInt)
}

// Int8Field is an int8.
func Int8Field(name string, value int8) FieldOpt {
	return scalar(name, tl.InInt8, tl.OutDefault, value, putInt8)
}

// Int8Array is an array of int8s.
func Int8Array(name string, values []int8) FieldOpt {
	return array(name, tl.InInt8, tl.OutDefault, values, putInt8)
}

// Int16Field is an int16.
func Int16Field(name string, value int16) FieldOpt {
	return scalar(name, tl.InInt16, tl.OutDefault, value, putInt16)
}

// Int16Array is an array of int16s.
func Int16Array(name string, values []int16) FieldOpt {
	return array(name, tl.InInt16, tl.OutDefault, values, putInt16)
}

// Int32Field is an int32.
func Int32Field(name string, value int32) FieldOpt {
	return scalar(name, tl.InInt32, tl.OutDefault, value, putInt32)
}

// Int32Array is an array of int32s.
func Int32Array(name string, values []int32) FieldOpt {
	return array(name, tl.InInt32, tl.OutDefault, values, putInt32)
}

// Int64Field is an int64.
func Int64Field(name string, value int64) FieldOpt {
	return scalar(name, tl.InInt64, tl.OutDefault, value, putInt64)
}

// Int64Array is an array of int64s.
func Int64Array(name string, values []int64) FieldOpt {
	return array(name, tl.InInt64, tl.OutDefault, values, putInt64)
}

// UintField is a uint: UInt32 or UInt64 by the platform's int size.
func UintField(name string, value uint) FieldOpt {
	return scalar(name, inUint, tl.OutDefault, value, putUint)
}

// UintArray is an array of uints.
func UintArray(name string, values []uint) FieldOpt {
	return array(name, inUint, tl.OutDefault, values, putUint)
}

// Uint8Field is a uint8.
func Uint8Field(name string, value uint8) FieldOpt {
	return scalar(name, tl.InUInt8, tl.OutDefault, value, putUint8)
}

// Uint8Array is an array of uint8s (a UInt8 array, not binary).
func Uint8Array(name string, values []uint8) FieldOpt {
	// Bytes are their own encoding: one copy, not a call each (array's way cost a fuzz
	// input with 64 KB arrays a fifth of its time).
	values = counted16(values)
	return counted(name, tl.InUInt8, tl.OutDefault, uint16(len(values)), func(b []byte) []byte { return append(b, values...) })
}

// Uint16Field is a uint16.
func Uint16Field(name string, value uint16) FieldOpt {
	return scalar(name, tl.InUInt16, tl.OutDefault, value, putUint16)
}

// Uint16Array is an array of uint16s.
func Uint16Array(name string, values []uint16) FieldOpt {
	return array(name, tl.InUInt16, tl.OutDefault, values, putUint16)
}

// Uint32Field is a uint32.
func Uint32Field(name string, value uint32) FieldOpt {
	return scalar(name, tl.InUInt32, tl.OutDefault, value, putUint32)
}

// Uint32Array is an array of uint32s.
func Uint32Array(name string, values []uint32) FieldOpt {
	return array(name, tl.InUInt32, tl.OutDefault, values, putUint32)
}

// Uint64Field is a uint64.
func Uint64Field(name string, value uint64) FieldOpt {
	return scalar(name, tl.InUInt64, tl.OutDefault, value, putUint64)
}

// Uint64Array is an array of uint64s.
func Uint64Array(name string, values []uint64) FieldOpt {
	return array(name, tl.InUInt64, tl.OutDefault, values, putUint64)
}

// UintptrField is a uintptr, as HexInt32 or HexInt64 by the pointer size.
func UintptrField(name string, value uintptr) FieldOpt {
	return scalar(name, inUintptr, tl.OutDefault, value, putUintptr)
}

// UintptrArray is an array of uintptrs.
func UintptrArray(name string, values []uintptr) FieldOpt {
	return array(name, inUintptr, tl.OutDefault, values, putUintptr)
}

// Float32Field is a float32.
func Float32Field(name string, value float32) FieldOpt {
	return scalar(name, tl.InFloat, tl.OutDefault, value, putFloat32)
}

// Float32Array is an array of float32s.
func Float32Array(name string, values []float32) FieldOpt {
	return array(name, tl.InFloat, tl.OutDefault, values, putFloat32)
}

// Float64Field is a float64.
func Float64Field(name string, value float64) FieldOpt {
	return scalar(name, tl.InDouble, tl.OutDefault, value, putFloat64)
}

// Float64Array is an array of float64s.
func Float64Array(name string, values []float64) FieldOpt {
	return array(name, tl.InDouble, tl.OutDefault, values, putFloat64)
}

// Struct is a field grouping the fields opts add; its metadata counts them (each opt
// one field, as go-winio counts).
func Struct(name string, opts ...FieldOpt) FieldOpt {
	return func(em *eventMetadata, ed *eventData) {
		em.b.Struct(name, len(opts), 0) // more than tl.MaxStructFields is Bytes' error
		for i, opt := range opts {
			if opt == nil {
				em.fail(fmt.Sprintf("field option %d of struct %s is nil", i, tl.QuoteName(name)))
				continue
			}
			opt(em, ed)
		}
	}
}

// Time is a time, as a UTC FILETIME shown as DateTimeUtc, converted as go-winio converts
// it (windows.NsecToFiletime of UnixNano): through nanoseconds since 1970, so the same
// bytes go-winio writes, also where that differs from the time (UnixNano wraps before
// 1678 and after 2262, the zero time.Time included, and a time before 1970 loses its
// part of a 100 ns tick toward 1970).
func Time(name string, value time.Time) FieldOpt {
	ticks := value.UTC().UnixNano()/100 + clock.FileTimeUnixEpoch
	return scalar(name, tl.InFileTime, tl.OutDateTimeUTC, uint64(ticks), putUint64)
}

// BinaryField is a byte string: a u16 length, then the bytes (an etwemu addition,
// TraceLoggingBinary's encoding). Bytes past 65535 are not written.
func BinaryField(name string, value []byte) FieldOpt {
	value = counted16(value)
	return scalar(name, tl.InBinary, tl.OutDefault, value, func(b, v []byte) []byte {
		return append(le.AppendUint16(b, uint16(len(v))), v...)
	})
}

// GUIDField is a GUID (an etwemu addition, TraceLoggingGuid's encoding).
func GUIDField(name string, value guid.GUID) FieldOpt {
	return scalar(name, tl.InGUID, tl.OutDefault, value, func(b []byte, g guid.GUID) []byte {
		w := g.Bytes()
		return append(b, w[:]...)
	})
}

// SmartField picks the field constructor for v's type, as go-winio's does: the types
// above and slices of them, error (its text), time.Time, named types by their kind, and
// structs field by field (each named name); anything else is written as the string
// "(Unsupported: T) v". Where go-winio's overflows the stack on a map or slice that holds
// itself, this one writes "(Unsupported: T) (a value that holds itself)", and the same
// with the reason for a value of more than printBudget parts.
func SmartField(name string, v any) FieldOpt {
	switch v := v.(type) {
	case bool:
		return BoolField(name, v)
	case []bool:
		return BoolArray(name, v)
	case string:
		return StringField(name, v)
	case []string:
		return StringArray(name, v)
	case int:
		return IntField(name, v)
	case []int:
		return IntArray(name, v)
	case int8:
		return Int8Field(name, v)
	case []int8:
		return Int8Array(name, v)
	case int16:
		return Int16Field(name, v)
	case []int16:
		return Int16Array(name, v)
	case int32:
		return Int32Field(name, v)
	case []int32:
		return Int32Array(name, v)
	case int64:
		return Int64Field(name, v)
	case []int64:
		return Int64Array(name, v)
	case uint:
		return UintField(name, v)
	case []uint:
		return UintArray(name, v)
	case uint8:
		return Uint8Field(name, v)
	case []uint8:
		return Uint8Array(name, v)
	case uint16:
		return Uint16Field(name, v)
	case []uint16:
		return Uint16Array(name, v)
	case uint32:
		return Uint32Field(name, v)
	case []uint32:
		return Uint32Array(name, v)
	case uint64:
		return Uint64Field(name, v)
	case []uint64:
		return Uint64Array(name, v)
	case uintptr:
		return UintptrField(name, v)
	case []uintptr:
		return UintptrArray(name, v)
	case float32:
		return Float32Field(name, v)
	case []float32:
		return Float32Array(name, v)
	case float64:
		return Float64Field(name, v)
	case []float64:
		return Float64Array(name, v)
	case error:
		return StringField(name, v.Error())
	case time.Time:
		return Time(name, v)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return SmartField(name, rv.Bool())
	case reflect.Int:
		return SmartField(name, int(rv.Int()))
	case reflect.Int8:
		return SmartField(name, int8(rv.Int()))
	case reflect.Int16:
		return SmartField(name, int16(rv.Int()))
	case reflect.Int32:
		return SmartField(name, int32(rv.Int()))
	case reflect.Int64:
		return SmartField(name, rv.Int())
	case reflect.Uint:
		return SmartField(name, uint(rv.Uint()))
	case reflect.Uint8:
		return SmartField(name, uint8(rv.Uint()))
	case reflect.Uint16:
		return SmartField(name, uint16(rv.Uint()))
	case reflect.Uint32:
		return SmartField(name, uint32(rv.Uint()))
	case reflect.Uint64:
		return SmartField(name, rv.Uint())
	case reflect.Uintptr:
		return SmartField(name, uintptr(rv.Uint()))
	case reflect.Float32:
		return SmartField(name, float32(rv.Float()))
	case reflect.Float64:
		return SmartField(name, rv.Float())
	case reflect.String:
		return SmartField(name, rv.String())
	case reflect.Struct:
		fields := make([]FieldOpt, 0, rv.NumField())
		for i := 0; i < rv.NumField(); i++ {
			if f := rv.Field(i); f.CanInterface() {
				fields = append(fields, SmartField(name, f.Interface()))
			}
		}
		return Struct(name, fields...)
	}
	if why := unprintable(rv); why != "" {
		return StringField(name, fmt.Sprintf("(Unsupported: %T) (%s)", v, why))
	}
	return StringField(name, fmt.Sprintf("(Unsupported: %T) %v", v, v))
}

// printBudget is how many values unprintable walks before it calls a value too large
// to print: more than an event's 64 KB could hold in any case, each taking two bytes at
// least (a digit and a space).
const printBudget = 1 << 15

// unprintable says why %v must not print rv, or "": a map or slice that holds itself,
// which fmt would follow for ever (go-winio's SmartField then overflows the stack), or
// more than printBudget values. It follows what fmt follows: maps, slices, arrays,
// structs, interfaces, and a pointer at the top only (below it fmt prints addresses),
// but not a value fmt asks to format itself (a Formatter, an error, a Stringer).
func unprintable(rv reflect.Value) string {
	if formatsItself(rv) {
		return ""
	}
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	budget := printBudget
	type ref struct {
		p uintptr
		n int
	}
	onPath := map[ref]bool{}
	var walk func(v reflect.Value) string
	walk = func(v reflect.Value) string {
		if budget--; budget < 0 {
			return fmt.Sprintf("more than %d values to print", printBudget)
		}
		if formatsItself(v) {
			return ""
		}
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				return walk(v.Elem())
			}
		case reflect.Map, reflect.Slice:
			if v.IsNil() {
				return ""
			}
			r := ref{v.Pointer(), v.Len()}
			if onPath[r] {
				return "a value that holds itself"
			}
			onPath[r] = true
			defer delete(onPath, r)
			if v.Kind() == reflect.Map {
				for it := v.MapRange(); it.Next(); {
					if why := walk(it.Key()); why != "" {
						return why
					}
					if why := walk(it.Value()); why != "" {
						return why
					}
				}
				return ""
			}
			fallthrough
		case reflect.Array:
			for i := range v.Len() {
				if why := walk(v.Index(i)); why != "" {
					return why
				}
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if why := walk(v.Field(i)); why != "" {
					return why
				}
			}
		}
		return ""
	}
	return walk(rv)
}

// formatsItself reports whether fmt's %v prints v by a method of its own rather than by
// following its contents: a Formatter, an error or a Stringer (fmt's handleMethods).
func formatsItself(v reflect.Value) bool {
	if !v.IsValid() || !v.CanInterface() {
		return false
	}
	switch v.Interface().(type) {
	case fmt.Formatter, error, fmt.Stringer:
		return true
	}
	return false
}
