package plugin

// WithBeforeExec returns opts with f called at every start of a pinned executable after
// its check and before it is executed, for tests that race the pin there.
func WithBeforeExec(opts Options, f func()) Options {
	opts.beforeExec = f
	return opts
}

// CallsPath says how the calls of the running process travel: "socket" (its calls socket),
// "stream" (the gRPC Calls stream), "alone" (a Call stream each), or "" before the first call.
func (c *Client) CallsPath() string {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.alone:
		return "alone"
	case p.calls == nil:
		return ""
	case p.streamOnly:
		return "stream"
	}
	return "socket"
}
