package main

import "golang.org/x/sys/unix"

// pseudoFile reports whether path is on a file system of the kernel's own (procfs,
// sysfs, cgroup, debugfs, tracefs, securityfs, efivarfs): its files say size 0
// and are the kernel's settings, not empty files.
func pseudoFile(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return false
	}
	switch uint32(st.Type) { // the magic numbers are 32-bit; Type is int32 on some systems
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC,
		unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC, unix.SECURITYFS_MAGIC, unix.EFIVARFS_MAGIC:
		return true
	}
	return false
}
