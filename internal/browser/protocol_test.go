package browser

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
)

// TestParamsMatchCDProto: every command's params, as homard fills them,
// reach Chromium as cdproto's typed params did (cdproto is the oracle,
// kept for tests only): the same fields, the same values, the same ones
// left out. A field cdproto sent that these leave out is named in
// dropped, with why it makes no difference.
func TestParamsMatchCDProto(t *testing.T) {
	yes, no, q := true, false, int64(70)
	tests := []struct {
		method  string
		ours    any
		theirs  any
		dropped []string
	}{
		{cmdTargetSetDiscoverTargets, &setDiscoverTargetsParams{Discover: true}, &target.SetDiscoverTargetsParams{Discover: true}, nil},
		{cmdTargetSetAutoAttach,
			&setAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true},
			&target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: &yes}, nil},
		{cmdBrowserSetDownloadBehavior,
			&setDownloadBehaviorParams{Behavior: "allowAndName", DownloadPath: "/d", EventsEnabled: true},
			&cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: "/d", EventsEnabled: &yes}, nil},
		// Chromium reads each absent flag of a permission as false.
		{cmdBrowserSetPermission,
			&setPermissionParams{Permission: permissionDescriptor{Name: "push", UserVisibleOnly: true}, Setting: "denied"},
			&cdpbrowser.SetPermissionParams{Permission: &cdpbrowser.PermissionDescriptor{Name: "push", UserVisibleOnly: true}, Setting: cdpbrowser.PermissionSettingDenied},
			[]string{"permission.sysex", "permission.allowWithoutSanitization", "permission.allowWithoutGesture", "permission.panTiltZoom"}},
		{cmdBrowserSetPermission,
			&setPermissionParams{Permission: permissionDescriptor{Name: "camera"}, Setting: "denied"},
			&cdpbrowser.SetPermissionParams{Permission: &cdpbrowser.PermissionDescriptor{Name: "camera"}, Setting: cdpbrowser.PermissionSettingDenied},
			[]string{"permission.sysex", "permission.allowWithoutSanitization", "permission.allowWithoutGesture", "permission.panTiltZoom"}},
		{cmdFetchEnable,
			&fetchEnableParams{Patterns: []requestPattern{{URLPattern: "*", RequestStage: "Request"}}},
			&fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}}, nil},
		{cmdFetchFailRequest,
			&failRequestParams{RequestID: "r1", ErrorReason: "BlockedByClient"},
			&fetch.FailRequestParams{RequestID: "r1", ErrorReason: network.ErrorReasonBlockedByClient}, nil},
		{cmdFetchContinueRequest, &continueRequestParams{RequestID: "r1"}, &fetch.ContinueRequestParams{RequestID: "r1"}, nil},
		{cmdTargetCloseTarget, &targetParams{TargetID: "T"}, &target.CloseTargetParams{TargetID: "T"}, nil},
		{cmdTargetGetTargetInfo, &targetParams{TargetID: "T"}, &target.GetTargetInfoParams{TargetID: "T"}, nil},
		{cmdTargetCreateTarget, &createTargetParams{URL: "about:blank"}, &target.CreateTargetParams{URL: "about:blank"}, nil},
		{cmdPageSetInterceptFileChooser, &setInterceptFileChooserParams{Enabled: true}, &page.SetInterceptFileChooserDialogParams{Enabled: true}, nil},
		{cmdEmulationSetDeviceMetrics,
			&setDeviceMetricsParams{Width: 1280, Height: 800, DeviceScaleFactor: 1},
			&emulation.SetDeviceMetricsOverrideParams{Width: 1280, Height: 800, DeviceScaleFactor: 1}, nil},
		{cmdPageNavigate, &navigateParams{URL: "http://a/"}, &page.NavigateParams{URL: "http://a/"}, nil},
		{cmdPageNavigateToHistoryEntry, &navigateToHistoryEntryParams{EntryID: 3}, &page.NavigateToHistoryEntryParams{EntryID: 3}, nil},
		{cmdPageCreateIsolatedWorld,
			&createIsolatedWorldParams{FrameID: "F", WorldName: "homard"},
			&page.CreateIsolatedWorldParams{FrameID: "F", WorldName: "homard"}, nil},
		{cmdPageCaptureScreenshot, &captureScreenshotParams{Format: "png"}, &page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}, nil},
		{cmdPageStartScreencast,
			&startScreencastParams{Format: "jpeg", Quality: 70, MaxWidth: 1280, MaxHeight: 800, EveryNthFrame: 1},
			&page.StartScreencastParams{Format: page.StartScreencastFormatJpeg, Quality: &q, MaxWidth: 1280, MaxHeight: 800, EveryNthFrame: 1}, nil},
		{cmdPageScreencastFrameAck, &screencastFrameAckParams{SessionID: 7}, &page.ScreencastFrameAckParams{SessionID: 7}, nil},
		{cmdDOMScrollIntoViewIfNeeded, &nodeParams{BackendNodeID: 12}, &dom.ScrollIntoViewIfNeededParams{BackendNodeID: 12}, nil},
		{cmdDOMGetBoxModel, &nodeParams{BackendNodeID: 12}, &dom.GetBoxModelParams{BackendNodeID: 12}, nil},
		{cmdDOMFocus, &nodeParams{BackendNodeID: 12}, &dom.FocusParams{BackendNodeID: 12}, nil},
		{cmdDOMResolveNode,
			&resolveNodeParams{BackendNodeID: 12, ObjectGroup: "homard", ExecutionContextID: 4},
			&dom.ResolveNodeParams{BackendNodeID: 12, ObjectGroup: "homard", ExecutionContextID: 4}, nil},
		{cmdRuntimeReleaseObjectGroup, &releaseObjectGroupParams{ObjectGroup: "homard"}, &runtime.ReleaseObjectGroupParams{ObjectGroup: "homard"}, nil},
		{cmdRuntimeCallFunctionOn,
			&callFunctionOnParams{FunctionDeclaration: "function(v){}", ObjectID: "o1", Arguments: []callArgument{{Value: json.RawMessage(`"x"`)}}, ReturnByValue: true},
			&runtime.CallFunctionOnParams{FunctionDeclaration: "function(v){}", ObjectID: "o1", Arguments: []*runtime.CallArgument{{Value: jsonv2.Value(`"x"`)}}, ReturnByValue: &yes}, nil},
		{cmdRuntimeCallFunctionOn,
			&callFunctionOnParams{FunctionDeclaration: "function(){}", ObjectID: "o1", ReturnByValue: true},
			&runtime.CallFunctionOnParams{FunctionDeclaration: "function(){}", ObjectID: "o1", ReturnByValue: &yes}, nil},
		{cmdInputDispatchMouseEvent + " move",
			&mouseEvent{Type: "mouseMoved", X: 1.5, Y: 2},
			&input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 1.5, Y: 2}, nil},
		{cmdInputDispatchMouseEvent + " drag",
			&mouseEvent{Type: "mouseMoved", X: 1.5, Y: 2, Buttons: 1},
			&input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 1.5, Y: 2, Buttons: 1}, nil},
		{cmdInputDispatchMouseEvent + " press",
			&mouseEvent{Type: "mousePressed", X: 1, Y: 2, Button: "left", Buttons: 1, ClickCount: 1},
			&input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: 1, Y: 2, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}, nil},
		{cmdInputDispatchMouseEvent + " release",
			&mouseEvent{Type: "mouseReleased", X: 1, Y: 2, Button: "left", ClickCount: 1},
			&input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: 1, Y: 2, Button: input.MouseButtonLeft, ClickCount: 1}, nil},
		{cmdInputDispatchKeyEvent + " down",
			&keyEvent{Type: "keyDown", Key: "Enter", Code: "Enter", Text: "\r", UnmodifiedText: "\r", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13},
			&input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", Text: "\r", UnmodifiedText: "\r", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}, nil},
		{cmdInputDispatchKeyEvent + " typed",
			&keyEvent{Type: "rawKeyDown", Key: "é"},
			&input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeRawKeyDown, Key: "é"}, nil},
		{cmdInputInsertText, &insertTextParams{Text: "a <b> & c"}, &input.InsertTextParams{Text: "a <b> & c"}, nil},
		{cmdInputInsertText + " empty", &insertTextParams{}, &input.InsertTextParams{}, nil},
		{cmdAccessibilityGetFullAXTree, &getFullAXTreeParams{}, &accessibility.GetFullAXTreeParams{}, nil},
		{cmdAccessibilityGetPartialAXTree,
			&getPartialAXTreeParams{BackendNodeID: 12},
			&accessibility.GetPartialAXTreeParams{BackendNodeID: 12, FetchRelatives: &no}, nil},
		{cmdDOMSnapshotCaptureSnapshot,
			&captureSnapshotParams{ComputedStyles: hiddenStyles},
			&domsnapshot.CaptureSnapshotParams{ComputedStyles: hiddenStyles}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			ours, err := json.Marshal(tt.ours)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := jsonv2.Marshal(tt.theirs)
			if err != nil {
				t.Fatal(err)
			}
			got, want := flat(t, ours), flat(t, theirs)
			for _, k := range tt.dropped {
				if _, ok := want[k]; !ok {
					t.Errorf("cdproto did not send %s; drop it from the table", k)
				}
				delete(want, k)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s sends %s; cdproto sent %s", tt.method, ours, theirs)
			}
		})
	}
}

// flat decodes a JSON object into its leaves, named by dotted paths.
func flat(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x)
			}
			return
		}
		out[prefix] = v
	}
	walk("", v)
	return out
}

// TestDecodeMatchesCDProto: what homard reads of Chromium's answers and
// events decodes as it did through cdproto.
func TestDecodeMatchesCDProto(t *testing.T) {
	const ax = `{"nodes":[
		{"nodeId":"1","ignored":false,"role":{"type":"role","value":"RootWebArea"},"name":{"type":"computedString","value":"T"},"childIds":["2","3"],"backendDOMNodeId":5},
		{"nodeId":"2","parentId":"1","ignored":true,"ignoredReasons":[{"name":"notRendered","value":{"type":"boolean","value":true}}],"role":{"type":"role","value":"none"},"childIds":[],"backendDOMNodeId":6},
		{"nodeId":"3","parentId":"1","ignored":false,"role":{"type":"role","value":"slider"},"name":{"type":"computedString","value":"Vol","sources":[{"type":"attribute","attribute":"aria-label"}]},
		 "value":{"type":"number","value":2.5},"properties":[{"name":"checked","value":{"type":"tristate","value":"mixed"}},{"name":"disabled","value":{"type":"boolean","value":true}},{"name":"level","value":{"type":"integer","value":2}}],"backendDOMNodeId":7}
	]}`
	var ours axTreeResult
	if err := json.Unmarshal([]byte(ax), &ours); err != nil {
		t.Fatal(err)
	}
	var theirs accessibility.GetFullAXTreeResult
	if err := jsonv2.Unmarshal([]byte(ax), &theirs); err != nil {
		t.Fatal(err)
	}
	if len(ours.Nodes) != len(theirs.Nodes) {
		t.Fatalf("%d nodes; cdproto %d", len(ours.Nodes), len(theirs.Nodes))
	}
	text := func(v *accessibility.Value) string {
		if v == nil {
			return ""
		}
		return valueString(&axValue{Type: string(v.Type), Value: json.RawMessage(v.Value)})
	}
	for i, n := range ours.Nodes {
		c := theirs.Nodes[i]
		var kids []string
		for _, k := range c.ChildIDs {
			kids = append(kids, string(k))
		}
		if n.NodeID != string(c.NodeID) || n.ParentID != string(c.ParentID) || n.Ignored != c.Ignored ||
			int64(n.BackendDOMNodeID) != int64(c.BackendDOMNodeID) || len(n.ChildIDs) != len(kids) ||
			valueString(n.Role) != text(c.Role) || valueString(n.Name) != text(c.Name) || valueString(n.Value) != text(c.Value) ||
			len(n.Properties) != len(c.Properties) {
			t.Errorf("node %d = %+v; cdproto %+v", i, n, c)
			continue
		}
		for j, p := range n.Properties {
			if p.Name != string(c.Properties[j].Name) || valueString(p.Value) != text(c.Properties[j].Value) {
				t.Errorf("node %d property %d = %s %s; cdproto %s %s", i, j, p.Name, valueString(p.Value), c.Properties[j].Name, text(c.Properties[j].Value))
			}
		}
	}
	if got := valueString(ours.Nodes[2].Value); got != "2.5" {
		t.Errorf("a number value reads %q; want 2.5", got)
	}

	const frame = `{"data":"/9j/4AAQ","metadata":{"offsetTop":0,"pageScaleFactor":1,"deviceWidth":10,"deviceHeight":10,"scrollOffsetX":0,"scrollOffsetY":0},"sessionId":9}`
	var f screencastFrame
	var cf page.EventScreencastFrame
	if err := json.Unmarshal([]byte(frame), &f); err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal([]byte(frame), &cf); err != nil {
		t.Fatal(err)
	}
	if string(f.Data) != string(cf.Data) || f.SessionID != cf.SessionID {
		t.Errorf("frame = %x %d; cdproto %x %d", f.Data, f.SessionID, cf.Data, cf.SessionID)
	}
}
