//go:build !unix

package usertest

import "syscall"

// asUser is never reached where there is no root (Geteuid is -1).
func asUser(uid, gid int) *syscall.SysProcAttr { return nil }
