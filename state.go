package recipes

import "fmt"

// State is where a Session stands with ZooKeeper.
type State int

// The states of a Session, in the order Curator's ConnectionState names them.
const (
	StateConnected   State = iota + 1 // session established, connection up
	StateSuspended                    // connection down; the session may live on
	StateReconnected                  // back on the same session after a suspension
	StateExpired                      // the server expired the session (final)
	StateLost                         // disconnected for the session timeout (final)
	StateClosed                       // Close was called (final)
)

func (s State) String() string {
	switch s {
	case StateConnected:
		return "connected"
	case StateSuspended:
		return "suspended"
	case StateReconnected:
		return "reconnected"
	case StateExpired:
		return "expired"
	case StateLost:
		return "lost"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}
