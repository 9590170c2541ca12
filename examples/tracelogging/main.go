// Command tracelogging writes an ETL file of TraceLogging events through etwemu's
// go-winio-shaped provider (package etw), then reads it back through the event consumer
// (package consumer) and prints each event's name and fields. It is also the file the
// outside-reader check (tools/outside/tracelogging.py) gives airbus-cert's etl-parser.
//
// The file goes to the operating system's temporary folder (etwemu-tracelogging.etl
// there, $TMPDIR or /tmp on Linux) unless -o names another, and the first line printed
// says where:
//
//	go run ./examples/tracelogging
//	go run ./examples/tracelogging -o tl.etl
//	go run ./cmd/etwemu dump tl.etl
//
// One event carries every field kind at once, one ("Basic") the kinds every decoder
// reads; then each field kind has an event of its own ("Field.<name>"), so that a reader
// that cannot decode one kind still reads the others.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/tracelogging"
)

type point struct {
	X, Y int32
}

// fields are one field of each kind go-winio's etw package writes, and etwemu's two
// additions (BinaryField, GUIDField).
var fields = []struct {
	name string
	opt  etw.FieldOpt
}{
	{"Bool", etw.BoolField("Bool", true)},
	{"BoolArray", etw.BoolArray("BoolArray", []bool{true, false})},
	{"String", etw.StringField("String", "hello")},
	{"JSON", etw.JSONStringField("JSON", `{"a":1}`)},
	{"StringArray", etw.StringArray("StringArray", []string{"a", "bc"})},
	{"Int", etw.IntField("Int", -42)},
	{"IntArray", etw.IntArray("IntArray", []int{-1, 2})},
	{"Int8", etw.Int8Field("Int8", -8)},
	{"Int8Array", etw.Int8Array("Int8Array", []int8{-1, 127})},
	{"Int16", etw.Int16Field("Int16", -16)},
	{"Int16Array", etw.Int16Array("Int16Array", []int16{-2, 32767})},
	{"Int32", etw.Int32Field("Int32", -32)},
	{"Int32Array", etw.Int32Array("Int32Array", []int32{-3, math.MaxInt32})},
	{"Int64", etw.Int64Field("Int64", math.MinInt64)},
	{"Int64Array", etw.Int64Array("Int64Array", []int64{-4, math.MaxInt64})},
	{"Uint", etw.UintField("Uint", 42)},
	{"UintArray", etw.UintArray("UintArray", []uint{0, 7})},
	{"Uint8", etw.Uint8Field("Uint8", 255)},
	{"Uint8Array", etw.Uint8Array("Uint8Array", []uint8{0, 255})},
	{"Uint16", etw.Uint16Field("Uint16", 65535)},
	{"Uint16Array", etw.Uint16Array("Uint16Array", []uint16{1, 65535})},
	{"Uint32", etw.Uint32Field("Uint32", math.MaxUint32)},
	{"Uint32Array", etw.Uint32Array("Uint32Array", []uint32{2, math.MaxUint32})},
	{"Uint64", etw.Uint64Field("Uint64", math.MaxUint64)},
	{"Uint64Array", etw.Uint64Array("Uint64Array", []uint64{3, math.MaxUint64})},
	{"Float32", etw.Float32Field("Float32", -1.5)},
	{"Float32Array", etw.Float32Array("Float32Array", []float32{0.25, 2})},
	{"Float64", etw.Float64Field("Float64", math.Pi)},
	{"Float64Array", etw.Float64Array("Float64Array", []float64{-0.5, 1e300})},
	{"Binary", etw.BinaryField("Binary", []byte{0, 1, 0xFF})},
	{"GUID", etw.GUIDField("GUID", guid.MustParse("01234567-89ab-cdef-0123-456789abcdef"))},
	// The kinds below are read by fewer decoders (etl-parser has none of them); the
	// "Basic" event leaves them out, as it leaves out non-ASCII text.
	{"Uintptr", etw.UintptrField("Uintptr", 0xDEADBEEF)},
	{"UintptrArray", etw.UintptrArray("UintptrArray", []uintptr{1, 0xFFFF})},
	{"Time", etw.Time("Time", time.Date(2024, 2, 29, 13, 14, 15, 0, time.UTC))},
	{"StringUTF8", etw.StringField("StringUTF8", "héllo")},
	{"Struct", etw.Struct("Struct", etw.StringField("Inner", "x"), etw.Uint8Field("Deep", 9))},
	{"SmartStruct", etw.SmartField("SmartStruct", point{1, -2})},
}

// basic is how many of fields, from the first, every decoder reads.
var basic = func() int {
	for i, f := range fields {
		if f.name == "Uintptr" {
			return i
		}
	}
	return len(fields)
}()

// defaultPath is where the file goes without -o: the temporary folder, not the current
// one, which is often a checkout.
func defaultPath() string { return filepath.Join(os.TempDir(), "etwemu-tracelogging.etl") }

func main() {
	out := flag.String("o", defaultPath(), "the ETL file to write")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "Usage: go run ./examples/tracelogging [-o FILE]\n\nWrites an ETL file of TraceLogging events with every field kind, says where, and\nreads it back.\n\nFlags:")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "tracelogging: unexpected argument %q (name the file with -o FILE)\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(*out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tracelogging:", err)
		os.Exit(1)
	}
}

// run writes the file at path, says where it is, and prints each event read back from it.
func run(path string, w io.Writer) error {
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		return err
	}
	defer k.Close()
	h, err := k.StartTrace("TraceLoggingExample", &emu.Properties{LogFileName: path, LogFileMode: emu.FileModeSequential, BufferSize: 64})
	if err != nil {
		return err
	}
	p, err := etw.NewProviderWithOptions("Etwemu.Example.TraceLogging", etw.WithKernel(k))
	if err != nil {
		return err
	}
	defer p.Close()
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 0, 0, 0, nil); err != nil {
		return err
	}
	all := make([]etw.FieldOpt, len(fields))
	for i, f := range fields {
		all[i] = f.opt
	}
	info := etw.WithEventOpts(etw.WithLevel(etw.LevelInfo))
	if err := p.WriteEvent("Everything", info, all); err != nil {
		return err
	}
	if err := p.WriteEvent("Basic", info, all[:basic]); err != nil {
		return err
	}
	for _, f := range fields {
		if err := p.WriteEvent("Field."+f.name, info, etw.WithFields(f.opt)); err != nil {
			return err
		}
	}
	if err := k.StopTrace(h, "", nil); err != nil {
		return err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fmt.Fprintf(w, "wrote %s; its events, read back:\n", path)
	c := consumer.NewConsumerOn(context.Background(), k).FromFiles(path)
	c.EventCallback = func(e *consumer.Event) error {
		fmt.Fprintf(w, "%s %s: %s\n", e.System.Provider.Name, e.Name, tracelogging.Text(e.Fields))
		return nil
	}
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}
