package lockcore

// An explicit-state model of the exclusive core's hand-off (NewExclusive:
// one node name, MaxLeases(1), grants), explored over every interleaving
// of its contenders' steps with the server's and with foreign clients'
// actions, for small queues. Issue 30, item 7: four review rounds each
// found a new way to two holders; this checks the protocol, not only the
// cases we thought of.
//
// Each model step is one request, atomic at the server, and stands for
// these steps of core.go / grant.go (keep them in sync; names follow the
// package doc):
//
//	mCreate       Acquire: Create().WithProtection().EphemeralSequential (doc step 1)
//	mList         waitHeld: GetChildren().ForPathStat, Sort, policy (doc steps 2-4):
//	              own node missing -> ErrNodeVanished, Acquire starts again
//	              (mIdle); lowest -> held, token = the read's pzxid, last =
//	              nothing listed after us (plain release); else pred = the node
//	              just ahead, heldOnDelete = pred is the only node ahead
//	mGetPred      waitGrant: GetData().Into(ch).ForPathW(pred): the stat names
//	              pred's owner; NoNode -> confirmOnDelete if heldOnDelete, else
//	              read again
//	mExistsGrant  waitGrant: CheckExists().Into(ch).ForPathW(<grants>/pred): a
//	              grant of pred's owner (checkGrantOwner) -> confirm with its
//	              czxid; a foreign one -> keep waiting; none -> armed
//	mWait         waitGrant's select on ch (one event per step, in server
//	              order): the grant's NodeCreated -> confirm (reads the grant);
//	              its NodeDeleted -> keep waiting; pred's NodeDeleted -> clears
//	              += pred if armed, confirmOnDelete if heldOnDelete, else read
//	              again
//	mConfirm      confirmGrant / confirmOnDelete: the Exists of the grant
//	              (owner == pred's owner, token = czxid; gone or foreign ->
//	              keep waiting) and the check of our own node (gone or not ours
//	              -> ErrNodeVanished, Acquire starts again), each a step of its
//	              own here, in either order. core.go checks our node with a
//	              data watch set beside pred's and the grant's: a delete of our
//	              node before the grant's event comes first in ch, so the node
//	              was there at the event, a point no later than this model's
//	              read of it (a delete after the point checked is a forced
//	              revocation in both, which the invariant excuses and the
//	              fencing token covers). core.go skips the grant's
//	              read where the lock's ACL gives world:anyone DELETE (see the
//	              package doc, premise 2); the model checks the owner always,
//	              since its forger may not delete
//	mHeld         the hold: FencingToken's lazy read (grantOnDelete: the pzxid
//	              while our node is listed; under the reverted bug-4 fix, the
//	              grant's czxid while it exists, first), then Delete -> release:
//	              one multi [create <grants>/me owned by our session, delete me,
//	              clears] (plain delete if last and no clears); a multi that
//	              fails (our node gone, or someone made <grants>/me) falls back
//	              to the plain delete; a multi whose reply is lost is applied and
//	              followed by the plain delete (mRetryRelease)
//	give-up       Acquire's error path after ctx ends: giveUp's multi [delete
//	              me, create+delete <grants>/x for x in clears], plain delete if
//	              it fails
//	cleanup       a later release's delete of the client's old grant
//	              (clientGrants.old)
//
// With grantFirst set, the waiter runs ca3e38e's waitGrant instead:
// ExistsW(grant) first (a grant in the reply is held at once, token =
// czxid), then GetW(pred) (NoNode: a NodeCreated already in ch is a grant,
// anything else reads again), one slot in ch, and the first event decides.
//
// The fixes of issue 30 items 3 and 4 are switches: checkOwnNode (a
// waiter granted without a read confirms that its own node is still there,
// owned by its session) and checkGrantOwner (a grant counts only if pred's
// session made it, and the hold's token is the czxid read with it). With
// checkGrantOwner off, a grant's NodeCreated grants at once (ca3e38e's
// grantOnDelete with the grant path, lazy token).
//
// The server: the lock's children (sequence -> owning session), the grants
// (name -> owner, czxid), a zxid counted by every write (a multi is one),
// and the lock's pzxid (zxid of the last child create or delete). Watches
// are one-shot and per session; a watch's event is in its waiter's channel
// before any later reply to that waiter, in server order (so firing puts it
// in ch); a waiter's earlier waits' channels are dead, and their watches
// are not modelled. The environment, each a small budget per run: the
// expiry of a contender's session (the server deletes its ephemerals, lock
// node and grants; its loss signal closed first, so it stops at once and
// holds nothing; it does not come back), an operator's delete of any lock
// node, and a read-only client's create of <grants>/<any name the lock
// has had>. Connection loss, other than the lost release reply, and
// re-created sessions are not modelled.
//
// Checked in every state: (1) at most one contender holds, among those
// whose session is live and whose node the operator did not delete while
// it held (that is a forced revocation: the fencing token covers it);
// (2) tokens are unique and rise strictly in the order the holds began (a
// token read lazily is checked when read).

import (
	"fmt"
	"hash/maphash"
	"os"
	"strings"
	"testing"
	"time"
)

const (
	mMaxC = 4 // contenders
	mMaxN = 8 // lock node sequences 1..7; 0 is none
)

// Owners: contender i's session is i+1; the read-only client's is mReader.
const mReader = 7

// Contender program counters.
const (
	mIdle         = iota // about to create its node
	mList                // GetChildren
	mGetPred             // GetW(pred)
	mExistsGrant         // ExistsW(<grants>/pred)
	mGetPredOld          // ca3e38e: GetW(pred) after ExistsW(grant)
	mWait                // select on ch
	mConfirm             // confirm's reads
	mHeld                // holds (token read, then release)
	mRetryRelease        // release multi applied, reply lost: plain delete follows
	mDone
	mExpired
)

var mPCNames = [...]string{"idle", "list", "getPred", "existsGrant", "getPredOld", "wait", "confirm", "held", "retryRelease", "done", "expired"}

// Events in a waiter's channel.
const (
	mEvNone = iota
	mEvGrantCreated
	mEvGrantDeleted
	mEvPredDeleted
)

var mEvNames = [...]string{"-", "grant NodeCreated", "grant NodeDeleted", "pred NodeDeleted"}

// Lazy token kinds.
const (
	mTokKnown = iota
	mTokPzxid // read the pzxid while our node is listed
	mTokGrant // ca3e38e: the grant's czxid while it exists, else the pzxid
)

type mContender struct {
	pc       uint8
	node     uint8 // our node's sequence, 0 if none
	pred     uint8
	hod      bool  // heldOnDelete
	last     bool  // held by a read listing nobody after us: plain release
	armed    bool  // (client) our exists watch on the absent grant has not fired
	gw       uint8 // (server) watch on <grants>/pred: 0 none, 1 exists (absent), 2 data (present)
	pw       bool  // (server) data watch on pred
	q        [2]uint8
	qn       uint8
	pOwner   uint8 // pred's owner, from GetW's stat
	clears   uint8 // bit x: <grants>/x to create and delete at the next write
	released uint8 // the node our release granted (for cleanup)
	cleaned  bool

	// confirm
	cFromEvent bool  // confirm of a grant's NodeCreated (else: exists reply or delete)
	cOnDelete  bool  // confirmOnDelete
	needGrant  bool  // the grant's read is still to come
	needOwn    bool  // our node's read is still to come
	grantBad   bool  // the grant read found it gone or foreign
	ownBad     bool  // our node's read found it gone or not ours
	cToken     uint8 // token known so far (grant czxid)
	// cRevoked: the operator deleted our node after our own read found it:
	// the hold confirm grants began at that read, and is revoked.
	cRevoked bool
	// cSerial: the serial of the hold confirm grants, taken at our own
	// read, where it began.
	cSerial uint8

	// hold
	revoked bool // the operator deleted our node while we held
	serial  uint8
	token   uint8
	lazy    uint8 // mTokPzxid / mTokGrant until read; mTokKnown after
}

// mTok is a hold's token, with the hold's serial (the order holds began).
type mTok struct{ serial, token uint8 }

type mGrant struct {
	owner uint8 // 0: absent
	czxid uint8
}

type mState struct {
	c       [mMaxC]mContender
	lock    [mMaxN]uint8 // owner of lock node seq, 0: absent
	grants  [mMaxN]mGrant
	nextSeq uint8
	zxid    uint8
	pzxid   uint8

	deletes, forges, expiries, giveUps uint8 // used budgets
	holds                              uint8 // holds begun (the last serial)
	hist                               [8]mTok
	nhist                              uint8
	bad                                uint8 // violation code, 0: none
}

// Violations.
const (
	mOK = iota
	mTwoHolders
	mTokenNotRising
)

type mConfig struct {
	n               int
	checkOwnNode    bool
	checkGrantOwner bool
	grantFirst      bool // ca3e38e's order (needs !checkGrantOwner)
	deletes         int  // operator deletes
	forges          int  // read-only client's grant creates
	expiries        int
	giveUps         int
	lostReply       bool // a release multi's reply may be lost
	cleanup         bool // a done contender may delete its old grant (a later release's cleanup)
}

// mAction is one step: who (contender index, or an environment action)
// and its argument / variant.
type mAction struct {
	kind uint8 // mActStep, mActGiveUp, mActLostReply, mActCleanup, mActDelete, mActForge, mActExpire
	who  uint8
	arg  uint8
}

const (
	mActStep = iota
	mActGiveUp
	mActLostReply
	mActCleanup
	mActDelete
	mActForge
	mActExpire
)

// Names for traces, precomputed: log arguments are evaluated while
// exploring too.
var (
	mNames      = [mMaxN]string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}
	mWhos       = [mMaxC]string{"A", "B", "C", "D"}
	mOwnerNames = [8]string{"none", "sessA", "sessB", "sessC", "sessD", "?", "?", "reader"}
)

func mName(seq uint8) string { return mNames[seq] }

func mWho(i uint8) string { return mWhos[i] }

func mOwnerName(o uint8) string { return mOwnerNames[o] }

// holding reports whether contender i believes it holds.
func (s *mState) holding(i int) bool { return s.c[i].pc == mHeld }

// actions lists the enabled steps of s.
func (m *mConfig) actions(s *mState, out []mAction) []mAction {
	out = out[:0]
	for i := 0; i < m.n; i++ {
		c := &s.c[i]
		w := uint8(i)
		switch c.pc {
		case mIdle, mList, mGetPred, mExistsGrant, mGetPredOld:
			out = append(out, mAction{mActStep, w, 0})
		case mConfirm:
			out = append(out, mAction{mActStep, w, 0})
			if c.needGrant && c.needOwn {
				out = append(out, mAction{mActStep, w, 1})
			}
		case mWait:
			if c.qn > 0 {
				out = append(out, mAction{mActStep, w, 0})
			}
		case mHeld:
			out = append(out, mAction{mActStep, w, 0})
			if m.lostReply && c.lazy == mTokKnown && !c.last {
				out = append(out, mAction{mActLostReply, w, 0})
			}
		case mRetryRelease:
			out = append(out, mAction{mActStep, w, 0})
		case mDone:
			if m.cleanup && !c.cleaned && c.released != 0 && s.grants[c.released].owner != 0 {
				out = append(out, mAction{mActCleanup, w, 0})
			}
		}
		if int(s.giveUps) < m.giveUps && c.node != 0 {
			switch c.pc {
			case mList, mGetPred, mExistsGrant, mGetPredOld, mWait, mConfirm:
				out = append(out, mAction{mActGiveUp, w, 0})
				if c.pc == mWait && c.armed && m.grantEventQueued(c) {
					// The grant's event fired but may not have reached ch yet.
					out = append(out, mAction{mActGiveUp, w, 1})
				}
			}
		}
		if int(s.expiries) < m.expiries && c.pc != mExpired && (c.pc != mDone || m.ownsGrant(s, i)) && c.pc != mIdle {
			out = append(out, mAction{mActExpire, w, 0})
		}
	}
	if int(s.deletes) < m.deletes {
		for x := uint8(1); x < s.nextSeq; x++ {
			if s.lock[x] != 0 {
				out = append(out, mAction{mActDelete, 0, x})
			}
		}
	}
	if int(s.forges) < m.forges {
		for x := uint8(1); x < s.nextSeq; x++ {
			if s.grants[x].owner == 0 {
				out = append(out, mAction{mActForge, 0, x})
			}
		}
	}
	return out
}

func (m *mConfig) grantEventQueued(c *mContender) bool {
	for k := uint8(0); k < c.qn; k++ {
		if c.q[k] == mEvGrantCreated || c.q[k] == mEvGrantDeleted {
			return true
		}
	}
	return false
}

func (m *mConfig) ownsGrant(s *mState, i int) bool {
	for x := range s.grants {
		if s.grants[x].owner == uint8(i+1) {
			return true
		}
	}
	return false
}

// mLog collects a trace's descriptions; nil while exploring.
type mLog struct{ b *strings.Builder }

func (l mLog) f(format string, args ...any) {
	if l.b != nil {
		fmt.Fprintf(l.b, format, args...)
	}
}

// push puts ev in contender c's channel (two slots, as each watch sends
// at most one event; ca3e38e's single slot kept only the first, which is
// all its code read).
func (c *mContender) push(ev uint8) {
	if c.qn < 2 {
		c.q[c.qn] = ev
		c.qn++
	}
}

func (c *mContender) pop() uint8 {
	ev := c.q[0]
	c.q[0], c.q[1] = c.q[1], mEvNone
	c.qn--
	return ev
}

// Server writes. Each fires the watches it triggers, in order.

func (s *mState) write() uint8 { s.zxid++; return s.zxid }

func (s *mState) fireGrantCreated(x uint8, l mLog) {
	for i := range s.c {
		c := &s.c[i]
		if c.gw == 1 && c.pred == x && c.pc != mExpired {
			c.gw = 0
			c.push(mEvGrantCreated)
			l.f(" [%s: grant NodeCreated]", mWho(uint8(i)))
		}
	}
}

func (s *mState) fireGrantDeleted(x uint8, l mLog) {
	for i := range s.c {
		c := &s.c[i]
		if c.gw == 2 && c.pred == x && c.pc != mExpired {
			c.gw = 0
			c.push(mEvGrantDeleted)
			l.f(" [%s: grant NodeDeleted]", mWho(uint8(i)))
		}
	}
}

func (s *mState) deleteLockNode(x uint8, zxid uint8, l mLog) {
	s.lock[x] = 0
	s.pzxid = zxid
	for i := range s.c {
		c := &s.c[i]
		if c.pw && c.pred == x && c.pc != mExpired {
			c.pw = false
			c.push(mEvPredDeleted)
			l.f(" [%s: pred NodeDeleted]", mWho(uint8(i)))
		}
	}
}

// assign records a token for contender i's hold.
func (s *mState) assign(i int, tok uint8, l mLog) {
	c := &s.c[i]
	c.token, c.lazy = tok, mTokKnown
	l.f(" token %d", tok)
	for _, h := range s.hist[:s.nhist] {
		if h.token == tok || (h.serial < c.serial) != (h.token < tok) {
			s.bad = mTokenNotRising
			l.f(" (VIOLATION: hold #%d's token %d, hold #%d's token %d)", c.serial, tok, h.serial, h.token)
			return
		}
	}
	s.hist[s.nhist] = mTok{c.serial, tok}
	s.nhist++
}

// hold makes contender i a holder: token known (lazy == mTokKnown) or to
// be read.
func (s *mState) hold(i int, tok uint8, lazy uint8, revoked bool, serial uint8, how string, l mLog) {
	c := &s.c[i]
	if serial == 0 {
		s.holds++
		serial = s.holds
	}
	c.pc, c.serial, c.revoked = mHeld, serial, revoked
	c.q, c.qn = [2]uint8{}, 0
	l.f(" => HOLDS (#%d, by %s)", c.serial, how)
	if revoked {
		l.f(" [its node went after its own read: revoked]")
	}
	if lazy == mTokKnown {
		s.assign(i, tok, l)
	} else {
		c.lazy = lazy
	}
	n := 0
	for j := range s.c {
		if s.holding(j) && !s.c[j].revoked {
			n++
		}
	}
	if n > 1 {
		s.bad = mTwoHolders
		l.f(" (VIOLATION: %d holders)", n)
	}
}

// vanish starts Acquire again after ErrNodeVanished: giveUp's delete of
// the gone node is a no-op, and its clears go with the attempt.
func (s *mState) vanish(i int, l mLog) {
	c := &s.c[i]
	l.f(" => our node %s is gone: ErrNodeVanished, Acquire starts again", mName(c.node))
	*c = mContender{pc: mIdle, released: c.released, cleaned: c.cleaned}
}

// startWait resets the waiter's watches and channel for a wait on pred.
func (c *mContender) startWait(pred uint8, hod bool) {
	c.pred, c.hod = pred, hod
	c.armed, c.gw, c.pw = false, 0, false
	c.q, c.qn = [2]uint8{}, 0
	c.pOwner = 0
}

// confirm starts confirm (fromEvent: of a grant's NodeCreated, whose grant
// is to be read; else the token is known) or confirmOnDelete (onDelete).
func (m *mConfig) confirm(s *mState, i int, fromEvent, onDelete bool, tok uint8, l mLog) {
	c := &s.c[i]
	c.cFromEvent, c.cOnDelete, c.cToken = fromEvent, onDelete, tok
	c.needGrant = fromEvent && m.checkGrantOwner
	c.needOwn = m.checkOwnNode
	c.grantBad, c.ownBad, c.cRevoked, c.cSerial = false, false, false, 0
	m.decide(s, i, l)
}

// decide ends confirm once its reads are in.
func (m *mConfig) decide(s *mState, i int, l mLog) {
	c := &s.c[i]
	if c.needGrant || c.needOwn {
		c.pc = mConfirm
		return
	}
	switch {
	case c.ownBad:
		s.vanish(i, l)
	case c.grantBad:
		l.f(" => not pred's grant: keep waiting")
		c.pc = mWait
	case c.cOnDelete:
		s.hold(i, 0, mTokPzxid, c.cRevoked, c.cSerial, "pred's delete", l)
	case c.cFromEvent && !m.checkGrantOwner:
		s.hold(i, 0, mTokGrant, c.cRevoked, c.cSerial, "the grant's NodeCreated", l)
	default:
		s.hold(i, c.cToken, mTokKnown, c.cRevoked, c.cSerial, "pred's grant", l)
	}
}

// apply runs action a on s.
func (m *mConfig) apply(s *mState, a mAction, l mLog) {
	i := int(a.who)
	switch a.kind {
	case mActDelete:
		s.deletes++
		x := a.arg
		l.f("operator deletes %s (of %s)", mName(x), mOwnerName(s.lock[x]))
		for j := range s.c {
			c := &s.c[j]
			if c.node == x && s.holding(j) {
				c.revoked = true
				l.f(" [revokes %s's hold]", mWho(uint8(j)))
			}
			if c.node == x && c.pc == mConfirm && m.checkOwnNode && !c.needOwn && !c.ownBad {
				// confirm's own read found our node: the hold it grants
				// began there.
				c.cRevoked = true
				l.f(" [after %s's own read: a revocation]", mWho(uint8(j)))
			}
		}
		s.deleteLockNode(x, s.write(), l)
		return
	case mActForge:
		s.forges++
		x := a.arg
		z := s.write()
		s.grants[x] = mGrant{owner: mReader, czxid: z}
		l.f("read-only client creates grant g(%s), czxid %d", mName(x), z)
		s.fireGrantCreated(x, l)
		return
	case mActExpire:
		s.expiries++
		c := &s.c[i]
		l.f("session of %s expires (its loss signal closes first: %s stops)", mWho(a.who), mWho(a.who))
		wasNode := c.node
		c.pc = mExpired
		z := s.write()
		if wasNode != 0 && s.lock[wasNode] == uint8(i+1) {
			l.f("; server deletes %s", mName(wasNode))
			s.deleteLockNode(wasNode, z, l)
		}
		for x := range s.grants {
			if s.grants[x].owner == uint8(i+1) {
				l.f("; server deletes g(%s)", mName(uint8(x)))
				s.grants[x] = mGrant{}
				s.fireGrantDeleted(uint8(x), l)
			}
		}
		return
	}
	c := &s.c[i]
	l.f("%s ", mWho(a.who))
	switch a.kind {
	case mActGiveUp:
		s.giveUps++
		if a.arg == 0 && c.pc == mWait && c.armed {
			c.clears |= 1 << c.pred
		}
		m.giveUp(s, i, l)
		return
	case mActCleanup:
		c.cleaned = true
		x := c.released
		l.f("cleanup: deletes old grant g(%s) (of %s)", mName(x), mOwnerName(s.grants[x].owner))
		s.write()
		s.grants[x] = mGrant{}
		s.fireGrantDeleted(x, l)
		return
	case mActLostReply:
		l.f("release multi, reply lost:")
		if m.releaseMulti(s, i, l) {
			c.pc = mRetryRelease
			return
		}
		l.f("; plain delete")
		if s.lock[c.node] == uint8(i+1) {
			s.deleteLockNode(c.node, s.write(), l)
		}
		c.pc = mDone
		return
	}
	switch c.pc {
	case mIdle:
		c.node = s.nextSeq
		s.nextSeq++
		s.lock[c.node] = uint8(i + 1)
		s.pzxid = s.write()
		c.pc = mList
		l.f("creates %s (zxid %d)", mName(c.node), s.zxid)
	case mList:
		var kids []uint8
		if l.b != nil {
			for x := uint8(1); x < s.nextSeq; x++ {
				if s.lock[x] != 0 {
					kids = append(kids, x)
				}
			}
		}
		l.f("lists %v pzxid %d:", kids, s.pzxid)
		if s.lock[c.node] == 0 {
			s.vanish(i, l)
			return
		}
		var pred, ahead uint8
		last := true
		for x := uint8(1); x < s.nextSeq; x++ {
			if s.lock[x] == 0 {
				continue
			}
			if x < c.node {
				pred = x
				ahead++
			} else if x > c.node {
				last = false
			}
		}
		if ahead == 0 {
			c.last = last
			s.hold(i, s.pzxid, mTokKnown, false, 0, "the read", l)
			return
		}
		c.startWait(pred, ahead == 1)
		l.f(" pred %s (only node ahead: %v)", mName(pred), ahead == 1)
		if m.grantFirst {
			c.pc = mExistsGrant
		} else {
			c.pc = mGetPred
		}
	case mGetPred:
		if s.lock[c.pred] == 0 {
			l.f("GetW(%s): NoNode", mName(c.pred))
			if c.hod {
				m.confirm(s, i, false, true, 0, l)
			} else {
				l.f(" => read again")
				c.pc = mList
			}
			return
		}
		c.pw, c.pOwner = true, s.lock[c.pred]
		l.f("GetW(%s): owner %s", mName(c.pred), mOwnerName(c.pOwner))
		c.pc = mExistsGrant
	case mExistsGrant:
		g := s.grants[c.pred]
		if g.owner == 0 {
			l.f("ExistsW(g(%s)): none, armed", mName(c.pred))
			c.gw, c.armed = 1, true
			if m.grantFirst {
				c.pc = mGetPredOld
			} else {
				c.pc = mWait
			}
			return
		}
		c.gw = 2
		l.f("ExistsW(g(%s)): owner %s czxid %d", mName(c.pred), mOwnerName(g.owner), g.czxid)
		switch {
		case m.grantFirst:
			if m.checkOwnNode {
				m.confirm(s, i, false, false, g.czxid, l)
			} else {
				s.hold(i, g.czxid, mTokKnown, false, 0, "the grant in the exists reply", l)
			}
		case !m.checkGrantOwner || g.owner == c.pOwner:
			m.confirm(s, i, false, false, g.czxid, l)
		default:
			l.f(" => foreign grant: keep waiting")
			c.pc = mWait
		}
	case mGetPredOld:
		if s.lock[c.pred] == 0 {
			l.f("GetW(%s): NoNode", mName(c.pred))
			if c.qn > 0 && c.q[0] == mEvGrantCreated {
				l.f("; grant NodeCreated in ch")
				c.pop()
				m.confirm(s, i, true, false, 0, l)
				return
			}
			if c.armed && c.qn == 0 {
				c.clears |= 1 << c.pred
			}
			l.f(" => read again")
			c.pc = mList
			return
		}
		c.pw = true
		l.f("GetW(%s): exists", mName(c.pred))
		c.pc = mWait
	case mWait:
		ev := c.pop()
		l.f("receives %s on g(%s)/%s", mEvNames[ev], mName(c.pred), mName(c.pred))
		if m.grantFirst {
			// ca3e38e: the first event decides, and the wait ends.
			switch ev {
			case mEvGrantCreated:
				m.confirm(s, i, true, false, 0, l)
			case mEvPredDeleted:
				if c.armed {
					c.clears |= 1 << c.pred
				}
				if c.hod {
					m.confirm(s, i, false, true, 0, l)
				} else {
					l.f(" => read again")
					c.pc = mList
				}
			default:
				l.f(" => read again")
				c.pc = mList
			}
			return
		}
		switch ev {
		case mEvGrantCreated:
			c.armed = false
			m.confirm(s, i, true, false, 0, l)
		case mEvGrantDeleted:
			c.armed = false
			l.f(" => keep waiting")
		case mEvPredDeleted:
			if c.armed {
				c.clears |= 1 << c.pred
			}
			if c.hod {
				m.confirm(s, i, false, true, 0, l)
			} else {
				l.f(" => read again")
				c.pc = mList
			}
		}
	case mConfirm:
		// Either read may reach the server first: the grant's goes first
		// when arg is 0 and both are due, else our node's.
		if c.needGrant && (a.arg == 0 || !c.needOwn) {
			g := s.grants[c.pred]
			c.needGrant = false
			if g.owner == 0 || g.owner != c.pOwner {
				c.grantBad = true
				l.f("confirm: Exists(g(%s)): owner %s, pred's %s: not pred's", mName(c.pred), mOwnerName(g.owner), mOwnerName(c.pOwner))
			} else {
				c.cToken = g.czxid
				l.f("confirm: Exists(g(%s)): pred's, czxid %d", mName(c.pred), g.czxid)
			}
		} else {
			c.needOwn = false
			if s.lock[c.node] != uint8(i+1) {
				c.ownBad = true
				l.f("confirm: Exists(%s): gone", mName(c.node))
			} else {
				s.holds++
				c.cSerial = s.holds
				l.f("confirm: Exists(%s): ours (hold #%d would begin here)", mName(c.node), c.cSerial)
			}
		}
		m.decide(s, i, l)
	case mHeld:
		switch c.lazy {
		case mTokGrant:
			if g := s.grants[c.pred]; g.owner != 0 {
				l.f("FencingToken: Exists(g(%s)):", mName(c.pred))
				s.assign(i, g.czxid, l)
				return
			}
			fallthrough
		case mTokPzxid:
			l.f("FencingToken: GetChildren:")
			if s.lock[c.node] == 0 {
				l.f(" %s not listed: ErrNodeVanished, no token (no fenced write)", mName(c.node))
				c.lazy = mTokKnown
				return
			}
			s.assign(i, s.pzxid, l)
			return
		}
		m.release(s, i, l)
	case mRetryRelease:
		l.f("plain delete after the lost reply: %s already gone", mName(c.node))
		c.pc = mDone
	}
}

// releaseMulti applies the release multi if it can commit, and reports
// whether it did.
func (m *mConfig) releaseMulti(s *mState, i int, l mLog) bool {
	c := &s.c[i]
	me := c.node
	if s.lock[me] != uint8(i+1) {
		l.f(" multi fails: %s gone", mName(me))
		return false
	}
	if !c.last && s.grants[me].owner != 0 {
		l.f(" multi fails: g(%s) exists (of %s)", mName(me), mOwnerName(s.grants[me].owner))
		return false
	}
	clears := c.clears
	for x := 1; x < mMaxN; x++ {
		if clears&(1<<x) != 0 && s.grants[x].owner != 0 {
			clears = 0 // a clear's create failed: the multi is sent again without them
		}
	}
	z := s.write()
	if !c.last {
		s.grants[me] = mGrant{owner: uint8(i + 1), czxid: z}
		l.f(" creates g(%s) czxid %d", mName(me), z)
		s.fireGrantCreated(me, l)
		c.released = me
	}
	l.f(" deletes %s", mName(me))
	s.deleteLockNode(me, z, l)
	s.clearGrants(clears, l)
	c.clears = 0
	return true
}

// clearGrants creates and deletes <grants>/x for each x in clears, in the
// multi just written.
func (s *mState) clearGrants(clears uint8, l mLog) {
	for x := 1; x < mMaxN; x++ {
		if clears&(1<<x) != 0 {
			l.f(" clears g(%s)", mName(uint8(x)))
			s.fireGrantCreated(uint8(x), l)
		}
	}
}

func (m *mConfig) release(s *mState, i int, l mLog) {
	c := &s.c[i]
	if c.last && c.clears == 0 {
		l.f("release: plain delete")
		if s.lock[c.node] == uint8(i+1) {
			s.deleteLockNode(c.node, s.write(), l)
		}
	} else {
		l.f("release:")
		if !m.releaseMulti(s, i, l) {
			l.f("; plain delete")
			if s.lock[c.node] == uint8(i+1) {
				s.deleteLockNode(c.node, s.write(), l)
			}
		}
	}
	c.pc = mDone
}

func (m *mConfig) giveUp(s *mState, i int, l mLog) {
	c := &s.c[i]
	me := c.node
	l.f("gives up (ctx ends):")
	ok := s.lock[me] == uint8(i+1) && c.clears != 0
	for x := 1; x < mMaxN; x++ {
		if c.clears&(1<<x) != 0 && s.grants[x].owner != 0 {
			ok = false
		}
	}
	if ok {
		l.f(" multi deletes %s", mName(me))
		z := s.write()
		s.deleteLockNode(me, z, l)
		s.clearGrants(c.clears, l)
	} else if s.lock[me] == uint8(i+1) {
		l.f(" plain delete of %s", mName(me))
		s.deleteLockNode(me, s.write(), l)
	} else {
		l.f(" %s already gone", mName(me))
	}
	*c = mContender{pc: mDone, released: c.released, cleaned: c.cleaned}
}

// canon zeroes the fields no later step reads, for the contender's
// program counter, and renames zxids and hold serials to 1, 2, ... in
// their order: only their order matters to the protocol and the checks.
// States equal after canon behave alike.
func (m *mConfig) canon(s *mState) {
	for i := range s.c {
		c := &s.c[i]
		switch c.pc {
		case mIdle:
			*c = mContender{released: c.released, cleaned: c.cleaned}
		case mList:
			*c = mContender{pc: mList, node: c.node, clears: c.clears, released: c.released, cleaned: c.cleaned}
		case mGetPred, mExistsGrant, mGetPredOld, mWait:
			c.cFromEvent, c.cOnDelete, c.needGrant, c.needOwn, c.grantBad, c.ownBad, c.cToken, c.cRevoked, c.cSerial = false, false, false, false, false, false, 0, false, 0
			c.last, c.revoked, c.serial, c.token, c.lazy = false, false, 0, 0, 0
		case mConfirm:
			c.last, c.revoked, c.serial, c.token, c.lazy = false, false, 0, 0, 0
		case mHeld:
			pred := uint8(0)
			if c.lazy == mTokGrant {
				pred = c.pred
			}
			*c = mContender{pc: mHeld, node: c.node, pred: pred, last: c.last, clears: c.clears, released: c.released,
				cleaned: c.cleaned, revoked: c.revoked, serial: c.serial, token: c.token, lazy: c.lazy}
		case mRetryRelease:
			*c = mContender{pc: mRetryRelease, node: c.node, released: c.released}
		case mDone:
			if c.cleaned || c.released == 0 || s.grants[c.released].owner == 0 || !m.cleanup {
				*c = mContender{pc: mDone}
			} else {
				*c = mContender{pc: mDone, released: c.released}
			}
		case mExpired:
			*c = mContender{pc: mExpired}
		}
	}
	// zxids
	var r mRenamer
	r.add(s.zxid)
	r.add(s.pzxid)
	for _, h := range s.hist[:s.nhist] {
		r.add(h.token)
	}
	for x := range s.grants {
		r.add(s.grants[x].czxid)
	}
	for i := range s.c {
		r.add(s.c[i].token)
		r.add(s.c[i].cToken)
	}
	s.zxid, s.pzxid = r.rank(s.zxid), r.rank(s.pzxid)
	for k := range s.hist[:s.nhist] {
		s.hist[k].token = r.rank(s.hist[k].token)
	}
	for x := range s.grants {
		s.grants[x].czxid = r.rank(s.grants[x].czxid)
	}
	for i := range s.c {
		s.c[i].token, s.c[i].cToken = r.rank(s.c[i].token), r.rank(s.c[i].cToken)
	}
	// hold serials
	r = mRenamer{}
	r.add(s.holds)
	for _, h := range s.hist[:s.nhist] {
		r.add(h.serial)
	}
	for i := range s.c {
		r.add(s.c[i].serial)
		r.add(s.c[i].cSerial)
	}
	s.holds = r.rank(s.holds)
	for k := range s.hist[:s.nhist] {
		s.hist[k].serial = r.rank(s.hist[k].serial)
	}
	for i := range s.c {
		s.c[i].serial, s.c[i].cSerial = r.rank(s.c[i].serial), r.rank(s.c[i].cSerial)
	}
}

// mRenamer renames a few distinct non-zero values to 1, 2, ... in order.
type mRenamer struct {
	v [32]uint8 // sorted, distinct
	n int
}

func (r *mRenamer) add(z uint8) {
	if z == 0 {
		return
	}
	k := 0
	for k < r.n && r.v[k] < z {
		k++
	}
	if k < r.n && r.v[k] == z {
		return
	}
	copy(r.v[k+1:r.n+1], r.v[k:r.n])
	r.v[k] = z
	r.n++
}

func (r *mRenamer) rank(z uint8) uint8 {
	if z == 0 {
		return 0
	}
	for k := 0; k < r.n; k++ {
		if r.v[k] == z {
			return uint8(k + 1)
		}
	}
	panic("model: value not added")
}

// mResult is an exploration's outcome.
type mResult struct {
	states int
	bad    uint8
	trace  []mAction
	stuck  int // terminal states with a waiter that never holds nor ends
	stuckT []mAction
}

// explore runs a breadth-first search of every interleaving from the
// initial state, stopping at the first violation (so its trace is a
// shortest one).
func (m *mConfig) explore() mResult {
	init := mState{nextSeq: 1}
	type parent struct {
		from uint32
		act  mAction
	}
	seed := maphash.MakeSeed()
	seen := map[uint64]uint32{maphash.Comparable(seed, init): 0}
	parents := []parent{{}}
	frontier := []mState{init}
	ids := []uint32{0}
	var res mResult
	traceOf := func(id uint32) []mAction {
		var t []mAction
		for id != 0 {
			t = append(t, parents[id].act)
			id = parents[id].from
		}
		for a, b := 0, len(t)-1; a < b; a, b = a+1, b-1 {
			t[a], t[b] = t[b], t[a]
		}
		return t
	}
	var acts []mAction
	for len(frontier) > 0 {
		var next []mState
		var nextIDs []uint32
		for k := range frontier {
			s := &frontier[k]
			acts = m.actions(s, acts)
			if len(acts) == 0 && !m.finished(s) {
				res.stuck++
				if res.stuckT == nil {
					res.stuckT = traceOf(ids[k])
				}
			}
			for _, a := range acts {
				t := *s
				m.apply(&t, a, mLog{})
				m.canon(&t)
				fp := maphash.Comparable(seed, t)
				if _, ok := seen[fp]; ok {
					continue
				}
				id := uint32(len(parents))
				seen[fp] = id
				parents = append(parents, parent{ids[k], a})
				if t.bad != mOK {
					res.states, res.bad, res.trace = len(parents), t.bad, traceOf(id)
					return res
				}
				next = append(next, t)
				nextIDs = append(nextIDs, id)
			}
		}
		frontier, ids = next, nextIDs
	}
	res.states = len(parents)
	return res
}

// finished reports whether every contender ended: done or expired.
func (m *mConfig) finished(s *mState) bool {
	for i := 0; i < m.n; i++ {
		if pc := s.c[i].pc; pc != mDone && pc != mExpired {
			return false
		}
	}
	return true
}

// describe replays trace and returns it, one step a line.
func (m *mConfig) describe(trace []mAction) string {
	var b strings.Builder
	s := mState{nextSeq: 1}
	for k, a := range trace {
		fmt.Fprintf(&b, "%3d. ", k+1)
		m.apply(&s, a, mLog{&b})
		b.WriteString("\n")
	}
	for i := 0; i < m.n; i++ {
		fmt.Fprintf(&b, "     %s: %s", mWho(uint8(i)), mPCNames[s.c[i].pc])
		if s.c[i].pc == mHeld {
			fmt.Fprintf(&b, " (hold #%d, token %d, revoked %v)", s.c[i].serial, s.c[i].token, s.c[i].revoked)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (m *mConfig) String() string {
	return fmt.Sprintf("%d contenders, checkOwnNode=%v checkGrantOwner=%v grantFirst=%v, operator deletes %d, forged grants %d, expiries %d, give-ups %d",
		m.n, m.checkOwnNode, m.checkGrantOwner, m.grantFirst, m.deletes, m.forges, m.expiries, m.giveUps)
}

var mViolations = [...]string{"none", "two holders at once", "a token not unique or not rising"}

func (m *mConfig) run(t *testing.T) mResult {
	t.Helper()
	start := time.Now()
	res := m.explore()
	t.Logf("%v: %d states in %v", m, res.states, time.Since(start).Round(time.Millisecond))
	return res
}

// TestModel_ExclusiveHandOffIsSafe explores every interleaving with both
// fixes on: one holder at a time, tokens unique and rising, and no waiter
// left waiting for ever.
func TestModel_ExclusiveHandOffIsSafe(t *testing.T) {
	for _, m := range mSafeConfigs {
		m.checkOwnNode, m.checkGrantOwner = true, true
		t.Run(fmt.Sprintf("n%d_del%d_forge%d_exp%d_giveup%d", m.n, m.deletes, m.forges, m.expiries, m.giveUps), func(t *testing.T) {
			t.Parallel()
			res := m.run(t)
			if res.bad != mOK {
				t.Fatalf("%v: %s:\n%s", &m, mViolations[res.bad], m.describe(res.trace))
			}
			if res.stuck > 0 {
				t.Errorf("%v: %d end states with a contender waiting for ever, e.g.:\n%s", &m, res.stuck, m.describe(res.stuckT))
			}
		})
	}
}

// TestModel_FindsDeletedWaiter reverts item 3's fix: the model must find
// two holders (with one token) after a waiter's node is deleted.
func TestModel_FindsDeletedWaiter(t *testing.T) {
	for _, m := range []mConfig{
		{n: 3, deletes: 1, checkGrantOwner: true},
		{n: 3, deletes: 1, grantFirst: true}, // ca3e38e, no forger
	} {
		res := m.run(t)
		if res.bad == mOK {
			t.Fatalf("%v: no violation found", &m)
		}
		t.Logf("counterexample (%s):\n%s", mViolations[res.bad], m.describe(res.trace))
	}
}

// TestModel_FindsForgedGrant reverts item 4's fix: the model must find a
// holder made by a read-only client's grant.
func TestModel_FindsForgedGrant(t *testing.T) {
	for _, m := range []mConfig{
		{n: 3, forges: 1, checkOwnNode: true},
		{n: 3, forges: 1, grantFirst: true}, // ca3e38e, no operator
	} {
		res := m.run(t)
		if res.bad == mOK {
			t.Fatalf("%v: no violation found", &m)
		}
		t.Logf("counterexample (%s):\n%s", mViolations[res.bad], m.describe(res.trace))
	}
}

var mSafeConfigs = []mConfig{
	{n: 3, deletes: 1, forges: 1},
	{n: 3, expiries: 1, giveUps: 1, lostReply: true, cleanup: true},
	{n: 3, deletes: 1, giveUps: 1},
	{n: 3, forges: 1, cleanup: true, lostReply: true},
	{n: 3, deletes: 1, expiries: 1},
	{n: 3, deletes: 2},
}

// TestModel_FourContenders explores 4 contenders: with no fault (62,000
// states) and with one operator delete (about a million states, 2 s
// without -race) in every run, and with one forged grant as well when
// LOCKCORE_MODEL_FULL=1.
func TestModel_FourContenders(t *testing.T) {
	configs := []mConfig{{n: 4}, {n: 4, deletes: 1}}
	if os.Getenv("LOCKCORE_MODEL_FULL") == "1" {
		configs = append(configs, mConfig{n: 4, forges: 1})
	}
	for _, m := range configs {
		m.checkOwnNode, m.checkGrantOwner = true, true
		res := m.run(t)
		if res.bad != mOK {
			t.Fatalf("%v: %s:\n%s", &m, mViolations[res.bad], m.describe(res.trace))
		}
		if res.stuck > 0 {
			t.Errorf("%v: %d end states with a contender waiting for ever, e.g.:\n%s", &m, res.stuck, m.describe(res.stuckT))
		}
	}
}
