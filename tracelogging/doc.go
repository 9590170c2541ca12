// Package tracelogging is the TraceLogging (manifest-free) encoding of ETW: the provider
// event metadata blob (the schema) and the field values of an event's
// payload, as TraceLoggingProvider.h and go-winio's etw package write them.
//
// An event written through a TraceLogging provider carries its provider's metadata
// (the provider traits, which regentry.BuildTraits and regentry.ParseTraits handle) in an
// EVENT_HEADER_EXT_TYPE_PROV_TRAITS extended item, its schema (name, tags, and each
// field's name, in-type, out-type and tags) in an EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL
// item, and only the field values in its user data. Builder writes the schema;
// ParseSchema and Schema.Decode read it back and decode the payload into named, typed
// values.
//
// Event metadata:
//
//	u16  Size
//	u8   Tags[]          7 bits a byte, high bit "more", most significant group first
//	char Name[]          NUL-terminated
//	repeat until Size:   fields
//	  char Name[]
//	  u8   InMeta        low 5 bits InType; 0x20 Ccount, 0x40 Vcount, 0x60 Custom; 0x80 chain
//	  u8   OutMeta       if chained: low 7 bits OutType; 0x80 chain (field tags follow)
//	  u8   Tags[]        if OutMeta chains
//	  u16  Ccount        if Ccount
//	  u16  CbSchema, u8 Schema[CbSchema]   if Custom
//
// In the payload, a Vcount array starts with a u16 element count, a Ccount array has the
// count of its metadata; a struct (InType 24) has as its OutType the number of fields
// that follow it in the metadata and belong to it.
package tracelogging
