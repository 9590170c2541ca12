package layout

// umSeedRow is one member row of Geoff Chappell's "ETW_UM_LOGGER_CONTEXT", as
// layout/internal/seedgen copies it.
type umSeedRow struct{ name, def, x86, x64, versions string }
