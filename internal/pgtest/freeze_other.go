//go:build !unix

package pgtest

// Freeze skips the test: stopping a server's processes needs Unix signals.
func (c *Cluster) Freeze() { c.t.Skip("freezing the server needs Unix signals") }

// Thaw does nothing here.
func (c *Cluster) Thaw() {}
