package target

import "sync"

// Topic keeps what a StreamConsumer is told, the via's brokers and topic,
// for its Setup: a target embeds it to be a StreamConsumer. It is safe
// for concurrent use.
type Topic struct {
	mu      sync.Mutex
	brokers string
	topic   string
}

// ConsumeTopic keeps brokers and topic.
func (t *Topic) ConsumeTopic(brokers, topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.brokers, t.topic = brokers, topic
}

// Source returns the brokers and the topic kept; topic is "" until
// ConsumeTopic is called (a run without --via).
func (t *Topic) Source() (brokers, topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.brokers, t.topic
}
