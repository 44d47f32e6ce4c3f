package sessionlock

import (
	"errors"
	"sync"
	"testing"
)

// fakeShared is a database-wide lock table shared by several processes:
// each Locker is given its own view, as each replica has its own session.
type fakeShared struct {
	mu    *sync.Mutex
	owner map[string]int
	me    int
}

func (f fakeShared) TryLock(name string) (func(), bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o, held := f.owner[name]; held && o != f.me {
		return nil, false, nil
	}
	f.owner[name] = f.me
	return func() { f.mu.Lock(); delete(f.owner, name); f.mu.Unlock() }, true, nil
}

// TestLockExcludesOtherProcesses: two Lockers on one home (two processes'
// open file descriptions) exclude each other on one session, and its
// twins: another session locks, and the session locks again once freed.
func TestLockExcludesOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	a, b := New(dir, nil), New(dir, nil)
	defer a.Close()
	defer b.Close()
	unlock, err := a.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock("s1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second process locking s1 = %v; want ErrBusy", err)
	}
	other, err := b.Lock("s2")
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	other()
	unlock()
	again, err := b.Lock("s1")
	if err != nil {
		t.Fatalf("s1 after its unlock: %v", err)
	}
	again()
}

// TestLockExcludesOtherMachines: on a shared database, two homes (two
// machines: no common lock file) exclude each other through the database
// lock, and release it with the turn.
func TestLockExcludesOtherMachines(t *testing.T) {
	table := map[string]int{}
	var mu sync.Mutex
	a := New(t.TempDir(), fakeShared{&mu, table, 1})
	b := New(t.TempDir(), fakeShared{&mu, table, 2})
	defer a.Close()
	defer b.Close()
	unlock, err := a.Lock("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock("s1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("another machine locking s1 = %v; want ErrBusy", err)
	}
	unlock()
	again, err := b.Lock("s1")
	if err != nil {
		t.Fatalf("s1 after the first machine's turn: %v", err)
	}
	again()
}
