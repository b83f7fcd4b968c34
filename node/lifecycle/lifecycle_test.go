package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// part records its starts and stops in log and fails as told.
type part struct {
	name                string
	log                 *[]string
	failStart, failStop bool
}

func (p *part) Start(context.Context) error {
	*p.log = append(*p.log, "start "+p.name)
	if p.failStart {
		return errors.New("no start")
	}
	return nil
}

func (p *part) Stop(context.Context) error {
	*p.log = append(*p.log, "stop "+p.name)
	if p.failStop {
		return errors.New("no stop")
	}
	return nil
}

// TestStartRollsBack: a part that fails to start stops the parts started
// before it, in reverse, and the error names the failed part; Stop stops
// every part in reverse and reports each failure.
func TestStartRollsBack(t *testing.T) {
	var log []string
	parts := []Part{&part{name: "a", log: &log}, &part{name: "b", log: &log}, &part{name: "c", log: &log, failStart: true}}
	err := Start(context.Background(), "role", parts)
	if err == nil || err.Error() != "role: start *lifecycle.part: no start" {
		t.Fatalf("start error %v", err)
	}
	if got := strings.Join(log, ", "); got != "start a, start b, start c, stop b, stop a" {
		t.Fatalf("calls: %s", got)
	}

	log = nil
	parts = []Part{&part{name: "a", log: &log, failStop: true}, &part{name: "b", log: &log}, &part{name: "c", log: &log, failStop: true}}
	if err := Start(context.Background(), "role", parts); err != nil {
		t.Fatal(err)
	}
	err = Stop(context.Background(), "role", parts)
	if got := strings.Join(log, ", "); got != "start a, start b, start c, stop c, stop b, stop a" {
		t.Fatalf("calls: %s", got)
	}
	if err == nil || strings.Count(err.Error(), "role: stop *lifecycle.part: no stop") != 2 {
		t.Fatalf("stop error %v, want both failures", err)
	}
}
