package bound

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A request that runs out of its own timeout and one its caller's
// shorter deadline ends are told apart; one still running is neither.
func TestRequestTellsItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		own, cancel := Request(context.Background(), time.Second)
		defer cancel()
		caller, cancelCaller := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancelCaller()
		short, cancelShort := Request(caller, time.Second)
		defer cancelShort()
		if RequestTimedOut(own) || CallersDeadline(own) {
			t.Error("a running request reads as ended")
		}
		<-short.Done()
		if RequestTimedOut(short) || !CallersDeadline(short) {
			t.Errorf("ended by its caller's deadline: timed out %v, caller's %v", RequestTimedOut(short), CallersDeadline(short))
		}
		<-own.Done()
		if !RequestTimedOut(own) || CallersDeadline(own) || !errorsIsDeadline(own) {
			t.Errorf("ended by its own timeout: timed out %v, caller's %v", RequestTimedOut(own), CallersDeadline(own))
		}
	})
}

func errorsIsDeadline(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded)
}
