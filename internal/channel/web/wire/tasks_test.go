package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
)

// TestTaskShapes pins the JSON of the tasks API: a pending task (nulls
// where nothing is set yet, never-null lists) and an active one with a
// run whose chat delivery failed.
func TestTaskShapes(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 30, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	run := channel.TaskRun{ID: 7, Status: "succeeded", SlotAt: at, StartedAt: at.Add(time.Second).In(paris), EndedAt: at.Add(time.Minute),
		Tokens: 120, Summary: "two letters", Delivery: "telegram", DeliveryState: "failed", DeliveryError: "chat not found"}
	const runJSON = `{"id":7,"status":"succeeded","slot_at":"2026-12-01T19:30:00Z","started_at":"2026-12-01T19:30:01Z","ended_at":"2026-12-01T19:31:00Z",` +
		`"tokens":120,"summary":"two letters","error":"","refused":"","delivery":"telegram","delivery_state":"failed","delivery_error":"chat not found"}`
	pending := channel.Task{ID: "tk_1", Name: "digest", Status: "pending", Origin: "web", Schedule: "every 1h0m0s from 2026-12-01T19:00:00Z",
		Problem: "waiting for approval", Canonical: `{"v":1}`, Hash: "ab12", SealIfApproved: "cd34"}
	active := pending
	active.Status, active.Problem, active.Seal, active.Ceiling = "active", "", "cd34", "read"
	active.Next = []time.Time{at.In(paris), at.Add(time.Hour)}
	active.ApprovedAt, active.ExpiresAt = at, at.Add(240*time.Hour)
	active.LastRun = &run
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"pending in the list", NewTask(pending),
			`{"id":"tk_1","name":"digest","status":"pending","origin":"web","schedule":"every 1h0m0s from 2026-12-01T19:00:00Z","next":[],` +
				`"problem":"waiting for approval","hash":"ab12","ceiling":"","expires_at":null,"last_run":null}`},
		{"pending shown", NewTaskDetail(pending, nil),
			`{"id":"tk_1","name":"digest","status":"pending","origin":"web","schedule":"every 1h0m0s from 2026-12-01T19:00:00Z","next":[],` +
				`"problem":"waiting for approval","hash":"ab12","ceiling":"","expires_at":null,"last_run":null,` +
				`"body":"{\"v\":1}","seal":"","seal_if_approved":"cd34","approved_at":null,"runs":[]}`},
		{"active shown", NewTaskDetail(active, []channel.TaskRun{run}),
			`{"id":"tk_1","name":"digest","status":"active","origin":"web","schedule":"every 1h0m0s from 2026-12-01T19:00:00Z",` +
				`"next":["2026-12-01T19:30:00Z","2026-12-01T20:30:00Z"],"problem":"","hash":"ab12","ceiling":"read","expires_at":"2026-12-11T19:30:00Z",` +
				`"last_run":` + runJSON + `,"body":"{\"v\":1}","seal":"cd34","seal_if_approved":"cd34","approved_at":"2026-12-01T19:30:00Z",` +
				`"runs":[` + runJSON + `]}`},
		{"running run", NewTaskRun(channel.TaskRun{ID: 8, Status: "running", SlotAt: at, StartedAt: at}),
			`{"id":8,"status":"running","slot_at":"2026-12-01T19:30:00Z","started_at":"2026-12-01T19:30:00Z","ended_at":null,` +
				`"tokens":0,"summary":"","error":"","refused":"","delivery":"","delivery_state":"","delivery_error":""}`},
		{"added", TaskAdded{TaskDetail: NewTaskDetail(pending, nil), Warning: "the ceiling read is below what write_file (write) can do"},
			`{"id":"tk_1","name":"digest","status":"pending","origin":"web","schedule":"every 1h0m0s from 2026-12-01T19:00:00Z","next":[],` +
				`"problem":"waiting for approval","hash":"ab12","ceiling":"","expires_at":null,"last_run":null,` +
				`"body":"{\"v\":1}","seal":"","seal_if_approved":"cd34","approved_at":null,"runs":[],` +
				`"warning":"the ceiling read is below what write_file (write) can do"}`},
		{"add", TaskAddRequest{Name: "mum", Prompt: "Call mum.", At: "2026-12-24T18:00", TZ: "Europe/Paris", Deliver: "telegram", Remind: true},
			`{"name":"mum","prompt":"Call mum.","at":"2026-12-24T18:00","tz":"Europe/Paris","tools":null,"deliver":"telegram","remind":true}`},
		{"approve", TaskApproveRequest{Hash: "ab12"}, `{"hash":"ab12"}`},
		{"renew", TaskRenewRequest{Expires: "240h"}, `{"expires":"240h"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil || string(b) != tc.want {
				t.Errorf("json.Marshal(%+v) =\n%s, %v; want\n%s", tc.v, b, err, tc.want)
			}
		})
	}
}

// TestTaskAddRequestTools: tools left out or null is the read-only
// default (nil), [] is no tools (empty, not nil), and the rest of the
// request reaches the spec as sent.
func TestTaskAddRequestTools(t *testing.T) {
	for _, tc := range []struct {
		body  string
		isNil bool
		n     int
	}{
		{`{"name":"a","prompt":"p","every":"1h"}`, true, 0},
		{`{"name":"a","prompt":"p","every":"1h","tools":null}`, true, 0},
		{`{"name":"a","prompt":"p","every":"1h","tools":[]}`, false, 0},
		{`{"name":"a","prompt":"p","every":"1h","tools":["read_file","grep"]}`, false, 2},
	} {
		var r TaskAddRequest
		if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
			t.Fatalf("json.Unmarshal(%s): %v", tc.body, err)
		}
		sp := r.Spec(time.Hour)
		if (sp.Tools == nil) != tc.isNil || len(sp.Tools) != tc.n || sp.Name != "a" || sp.Every != "1h" || sp.Expires != time.Hour {
			t.Errorf("%s → %+v; want tools nil=%v with %d names", tc.body, sp, tc.isNil, tc.n)
		}
	}
}
