package testenv

// inspectRequest matches a client request against the armed DropReply rule
// and, on a match, remembers its xid on c.
func (p *Proxy) inspectRequest(c *proxyConn, frame []byte) {
	p.mu.Lock()
	r := p.rule
	p.mu.Unlock()
	if r == nil {
		return
	}
	xid, op, path, ok := parseRequest(frame)
	if !ok || !r.match(op, path) {
		return
	}
	p.mu.Lock()
	claimed := p.rule == r
	if claimed {
		p.rule = nil
	}
	p.mu.Unlock()
	if claimed {
		c.mu.Lock()
		c.drops[xid] = r
		c.mu.Unlock()
	}
}

type dropRule struct {
	match func(opcode int32, path string) bool
	done  chan struct{}
}

// takeDrop returns the rule whose reply frame this is, if any.
func (c *proxyConn) takeDrop(frame []byte) *dropRule {
	xid, ok := parseReplyXid(frame)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.drops[xid]
	delete(c.drops, xid)
	return r
}
