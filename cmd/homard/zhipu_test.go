package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/rogpeppe/go-internal/testscript"
)

// fakezhipu KEY starts a loopback server that answers as Zhipu's
// OpenAI-compatible endpoint does (docs/PROVIDERS.md; verified offline,
// not against the real service), and sets ZHIPU_URL to its base URL:
// a bearer other than KEY gets 401; a tool_choice other than "auto" gets
// 400 "Tool choice must be auto"; any other request is answered in
// Zhipu's stream shape (no "object" field, reasoning_content before the
// answer, finish_reason and usage in the last chunk): "OK" to the first
// (setup's provider test), a greeting to the others.
// It stops when the script ends.
func fakezhipu(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakezhipu KEY")
	}
	key := args[0]
	var answered atomic.Int64 // requests answered in full
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ToolChoice *string `json:"tool_choice"`
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/api/paas/v4/chat/completions":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"not found","code":404}}`)
			return
		case r.Header.Get("Authorization") != "Bearer "+key:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Authorization Token invalid","code":401}}`)
			return
		case json.Unmarshal(body, &req) != nil:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"bad request","code":400}}`)
			return
		case req.ToolChoice != nil && *req.ToolChoice != "auto":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"Tool choice must be auto","code":400}}`)
			return
		}
		answer := "你好！我是 GLM。"
		if answered.Add(1) == 1 {
			answer = "OK"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		const head = `{"id":"20250801120000abcdef","created":1754020800,"model":"glm-4.5","choices":[{"index":0,`
		for _, c := range []string{
			head + `"delta":{"role":"assistant","reasoning_content":"用户在打招呼。"}}]}`,
			head + `"delta":{"role":"assistant","content":` + jsonString(answer) + `}}]}`,
			head + `"finish_reason":"stop","delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`,
			"[DONE]",
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
	}))
	ts.Defer(srv.Close)
	ts.Setenv("ZHIPU_URL", srv.URL+"/api/paas/v4")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
