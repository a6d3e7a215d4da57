package lockapi

// QueueLen returns the number of Obtain calls queued for key in a FIFO
// Client (tests only).
func QueueLen(c *Client, key string) int {
	s := c.queues.stripe(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.heads[key]
	if h == nil {
		return 0
	}
	n := 1
	for w := h.next; w != h; w = w.next {
		n++
	}
	return n
}

// BucketOf exposes bucketOf.
var BucketOf = bucketOf
