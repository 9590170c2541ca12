package consumer

import "github.com/etwemu/etwemu/tracelogging"

// StructurePropertyName is the EventData key golang-etw puts an event's structs under,
// in order, each a map from member name to value.
const StructurePropertyName = "Structures"

// setEventData fills data with fields formatted as golang-etw's EventData holds them:
// each scalar a string, each array a []string, and each struct (top-level, or an element
// of an array of structs) a map[string]string appended to data["Structures"].
func setEventData(data map[string]any, fields []tracelogging.Field) {
	var structs []map[string]string
	for _, f := range fields {
		switch {
		case f.In == tracelogging.InStruct && f.Array:
			elems, _ := f.Value.([]any)
			for _, v := range elems {
				structs = append(structs, structMap(v))
			}
		case f.In == tracelogging.InStruct:
			structs = append(structs, structMap(f.Value))
		case f.Array:
			elems, _ := f.Value.([]any)
			out := make([]string, len(elems))
			for i, v := range elems {
				out[i] = tracelogging.FormatValue(f.In, f.Out, v)
			}
			data[f.Name] = out
		default:
			data[f.Name] = tracelogging.FormatValue(f.In, f.Out, f.Value)
		}
	}
	if structs != nil {
		data[StructurePropertyName] = structs
	}
}

// structMap formats a struct's members; a member that is itself a struct or an array is
// written in tracelogging's text form ({name=value ...}, [v1 v2 ...]).
func structMap(v any) map[string]string {
	members, _ := v.([]tracelogging.Field)
	m := make(map[string]string, len(members))
	for _, f := range members {
		if f.In == tracelogging.InStruct || f.Array {
			m[f.Name] = f.Text()
			continue
		}
		m[f.Name] = tracelogging.FormatValue(f.In, f.Out, f.Value)
	}
	return m
}
