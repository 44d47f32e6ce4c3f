package store

import "errors"

// TopicApprovals is the topic announced on when an approval is decided or
// lapses, with an empty payload: a waiter reads its own approval again.
// Any role on the database may LISTEN to any channel, so an id there
// would tell another deployment's owner which approvals were answered
// when (TestListenAcrossReplicas).
const TopicApprovals = "approvals"

// notify announces payload on topic to every process on a shared
// database, when the transaction commits (PostgreSQL's NOTIFY); on SQLite
// it does nothing: a waiter there reads the database at its next poll.
func (tx *Tx) notify(topic, payload string) error {
	if tx.s.eng == nil || tx.s.eng.Listen == nil {
		return nil
	}
	_, err := tx.exec(tx.s.named("notify", ""), topic, payload)
	return err
}

// Listen calls fn with the payload of every announcement on topic made by
// any process on a shared database, until the store closes; it returns
// false, and listens to nothing, on SQLite. An announcement is only a
// hint to read again: one lost with a dropped connection is made up for
// by the reader's own polling.
func (s *Store) Listen(topic string, fn func(payload string)) (bool, error) {
	if s.eng == nil || s.eng.Listen == nil {
		return false, nil
	}
	stop, err := s.eng.Listen(s.reader, topic, fn)
	if err != nil {
		return false, err
	}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.closed {
		stop()
		return false, errors.New("listen: the store is closed")
	}
	s.listeners = append(s.listeners, stop)
	return true, nil
}
