package pool

import (
	"os"
	"syscall"
)

// fileID is what the file system says of a file beyond its size, time and mode: its device
// and inode (a file replaced by another, even with the same times) and its change time
// (which no program can set back).
type fileID struct {
	dev, ino  uint64
	ctimeSec  int64
	ctimeNsec int64
}

func inode(st os.FileInfo) fileID {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(s.Dev), ino: uint64(s.Ino), ctimeSec: int64(s.Ctim.Sec), ctimeNsec: int64(s.Ctim.Nsec)}
}
