package browser

import "encoding/json"

// The DevTools protocol as homard speaks it: the methods it sends, the
// events it reads, and only the fields of each it sets or looks at. A
// field homard may leave unset is omitempty, so that Chromium sees it
// absent and applies its own default (the shapes follow what
// github.com/chromedp/cdproto sent, minus the fields it sent as zero
// that Chromium reads as absent). A field sent even when zero has no
// omitempty: Chromium requires it, or its zero differs from its default
// (fetchRelatives defaults to true).
//
// These are plain encoding/json structs rather than cdproto's: cdproto's
// types and the JSON v2 library they bring cost 0.7 MB of a binary held
// under 25 MB (docs/ARCHITECTURE.md). protocol_test.go keeps cdproto as
// the oracle of what each command sends.

// Commands.
const (
	cmdBrowserGetVersion              = "Browser.getVersion"
	cmdBrowserClose                   = "Browser.close"
	cmdBrowserSetDownloadBehavior     = "Browser.setDownloadBehavior"
	cmdBrowserSetPermission           = "Browser.setPermission"
	cmdTargetSetDiscoverTargets       = "Target.setDiscoverTargets"
	cmdTargetSetAutoAttach            = "Target.setAutoAttach"
	cmdTargetCreateTarget             = "Target.createTarget"
	cmdTargetCloseTarget              = "Target.closeTarget"
	cmdTargetGetTargetInfo            = "Target.getTargetInfo"
	cmdFetchEnable                    = "Fetch.enable"
	cmdFetchContinueRequest           = "Fetch.continueRequest"
	cmdFetchFailRequest               = "Fetch.failRequest"
	cmdPageEnable                     = "Page.enable"
	cmdPageSetInterceptFileChooser    = "Page.setInterceptFileChooserDialog"
	cmdPageNavigate                   = "Page.navigate"
	cmdPageGetNavigationHistory       = "Page.getNavigationHistory"
	cmdPageNavigateToHistoryEntry     = "Page.navigateToHistoryEntry"
	cmdPageCreateIsolatedWorld        = "Page.createIsolatedWorld"
	cmdPageCaptureScreenshot          = "Page.captureScreenshot"
	cmdPageStartScreencast            = "Page.startScreencast"
	cmdPageStopScreencast             = "Page.stopScreencast"
	cmdPageScreencastFrameAck         = "Page.screencastFrameAck"
	cmdEmulationSetDeviceMetrics      = "Emulation.setDeviceMetricsOverride"
	cmdRuntimeRunIfWaitingForDebugger = "Runtime.runIfWaitingForDebugger"
	cmdRuntimeCallFunctionOn          = "Runtime.callFunctionOn"
	cmdRuntimeReleaseObjectGroup      = "Runtime.releaseObjectGroup"
	cmdDOMScrollIntoViewIfNeeded      = "DOM.scrollIntoViewIfNeeded"
	cmdDOMGetBoxModel                 = "DOM.getBoxModel"
	cmdDOMFocus                       = "DOM.focus"
	cmdDOMResolveNode                 = "DOM.resolveNode"
	cmdInputDispatchMouseEvent        = "Input.dispatchMouseEvent"
	cmdInputDispatchKeyEvent          = "Input.dispatchKeyEvent"
	cmdInputInsertText                = "Input.insertText"
	cmdAccessibilityGetFullAXTree     = "Accessibility.getFullAXTree"
	cmdAccessibilityGetPartialAXTree  = "Accessibility.getPartialAXTree"
	cmdDOMSnapshotCaptureSnapshot     = "DOMSnapshot.captureSnapshot"
)

// Events.
const (
	evTargetAttachedToTarget   = "Target.attachedToTarget"
	evTargetDetachedFromTarget = "Target.detachedFromTarget"
	evTargetTargetDestroyed    = "Target.targetDestroyed"
	evTargetTargetInfoChanged  = "Target.targetInfoChanged"
	evFetchRequestPaused       = "Fetch.requestPaused"
	evBrowserDownloadWillBegin = "Browser.downloadWillBegin"
	evBrowserDownloadProgress  = "Browser.downloadProgress"
	evPageFileChooserOpened    = "Page.fileChooserOpened"
	evPageLoadEventFired       = "Page.loadEventFired"
	evPageFrameStartedLoading  = "Page.frameStartedLoading"
	evPageFrameStoppedLoading  = "Page.frameStoppedLoading"
	evPageScreencastFrame      = "Page.screencastFrame"
)

// targetID names a target (a tab, frame or worker); a page's main frame
// has the same id.
type targetID string

// sessionID names the session attached to one target; "" is the
// browser's own.
type sessionID string

// backendNodeID names a DOM node for as long as it exists.
type backendNodeID int64

// Target domain.

type setDiscoverTargetsParams struct {
	Discover bool `json:"discover"`
}

type setAutoAttachParams struct {
	AutoAttach             bool `json:"autoAttach"`
	WaitForDebuggerOnStart bool `json:"waitForDebuggerOnStart"`
	Flatten                bool `json:"flatten,omitempty"` // absent is not flattened
}

type targetInfo struct {
	TargetID targetID `json:"targetId"`
	Type     string   `json:"type"`
	Subtype  string   `json:"subtype"`
	Title    string   `json:"title"`
	URL      string   `json:"url"`
	OpenerID targetID `json:"openerId"`
}

type createTargetParams struct {
	URL string `json:"url"`
}

type createTargetResult struct {
	TargetID targetID `json:"targetId"`
}

type targetParams struct {
	TargetID targetID `json:"targetId"`
}

type getTargetInfoResult struct {
	TargetInfo *targetInfo `json:"targetInfo"`
}

type attachedToTarget struct {
	SessionID          sessionID   `json:"sessionId"`
	TargetInfo         *targetInfo `json:"targetInfo"`
	WaitingForDebugger bool        `json:"waitingForDebugger"`
}

type detachedFromTarget struct {
	SessionID sessionID `json:"sessionId"`
}

type targetDestroyed struct {
	TargetID targetID `json:"targetId"`
}

type targetInfoChanged struct {
	TargetInfo *targetInfo `json:"targetInfo"`
}

// Browser domain.

type setDownloadBehaviorParams struct {
	Behavior      string `json:"behavior"` // "allowAndName": saved under their guid
	DownloadPath  string `json:"downloadPath,omitempty"`
	EventsEnabled bool   `json:"eventsEnabled,omitempty"` // absent is false
}

type setPermissionParams struct {
	Permission permissionDescriptor `json:"permission"`
	Setting    string               `json:"setting"` // "denied"
}

// permissionDescriptor names a permission. Its other flags (sysex,
// panTiltZoom, allowWithoutSanitization, allowWithoutGesture) are absent,
// which Chromium reads as false (cdproto sent them as false).
type permissionDescriptor struct {
	Name            string `json:"name"`
	UserVisibleOnly bool   `json:"userVisibleOnly"`
}

type downloadWillBegin struct {
	GUID              string `json:"guid"`
	SuggestedFilename string `json:"suggestedFilename"`
}

type downloadProgress struct {
	GUID  string `json:"guid"`
	State string `json:"state"` // "inProgress", "completed" or "canceled"
}

// Fetch domain.

type fetchEnableParams struct {
	Patterns []requestPattern `json:"patterns,omitempty"`
}

type requestPattern struct {
	URLPattern   string `json:"urlPattern,omitempty"`
	RequestStage string `json:"requestStage,omitempty"` // "Request" or "Response"
}

type requestPaused struct {
	RequestID string `json:"requestId"`
	Request   *struct {
		URL string `json:"url"`
	} `json:"request"`
}

type continueRequestParams struct {
	RequestID string `json:"requestId"`
}

type failRequestParams struct {
	RequestID   string `json:"requestId"`
	ErrorReason string `json:"errorReason"` // a Network.ErrorReason: "BlockedByClient"
}

// Page domain.

type setInterceptFileChooserParams struct {
	Enabled bool `json:"enabled"`
}

type navigateParams struct {
	URL string `json:"url"`
}

type navigateResult struct {
	LoaderID   string `json:"loaderId"`
	ErrorText  string `json:"errorText"`
	IsDownload bool   `json:"isDownload"`
}

// frameEvent is Page.frameStartedLoading and frameStoppedLoading.
type frameEvent struct {
	FrameID targetID `json:"frameId"`
}

type getNavigationHistoryResult struct {
	CurrentIndex int64 `json:"currentIndex"`
	Entries      []struct {
		ID int64 `json:"id"`
	} `json:"entries"`
}

type navigateToHistoryEntryParams struct {
	EntryID int64 `json:"entryId"`
}

type createIsolatedWorldParams struct {
	FrameID   targetID `json:"frameId"`
	WorldName string   `json:"worldName,omitempty"`
}

type createIsolatedWorldResult struct {
	ExecutionContextID int64 `json:"executionContextId"`
}

type captureScreenshotParams struct {
	Format string `json:"format,omitempty"` // absent is png
}

type captureScreenshotResult struct {
	Data []byte `json:"data"` // base64 in the message
}

type startScreencastParams struct {
	Format        string `json:"format,omitempty"`        // "jpeg" or "png"
	Quality       int64  `json:"quality,omitempty"`       // of a jpeg, 0–100; absent is Chromium's default
	MaxWidth      int64  `json:"maxWidth,omitempty"`      // absent is no cap
	MaxHeight     int64  `json:"maxHeight,omitempty"`     // absent is no cap
	EveryNthFrame int64  `json:"everyNthFrame,omitempty"` // absent is every frame
}

type screencastFrame struct {
	Data      []byte `json:"data"` // base64 in the message
	SessionID int64  `json:"sessionId"`
}

type screencastFrameAckParams struct {
	SessionID int64 `json:"sessionId"`
}

// Emulation domain.

type setDeviceMetricsParams struct {
	Width             int64   `json:"width"`
	Height            int64   `json:"height"`
	DeviceScaleFactor float64 `json:"deviceScaleFactor"`
	Mobile            bool    `json:"mobile"` // required
}

// Runtime domain.

type callFunctionOnParams struct {
	FunctionDeclaration string         `json:"functionDeclaration"`
	ObjectID            string         `json:"objectId,omitempty"`
	Arguments           []callArgument `json:"arguments,omitempty"`
	ReturnByValue       bool           `json:"returnByValue,omitempty"` // absent is false
}

type callArgument struct {
	Value json.RawMessage `json:"value,omitempty"`
}

type callFunctionOnResult struct {
	Result           *remoteObject `json:"result"`
	ExceptionDetails *struct {
		Text string `json:"text"`
	} `json:"exceptionDetails"`
}

// remoteObject is a JavaScript value: by reference (objectId) or, when
// returned by value, its JSON.
type remoteObject struct {
	ObjectID string          `json:"objectId"`
	Value    json.RawMessage `json:"value"`
}

type releaseObjectGroupParams struct {
	ObjectGroup string `json:"objectGroup"`
}

// DOM domain.

// nodeParams names a node for DOM.scrollIntoViewIfNeeded, getBoxModel
// and focus.
type nodeParams struct {
	BackendNodeID backendNodeID `json:"backendNodeId,omitempty"`
}

type getBoxModelResult struct {
	Model *struct {
		Border []float64 `json:"border"` // a quad: x1 y1 … x4 y4
	} `json:"model"`
}

type resolveNodeParams struct {
	BackendNodeID      backendNodeID `json:"backendNodeId,omitempty"`
	ObjectGroup        string        `json:"objectGroup,omitempty"`
	ExecutionContextID int64         `json:"executionContextId,omitempty"`
}

type resolveNodeResult struct {
	Object *remoteObject `json:"object"`
}

// Input domain.

// mouseEvent is Input.dispatchMouseEvent for the left button.
type mouseEvent struct {
	Type       string  `json:"type"` // mousePressed, mouseReleased, mouseMoved
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	Button     string  `json:"button,omitempty"`     // absent is none
	Buttons    int64   `json:"buttons,omitempty"`    // buttons held; absent is none
	ClickCount int64   `json:"clickCount,omitempty"` // absent is 0
}

// wheelEvent is Input.dispatchMouseEvent for the wheel, with both deltas
// always sent (Chromium refuses a mouseWheel without deltaX).
type wheelEvent struct {
	Type   string  `json:"type"` // mouseWheel
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	DeltaX float64 `json:"deltaX"`
	DeltaY float64 `json:"deltaY"`
}

type keyEvent struct {
	Type                  string `json:"type"` // keyDown, rawKeyDown, keyUp
	Text                  string `json:"text,omitempty"`
	UnmodifiedText        string `json:"unmodifiedText,omitempty"`
	Code                  string `json:"code,omitempty"`
	Key                   string `json:"key,omitempty"`
	WindowsVirtualKeyCode int64  `json:"windowsVirtualKeyCode,omitempty"`
	NativeVirtualKeyCode  int64  `json:"nativeVirtualKeyCode,omitempty"`
}

type insertTextParams struct {
	Text string `json:"text"`
}

// Accessibility domain.

// getFullAXTreeParams is empty: the whole tree of the main frame.
type getFullAXTreeParams struct{}

type getPartialAXTreeParams struct {
	BackendNodeID  backendNodeID `json:"backendNodeId,omitempty"`
	FetchRelatives bool          `json:"fetchRelatives"` // absent is true
}

type axTreeResult struct {
	Nodes []*axNode `json:"nodes"`
}

// axNode is one node of the accessibility tree.
type axNode struct {
	NodeID           string        `json:"nodeId"`
	ParentID         string        `json:"parentId"`
	ChildIDs         []string      `json:"childIds"`
	Ignored          bool          `json:"ignored"`
	Role             *axValue      `json:"role"`
	Name             *axValue      `json:"name"`
	Value            *axValue      `json:"value"`
	Properties       []axProperty  `json:"properties"`
	BackendDOMNodeID backendNodeID `json:"backendDOMNodeId"`
}

// axValue is a typed value: value is any JSON (a string, a number, a
// boolean, or "true"/"mixed" for a tristate).
type axValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type axProperty struct {
	Name  string   `json:"name"`
	Value *axValue `json:"value"`
}

// DOMSnapshot domain.

type captureSnapshotParams struct {
	ComputedStyles []string `json:"computedStyles"` // required
}

type captureSnapshotResult struct {
	Documents []struct {
		Nodes  *snapshotNodes  `json:"nodes"`
		Layout *snapshotLayout `json:"layout"`
	} `json:"documents"`
	Strings []string `json:"strings"`
}

// snapshotNodes are a document's DOM nodes, one index across the arrays.
type snapshotNodes struct {
	ParentIndex   []int64         `json:"parentIndex"`
	NodeType      []int64         `json:"nodeType"`
	BackendNodeID []backendNodeID `json:"backendNodeId"`
}

// snapshotLayout are the laid-out nodes, one index across the arrays:
// which DOM node, the indexes in Strings of its computed styles (in the
// order asked for), and its box (x, y, width, height).
type snapshotLayout struct {
	NodeIndex []int64     `json:"nodeIndex"`
	Styles    [][]int64   `json:"styles"`
	Bounds    [][]float64 `json:"bounds"`
}
