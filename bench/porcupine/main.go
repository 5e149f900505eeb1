// Checks Jepsen cas-register histories (the JSON form `testbed check-history` reads) with
// Porcupine, for the side-by-side table in docs/performance.md (issue 33). Porcupine is not part
// of the project: compare.sh builds this against a checkout of it.
//
//	porcupine-check [-timeout 60s] FILE...
//
// prints one line per file: "FILE ok|illegal|unknown SECONDS". A failed operation did not happen
// and is left out, as Knossos and `testbed check-history` do; an info one (or one that never
// completes) returns at the end of the history with an unknown output, as Porcupine's own Jepsen
// etcd tests do.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

type input struct {
	op         uint8 // 0 read, 1 write, 2 cas
	arg1, arg2 int
}

type output struct {
	value   int // read: the value read (nilValue for null)
	unknown bool
}

const nilValue = -1000000

var model = porcupine.Model{
	Init: func() interface{} { return nilValue },
	Step: func(state, in, out interface{}) (bool, interface{}) {
		st, i, o := state.(int), in.(input), out.(output)
		switch i.op {
		case 0:
			return o.unknown || o.value == st, st
		case 1:
			return true, i.arg1
		default: // only a cas that succeeded (or may have) is in the history
			if i.arg1 != st {
				return false, st
			}
			return true, i.arg2
		}
	},
}

type entry struct {
	Process interface{}     `json:"process"`
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Value   json.RawMessage `json:"value"`
}

func number(raw json.RawMessage) int {
	var v *int
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return nilValue
	}
	return *v
}

func events(path string) ([]porcupine.Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, err
	}
	var out []porcupine.Event
	open := map[int]int{} // process -> the position of its call event
	dropped := map[int]bool{}
	next := 0
	for _, e := range entries {
		p, isNumber := e.Process.(float64)
		if !isNumber {
			continue // the nemesis
		}
		process := int(p)
		kind := strings.TrimPrefix(e.Type, ":")
		f := strings.TrimPrefix(e.F, ":")
		switch kind {
		case "invoke":
			in := input{}
			switch f {
			case "write":
				in = input{op: 1, arg1: number(e.Value)}
			case "cas":
				var pair []json.RawMessage
				if err := json.Unmarshal(e.Value, &pair); err != nil || len(pair) != 2 {
					return nil, fmt.Errorf("a cas value is not [old, new]")
				}
				in = input{op: 2, arg1: number(pair[0]), arg2: number(pair[1])}
			}
			open[process] = len(out)
			out = append(out, porcupine.Event{ClientId: process, Kind: porcupine.CallEvent, Value: in, Id: next})
			next++
		case "ok":
			at := open[process]
			delete(open, process)
			out = append(out, porcupine.Event{ClientId: process, Kind: porcupine.ReturnEvent, Value: output{value: number(e.Value)}, Id: out[at].Id})
		case "fail":
			dropped[out[open[process]].Id] = true
			delete(open, process)
		case "info":
			// stays open: it returns at the end, unknown
		}
	}
	for process, at := range open {
		out = append(out, porcupine.Event{ClientId: process, Kind: porcupine.ReturnEvent, Value: output{unknown: true}, Id: out[at].Id})
	}
	kept := out[:0]
	for _, ev := range out {
		if !dropped[ev.Id] {
			kept = append(kept, ev)
		}
	}
	return kept, nil
}

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "give up after this long (unknown)")
	flag.Parse()
	for _, path := range flag.Args() {
		evs, err := events(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(2)
		}
		start := time.Now()
		res := porcupine.CheckEventsTimeout(model, evs, *timeout)
		verdict := map[porcupine.CheckResult]string{porcupine.Ok: "ok", porcupine.Illegal: "illegal", porcupine.Unknown: "unknown"}[res]
		fmt.Printf("%s %s %.3f\n", path, verdict, time.Since(start).Seconds())
	}
}
