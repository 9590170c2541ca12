package regentry

import "github.com/etwemu/etwemu/winerr"

// ReplySlots is the number of ReplySlot entries of a user registration.
const ReplySlots = 4

// Notification models ETW_QUEUE_ENTRY (ETW_REG_ENTRY * before 6.2): a notification sent
// to a user registration that asks for a reply, held in one of its four ReplySlot
// entries until the registration answers.
type Notification struct {
	Data    []byte
	ReplyTo *Entry // the reply registration (DbgReplyRegistration) that collects answers
}

// ReplyQueue models ETW_REPLY_QUEUE: the replies a reply registration has collected.
type ReplyQueue struct {
	replies [][]byte // protected by the owning Entry's replyMu
}

// HoldNotification puts n into a free ReplySlot of a user registration. With all four
// slots waiting for replies it fails with ERROR_NO_SYSTEM_RESOURCES; a registration
// without DbgUserRegistration, or n without a reply registration, gets
// ERROR_INVALID_PARAMETER.
func (e *Entry) HoldNotification(n *Notification) (slot int, err error) {
	if e.Flags()&FlagUser == 0 {
		return -1, winerr.New(winerr.ErrInvalidParameter, "only user registrations (DbgUserRegistration) hold notifications that want replies")
	}
	if n == nil || n.ReplyTo == nil || n.ReplyTo.replyQueue == nil {
		return -1, winerr.New(winerr.ErrInvalidParameter, "a notification that wants a reply needs a reply registration (DbgReplyRegistration)")
	}
	e.replyMu.Lock()
	defer e.replyMu.Unlock()
	for i, s := range e.replySlots {
		if s == nil {
			e.replySlots[i] = n
			return i, nil
		}
	}
	return -1, winerr.New(winerr.ErrNoSystemResources, "all %d reply slots of registration %d are waiting for replies", ReplySlots, e.index)
}

// Reply answers the notification held in slot: the reply goes onto the reply
// registration's queue and the slot is freed. An empty or out-of-range slot gives
// ERROR_INVALID_PARAMETER.
func (e *Entry) Reply(slot int, data []byte) error {
	e.replyMu.Lock()
	if slot < 0 || slot >= ReplySlots || e.replySlots[slot] == nil {
		e.replyMu.Unlock()
		return winerr.New(winerr.ErrInvalidParameter, "reply slot %d holds no notification", slot)
	}
	n := e.replySlots[slot]
	e.replySlots[slot] = nil
	e.replyMu.Unlock()

	r := n.ReplyTo
	r.replyMu.Lock()
	r.replyQueue.replies = append(r.replyQueue.replies, append([]byte(nil), data...))
	r.replyMu.Unlock()
	return nil
}

// PendingReplies returns how many of the four reply slots hold a notification.
func (e *Entry) PendingReplies() int {
	e.replyMu.Lock()
	defer e.replyMu.Unlock()
	n := 0
	for _, s := range e.replySlots {
		if s != nil {
			n++
		}
	}
	return n
}

// ReceiveReplies takes every reply collected on a reply registration's queue, oldest
// first. A registration without a reply queue gets ERROR_INVALID_PARAMETER.
func (e *Entry) ReceiveReplies() ([][]byte, error) {
	if e.replyQueue == nil {
		return nil, winerr.New(winerr.ErrInvalidParameter, "registration %d is not a reply registration", e.index)
	}
	e.replyMu.Lock()
	defer e.replyMu.Unlock()
	out := e.replyQueue.replies
	e.replyQueue.replies = nil
	return out, nil
}
