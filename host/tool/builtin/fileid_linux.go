package builtin

import (
	"os"
	"syscall"
)

// fileID is a folder's device, inode and change time: a folder replaced by another (or by a
// link's target) is not taken for the one a policy was made from.
func fileID(st os.FileInfo) any {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return [4]int64{int64(s.Dev), int64(s.Ino), s.Ctim.Sec, s.Ctim.Nsec}
}
