package target

import "testing"

func TestTopic(t *testing.T) {
	var tp Topic
	var _ StreamConsumer = &tp
	if b, tc := tp.Source(); b != "" || tc != "" {
		t.Errorf("before ConsumeTopic: %q, %q; want nothing", b, tc)
	}
	tp.ConsumeTopic("127.0.0.1:1,127.0.0.1:2", "events")
	if b, tc := tp.Source(); b != "127.0.0.1:1,127.0.0.1:2" || tc != "events" {
		t.Errorf("source %q, %q; want the brokers and topic given", b, tc)
	}
}
