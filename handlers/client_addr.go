package handlers

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ParseTrustedProxies reads a comma-separated list of IP addresses and CIDR
// ranges ("10.0.0.1, 192.168.0.0/16, ::1"); "" is none.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not an IP address or CIDR range", f)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR range", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// trusted says whether a is one of the trusted proxies.
func (h *Handlers) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range h.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the address a request came from: its peer, or, when the
// peer is a trusted proxy, the address the proxies recorded in
// X-Forwarded-For. That header is read from the right (each proxy appends
// the address it heard from), skipping trusted proxies: the first other
// address is the client's. Addresses to its left were written by the client
// itself and are not believed.
func (h *Handlers) clientAddr(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if !h.trusted(peer) {
		return peer
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a hop that is no address: believe nothing further left
		}
		if a = a.Unmap(); !h.trusted(a) {
			return a
		}
		peer = a
	}
	return peer
}

// addrKey is what the throttle counts an address as: an IPv4 address, or an
// IPv6 address's /64 (one host is commonly given a whole /64, so counting
// single IPv6 addresses would let it try its luck 2^64 times).
func addrKey(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
