package lockapi

import "time"

// lease is a Lock's knowledge of its validity at the backend: a time
// before which the backend certainly still holds the lock for it.
//
// The backend's lease is set by each granting call (Acquire, Refresh) when
// the backend applies it, which is after the call was sent and before its
// reply arrived; it ends ttl after that. Counting from when the call was
// sent therefore never ends later than the backend's lease. Calls may
// overlap (a manual Refresh during a watchdog refresh), and the backend may
// apply overlapping calls in either order, so any of them may be the one
// that set the lease last; and a call that failed may still have been
// applied (a lost reply). So:
//
//   - when a call is sent, end drops to the call's own end if that is
//     earlier (it may be applied at once);
//   - when the last of a group of overlapping calls ends and at least one
//     of them succeeded, end becomes the earliest end of the group, whatever
//     end was before (a shorter lease replaces a longer one);
//   - when no call of the group succeeded, end stays as it is: the minimum
//     of the previous end and the group's ends.
type lease struct {
	end      time.Time // the lock is valid before end
	inflight int       // granting calls sent and not yet answered
	groupEnd time.Time // the earliest end among the calls of the current group
	granted  bool      // a call of the current group succeeded
}

// send records a granting call for ttl sent at start. It reports whether
// end moved.
func (le *lease) send(start time.Time, ttl time.Duration) bool {
	callEnd := start.Add(ttl)
	if le.inflight == 0 || callEnd.Before(le.groupEnd) {
		le.groupEnd = callEnd
	}
	if le.inflight == 0 {
		le.granted = false
	}
	le.inflight++
	if callEnd.Before(le.end) {
		le.end = callEnd
		return true
	}
	return false
}

// done records the answer to a call recorded with send; granted reports
// that the backend applied it. It reports whether end moved.
func (le *lease) done(granted bool) bool {
	le.inflight--
	le.granted = le.granted || granted
	if le.inflight > 0 || !le.granted || le.end.Equal(le.groupEnd) {
		return false
	}
	le.end = le.groupEnd
	return true
}
