package sandbox

import "runtime"

// StartFromThread runs start on an OS thread of its own, after confine has restricted that
// thread: the process start starts inherits the thread's restrictions (ConfineThread,
// RestrictThread) from its first instruction, with no wrapper process to start before it. It
// returns what confine or start returned.
//
// When start succeeds the thread is kept, and runs nothing else, until ended is closed: on
// Linux the process's parent-death signal fires when the thread that started it ends, so
// ended must be closed only once the process has been waited for. The thread is never
// unlocked, so the Go runtime ends it with its goroutine rather than run anything else on it.
//
// The host starts every plugin and every MCP stdio server this way.
func StartFromThread(confine func() error, start func() error, ended <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() { // ends when ended is closed, or at once when the start failed
		runtime.LockOSThread()
		if err := confine(); err != nil {
			errc <- err
			return
		}
		err := start()
		errc <- err
		if err == nil {
			<-ended
		}
	}()
	return <-errc
}
