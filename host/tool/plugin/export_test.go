package plugin

// WithBeforeExec returns opts with f called at every start of a pinned executable after
// its check and before it is executed, for tests that race the pin there.
func WithBeforeExec(opts Options, f func()) Options {
	opts.beforeExec = f
	return opts
}
