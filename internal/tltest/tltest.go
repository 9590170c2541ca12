// Package tltest holds what the tests of the TraceLogging provider, the consumer and
// etwemu dump share: an event with one field of every kind go-winio's etw package writes,
// and the values a decoder must read back.
package tltest

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/tracelogging"
)

// Case is one field go-winio's API can write, and the value a decoder must read
// back.
type Case struct {
	Opt  etw.FieldOpt
	Name string
	Want any
}

type point struct {
	X, Y int32
	Tag  string
}

// When is the time the Time field carries (a multiple of 100 ns, FILETIME's unit).
var When = time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC)

// EveryField writes one field of each of go-winio's constructors (and etwemu's two
// additions), with values at their types' edges.
func EveryField() []Case {
	id := guid.MustParse("01234567-89ab-cdef-0123-456789abcdef")
	return []Case{
		{etw.BoolField("Bool", true), "Bool", true},
		{etw.BoolArray("BoolArray", []bool{true, false, true}), "BoolArray", []bool{true, false, true}},
		{etw.StringField("String", "héllo, wörld"), "String", "héllo, wörld"},
		{etw.JSONStringField("JSON", `{"a":1}`), "JSON", `{"a":1}`},
		{etw.StringArray("StringArray", []string{"", "a", "bc"}), "StringArray", []string{"", "a", "bc"}},
		{etw.IntField("Int", math.MinInt), "Int", word[int32, int64](math.MinInt)},
		{etw.IntArray("IntArray", []int{-1, 0, math.MaxInt}), "IntArray", words[int32, int64](-1, 0, math.MaxInt)},
		{etw.Int8Field("Int8", math.MinInt8), "Int8", int8(math.MinInt8)},
		{etw.Int8Array("Int8Array", []int8{-1, 127}), "Int8Array", []int8{-1, 127}},
		{etw.Int16Field("Int16", math.MinInt16), "Int16", int16(math.MinInt16)},
		{etw.Int16Array("Int16Array", []int16{-2, 32767}), "Int16Array", []int16{-2, 32767}},
		{etw.Int32Field("Int32", math.MinInt32), "Int32", int32(math.MinInt32)},
		{etw.Int32Array("Int32Array", []int32{-3, math.MaxInt32}), "Int32Array", []int32{-3, math.MaxInt32}},
		{etw.Int64Field("Int64", math.MinInt64), "Int64", int64(math.MinInt64)},
		{etw.Int64Array("Int64Array", []int64{-4, math.MaxInt64}), "Int64Array", []int64{-4, math.MaxInt64}},
		{etw.UintField("Uint", math.MaxUint), "Uint", word[uint32, uint64](uint(math.MaxUint))},
		{etw.UintArray("UintArray", []uint{0, 7}), "UintArray", words[uint32, uint64, uint](0, 7)},
		{etw.Uint8Field("Uint8", 255), "Uint8", uint8(255)},
		{etw.Uint8Array("Uint8Array", []uint8{0, 1, 255}), "Uint8Array", []uint8{0, 1, 255}},
		{etw.Uint16Field("Uint16", 65535), "Uint16", uint16(65535)},
		{etw.Uint16Array("Uint16Array", []uint16{1, 65535}), "Uint16Array", []uint16{1, 65535}},
		{etw.Uint32Field("Uint32", math.MaxUint32), "Uint32", uint32(math.MaxUint32)},
		{etw.Uint32Array("Uint32Array", []uint32{2, math.MaxUint32}), "Uint32Array", []uint32{2, math.MaxUint32}},
		{etw.Uint64Field("Uint64", math.MaxUint64), "Uint64", uint64(math.MaxUint64)},
		{etw.Uint64Array("Uint64Array", []uint64{3, math.MaxUint64}), "Uint64Array", []uint64{3, math.MaxUint64}},
		{etw.UintptrField("Uintptr", 0xDEADBEEF), "Uintptr", word[uint32, uint64, uint](0xDEADBEEF)},
		{etw.UintptrArray("UintptrArray", []uintptr{1, 0xFFFF}), "UintptrArray", words[uint32, uint64, uint](1, 0xFFFF)},
		{etw.Float32Field("Float32", -1.5), "Float32", float32(-1.5)},
		{etw.Float32Array("Float32Array", []float32{0.25, math.MaxFloat32}), "Float32Array", []float32{0.25, math.MaxFloat32}},
		{etw.Float64Field("Float64", math.Pi), "Float64", math.Pi},
		{etw.Float64Array("Float64Array", []float64{math.SmallestNonzeroFloat64, -0.5}), "Float64Array", []float64{math.SmallestNonzeroFloat64, -0.5}},
		{etw.Time("Time", When), "Time", When},
		{etw.BinaryField("Binary", []byte{0, 1, 2, 0xFF}), "Binary", []byte{0, 1, 2, 0xFF}},
		{etw.GUIDField("GUID", id), "GUID", id},
		{etw.Struct("Struct", etw.StringField("Inner", "x"), etw.Struct("Nested", etw.Uint8Field("Deep", 9))), "Struct",
			[]tracelogging.Field{
				{Name: "Inner", In: tracelogging.InAnsiString, Out: tracelogging.OutUTF8, Value: "x"},
				{Name: "Nested", In: tracelogging.InStruct, Value: []tracelogging.Field{{Name: "Deep", In: tracelogging.InUInt8, Value: uint8(9)}}},
			}},
		{etw.Uint8Array("Empty", nil), "Empty", []uint8{}},
		{etw.SmartField("SmartInt", 42), "SmartInt", word[int32, int64](42)},
		{etw.SmartField("SmartErr", fmt.Errorf("boom")), "SmartErr", "boom"},
		{etw.SmartField("SmartNamed", time.Duration(5)), "SmartNamed", int64(5)},
		{etw.SmartField("SmartStruct", point{1, -2, "p"}), "SmartStruct", []tracelogging.Field{
			{Name: "SmartStruct", In: tracelogging.InInt32, Value: int32(1)},
			{Name: "SmartStruct", In: tracelogging.InInt32, Value: int32(-2)},
			{Name: "SmartStruct", In: tracelogging.InAnsiString, Out: tracelogging.OutUTF8, Value: "p"},
		}},
		{etw.SmartField("SmartOther", map[int]int{}), "SmartOther", "(Unsupported: map[int]int) map[]"},
	}
}

// SameValue compares a decoded value with the value written: a decoded array is a []any
// of its elements; struct members are compared by name and value only.
func SameValue(got, want any) bool {
	if w, ok := want.([]tracelogging.Field); ok {
		g, ok := got.([]tracelogging.Field)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if g[i].Name != w[i].Name || g[i].In != w[i].In || !SameValue(g[i].Value, w[i].Value) {
				return false
			}
		}
		return true
	}
	wv := reflect.ValueOf(want)
	if wv.Kind() == reflect.Slice && wv.Type().Elem().Kind() != reflect.Uint8 || wv.Type() == reflect.TypeOf([]uint8{}) && !isBinary(got) {
		g, ok := got.([]any)
		if !ok || len(g) != wv.Len() {
			return false
		}
		for i := range g {
			if !reflect.DeepEqual(g[i], wv.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

// word and words are what an int, uint or uintptr field, or an array of them, decodes
// to: go-winio writes them at the platform's word size, as N32 (Int32 or UInt32) on
// 32-bit systems and N64 (Int64 or UInt64) on 64-bit ones.
func word[N32 int32 | uint32, N64 int64 | uint64, V int | uint](v V) any {
	if strconv.IntSize == 32 {
		return N32(v)
	}
	return N64(v)
}

func words[N32 int32 | uint32, N64 int64 | uint64, V int | uint](v ...V) any {
	if strconv.IntSize == 32 {
		return convert[N32](v)
	}
	return convert[N64](v)
}

func convert[N int32 | uint32 | int64 | uint64, V int | uint](v []V) []N {
	out := make([]N, len(v))
	for i, x := range v {
		out[i] = N(x)
	}
	return out
}

func isBinary(v any) bool { _, ok := v.([]byte); return ok }

// CheckFields compares an event's decoded fields with what everyField wrote.
func CheckFields(t *testing.T, where string, got []tracelogging.Field, cases []Case) {
	t.Helper()
	if len(got) != len(cases) {
		t.Fatalf("%s: %d fields decoded, %d written", where, len(got), len(cases))
	}
	for i, c := range cases {
		if got[i].Name != c.Name || !SameValue(got[i].Value, c.Want) {
			t.Errorf("%s: field %d: got %s=%#v (%s), want %s=%#v", where, i, got[i].Name, got[i].Value, got[i].In, c.Name, c.Want)
		}
	}
}

// Opts returns the cases' field options in order.
func Opts(cases []Case) []etw.FieldOpt {
	var opts []etw.FieldOpt
	for _, c := range cases {
		opts = append(opts, c.Opt)
	}
	return opts
}

// WriteFile records one event named "Everything" with every case's field, at level Info
// with an activity id, into a new sequential ETL file at path on kernel k (through k's
// file system), through a provider named "Etwemu.Test.File".
func WriteFile(t testing.TB, k *emu.Kernel, path string, cases []Case) {
	t.Helper()
	h, err := k.StartTrace("TraceLoggingFile", &emu.Properties{LogFileName: path, LogFileMode: emu.FileModeSequential, BufferSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	p, err := etw.NewProviderWithOptions("Etwemu.Test.File", etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	activity := guid.MustParse("0badcafe-0000-4000-8000-000000000001")
	if err := p.WriteEvent("Everything", etw.WithEventOpts(etw.WithLevel(etw.LevelInfo), etw.WithActivityID(activity)), Opts(cases)); err != nil {
		t.Fatal(err)
	}
	if err := k.StopTrace(h, "", nil); err != nil {
		t.Fatal(err)
	}
}
