package proc

import "testing"

func TestParseStat(t *testing.T) {
	line := []byte("4242 (a (b) c) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 18446744073709551615")
	st, ok := parseStat(line)
	if !ok || st.PGID != 4240 || st.Start != 987654 || st.Zombie {
		t.Errorf("parseStat = %+v %v, want group 4240 start 987654", st, ok)
	}
	if _, ok := parseStat([]byte("12 (x) Z 1")); ok {
		t.Error("a short line parsed")
	}
}
