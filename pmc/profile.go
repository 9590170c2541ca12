package pmc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etwemu/etwemu/internal/quote"
)

// ProfileSource is a KPROFILE_SOURCE value (WDM.H): what a counter counts.
type ProfileSource uint32

// The KPROFILE_SOURCE enumeration. ProfileMaximum is one past the last defined source.
const (
	ProfileTime ProfileSource = iota
	ProfileAlignmentFixup
	ProfileTotalIssues
	ProfilePipelineDry
	ProfileLoadInstructions
	ProfilePipelineFrozen
	ProfileBranchInstructions
	ProfileTotalNonissues
	ProfileDcacheMisses
	ProfileIcacheMisses
	ProfileCacheMisses
	ProfileBranchMispredictions
	ProfileStoreInstructions
	ProfileFpInstructions
	ProfileIntegerInstructions
	Profile2Issue
	Profile3Issue
	Profile4Issue
	ProfileSpecialInstructions
	ProfileTotalCycles
	ProfileIcacheIssues
	ProfileDcacheAccesses
	ProfileMemoryBarrierCycles
	ProfileLoadLinkedIssues
	ProfileMaximum
)

var profileNames = [ProfileMaximum]string{
	"Time", "AlignmentFixup", "TotalIssues", "PipelineDry", "LoadInstructions", "PipelineFrozen",
	"BranchInstructions", "TotalNonissues", "DcacheMisses", "IcacheMisses", "CacheMisses",
	"BranchMispredictions", "StoreInstructions", "FpInstructions", "IntegerInstructions",
	"2Issue", "3Issue", "4Issue", "SpecialInstructions", "TotalCycles", "IcacheIssues",
	"DcacheAccesses", "MemoryBarrierCycles", "LoadLinkedIssues",
}

// String returns the name without its "Profile" prefix, as xperf lists sources
// ("TotalCycles"), or the number for a value past ProfileMaximum.
func (s ProfileSource) String() string {
	if s < ProfileMaximum {
		return profileNames[s]
	}
	return strconv.FormatUint(uint64(s), 10)
}

// ParseProfileSource reads a source by name ("TotalCycles", with or without the
// "Profile" prefix, any case) or by number.
func ParseProfileSource(name string) (ProfileSource, error) {
	n := strings.TrimPrefix(strings.ToLower(name), "profile")
	for i, p := range profileNames {
		if strings.ToLower(p) == n {
			return ProfileSource(i), nil
		}
	}
	if v, err := strconv.ParseUint(name, 0, 32); err == nil {
		return ProfileSource(v), nil
	}
	var names []string
	for _, p := range profileNames {
		if p != "" {
			names = append(names, p)
		}
	}
	return 0, fmt.Errorf("pmc: %s is not a KPROFILE_SOURCE name or number (names: %s)", quote.Short(name), strings.Join(names, ", "))
}
