//go:build !linux

package sandbox

import "fmt"

// reportCredentials has nothing to report outside Linux, which alone has the capability
// sets and no_new_privs the tests read (sandbox_linux_test.go); the tests that ask for it
// skip there (needLandlock).
func reportCredentials() int {
	fmt.Println("no capability sets outside Linux")
	return 1
}
