package layout

// umSeedRow is one member row of seed 000, as layout/internal/seedgen copies it.
type umSeedRow struct{ name, def, x86, x64, versions string }
