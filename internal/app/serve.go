package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/homard/homard/internal/capture"
	"github.com/homard/homard/internal/channel/web/ui"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/web"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/memtrim"
)

// ServeOptions configure Serve. The zero value serves the configured
// gateway.addr on loopback.
type ServeOptions struct {
	// Addr is host:port to listen on. Empty means gateway.addr.
	Addr string
	// AllowRemote permits a non-loopback address, and then only with TLS
	// (TLSCert and TLSKey) or BehindProxy.
	AllowRemote bool
	// TLSCert and TLSKey are PEM files; set both to serve HTTPS.
	TLSCert, TLSKey string
	// BehindProxy says a reverse proxy terminates TLS. PublicOrigin is
	// the https origin people open (the proxy's, or this server's own
	// name with TLS).
	BehindProxy  bool
	PublicOrigin string
	// UI is the web UI served at /. Nil means the one built into the
	// binary (internal/channel/web/ui).
	UI fs.FS
	// Out receives the login URL. Nil means os.Stdout.
	Out io.Writer
	// Log receives the server's log lines. Nil means os.Stderr.
	Log io.Writer
	// LogFormat is how log lines are written: "text" (slog's key=value
	// lines; the zero value) or "json" (one JSON object a line). The CLI
	// resolves its "auto" to one of them.
	LogFormat string
	// Listener, when set, is used instead of listening on Addr (tests
	// pass 127.0.0.1:0). Addr is then the listener's.
	Listener net.Listener
	// Grace is how long running turns may finish after ctx ends before
	// they are cancelled. Zero means 10s.
	Grace time.Duration
	// OnListen, when set, is called once the server accepts requests,
	// with its base URL and the one-time login URL.
	OnListen func(base, login string)
	// ChatAdapters are the chat channels to run beside the web UI. Nil
	// means every channel the config enables (Chats.Adapters), tokens from
	// the vault.
	ChatAdapters []chat.Adapter
}

// ErrServeRunning is returned when another `homard serve` runs on the
// same home.
var ErrServeRunning = errors.New("homard serve is running on this home")

// ServeInfo is what serve.json, in the data folder, says about a running
// `homard serve`.
type ServeInfo struct {
	PID  int    `json:"pid"`
	Addr string `json:"addr"`
	// URL is where a process on this machine reaches the serve.
	URL string `json:"url"`
	// Key is a bearer key for this serve's lifetime, so `homard chat` and
	// `homard run` can attach; the file is readable by the owner only, who
	// can read the database anyway.
	Key string `json:"key"`
}

func serveFile(r *Runtime) string { return filepath.Join(r.Paths.DataDir, "serve.json") }

// RunningServe reports the `homard serve` running on this home, if any: a
// serve.json whose process is alive.
func (r *Runtime) RunningServe() (ServeInfo, bool) {
	b, err := os.ReadFile(serveFile(r))
	if err != nil {
		return ServeInfo{}, false
	}
	var si ServeInfo
	if json.Unmarshal(b, &si) != nil || si.PID <= 0 {
		return ServeInfo{}, false
	}
	if si.PID != os.Getpid() {
		if err := syscall.Kill(si.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			return ServeInfo{}, false // stale: the process is gone
		}
	}
	return si, true
}

// Serve runs the HTTP gateway until ctx ends, then shuts it down: running
// turns get Grace to finish and be stored, then are cancelled (storing
// nothing), then open streams end.
func (r *Runtime) Serve(ctx context.Context, o ServeOptions) error {
	if si, ok := r.RunningServe(); ok && si.PID != os.Getpid() {
		return fmt.Errorf("%w (pid %d, http://%s); stop it first", ErrServeRunning, si.PID, si.Addr)
	}
	g := r.Config.Gateway
	if o.UI == nil {
		o.UI = ui.FS()
	}
	if o.Addr == "" {
		o.Addr = g.Addr
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	logOpts := &slog.HandlerOptions{Level: slog.LevelInfo}
	var logHandler slog.Handler
	switch o.LogFormat {
	case "", "text":
		logHandler = slog.NewTextHandler(o.Log, logOpts)
	case "json":
		logHandler = slog.NewJSONHandler(o.Log, logOpts)
	default:
		return fmt.Errorf("%w: log format %q: use text or json", ErrBadRequest, o.LogFormat)
	}
	useTLS := o.TLSCert != "" || o.TLSKey != ""
	if useTLS && (o.TLSCert == "" || o.TLSKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", ErrBadRequest)
	}
	if o.PublicOrigin != "" && !o.BehindProxy && !useTLS {
		return fmt.Errorf("%w: --public-origin is for --behind-proxy or --tls-cert", ErrBadRequest)
	}
	adapters := o.ChatAdapters
	if adapters == nil {
		var err error
		if adapters, err = r.Chats.Adapters(); err != nil {
			return err
		}
	}
	callbacks, err := r.Chats.Callbacks(adapters, chats.Exposure{AllowRemote: o.AllowRemote, TLS: useTLS, BehindProxy: o.BehindProxy})
	if err != nil {
		return err
	}
	ln := o.Listener
	if ln == nil {
		if err := web.CheckAddr(o.Addr, web.Exposure{AllowRemote: o.AllowRemote, TLS: useTLS, BehindProxy: o.BehindProxy, PublicOrigin: o.PublicOrigin}); err != nil {
			return fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		var err error
		if ln, err = net.Listen("tcp", o.Addr); err != nil {
			return fmt.Errorf("listen on %s: %w", o.Addr, err)
		}
	}
	defer ln.Close()
	addr := ln.Addr().String()
	log := slog.New(logHandler)
	local := ServeInfo{PID: os.Getpid(), Addr: addr, URL: localURL(addr, useTLS), Key: localKey()}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	base := scheme + "://" + addr
	if o.PublicOrigin != "" {
		base = o.PublicOrigin
	}
	srv, err := web.New(web.Options{
		LocalKey: local.Key, Base: base,
		Runtime: r.Channel(), Admin: r.Admin(), Addr: addr, PublicOrigin: o.PublicOrigin, TLS: useTLS,
		UI: o.UI, Log: log, ApprovalWait: g.ApprovalWait.Std(), PingInterval: g.PingInterval.Std(),
		Now: r.now, Callbacks: callbacks, Lang: r.Config.Lang,
		Artifacts: artifactView{st: r.Store, owner: r.Config.Owner}, Browser: r.browserControl(),
	})
	if err != nil {
		return err
	}
	if useTLS {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	if err := writeServeFile(r, local); err != nil {
		return err
	}
	defer os.Remove(serveFile(r))

	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// No WriteTimeout: event streams stay open for hours.
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	pruneCtx, stopPrune := context.WithCancel(ctx)
	defer stopPrune()
	go r.pruneLoop(pruneCtx, pruneEvery, log)
	// Memory capture of quiet sessions; what still waits when serve stops
	// is captured then (this defer runs after the chats and tasks have
	// stopped, and Close waits for the captures).
	captureTick := time.NewTicker(capture.CheckEvery)
	defer captureTick.Stop()
	go r.captures.Loop(pruneCtx, captureTick.C)
	go r.reviews.Loop(pruneCtx) // the weekly memory review; ends with serve
	defer func() {
		if err := r.FlushCapture(context.WithoutCancel(ctx)); err != nil {
			log.Warn("capturing the turns still waiting failed", "err", err)
		}
	}()
	// On PostgreSQL river's scheduler also sends the chats' parts, as jobs.
	r.log.Store(log)
	sched := r.Tasks.Scheduler(log)
	deliveries, _ := sched.(chats.Deliveries)
	// Chat channels stop with serve: a chat turn still running is cut and
	// reported to its owner as interrupted at the next start.
	chatsDone := make(chan struct{})
	go func() {
		defer close(chatsDone)
		if len(adapters) > 0 {
			_ = r.Chats.NewRunner(chats.Options{Adapters: adapters, Log: log, ApprovalWait: g.ApprovalWait.Std(), Deliveries: deliveries}).Run(pruneCtx)
		}
	}()
	defer func() { stopPrune(); <-chatsDone }()
	// Scheduled tasks run with serve; a run still going when it stops is
	// recorded as interrupted and never re-run.
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		if err := sched.Run(pruneCtx); err != nil {
			log.Warn("scheduled tasks stopped", "err", err)
		}
	}()
	defer func() { stopPrune(); <-schedDone }()
	login := srv.LoginURL(base)
	fmt.Fprintf(o.Out, "homard serve: listening on %s\nOpen this link once to log in (valid 10 minutes, single use):\n  %s\n", base, login)
	log.Info("listening", "addr", addr, "pid", os.Getpid())
	// Start-up is over: give back the binary's pages and the heap it
	// touched only to start (internal/memtrim), now and once more when
	// the goroutines serve started have settled.
	trim := func() {
		if res, err := memtrim.AfterStart(); err != nil {
			log.Debug("start-up memory not given back", "err", err)
		} else {
			log.Debug("start-up memory given back", "mappings", res.Regions, "bytes", res.Bytes)
		}
	}
	trim()
	trimLater := time.AfterFunc(memtrim.Settle, trim)
	defer trimLater.Stop()
	if o.OnListen != nil {
		o.OnListen(base, login)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", o.Grace)
	stopCtx, cancel := context.WithTimeout(context.Background(), o.Grace+5*time.Second)
	defer cancel()
	serr := srv.Shutdown(stopCtx, o.Grace)
	herr := hs.Shutdown(stopCtx)
	if errors.Is(herr, context.DeadlineExceeded) {
		herr = hs.Close()
	}
	<-served
	return errors.Join(serr, herr)
}

// localURL is the address a process on this machine uses to reach a serve
// bound to addr.
func localURL(addr string, useTLS bool) string {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// localKey returns 32 random bytes, hex.
func localKey() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// writeServeFile records this process as the home's running serve.
func writeServeFile(r *Runtime, si ServeInfo) error {
	b, _ := json.Marshal(si)
	tmp := serveFile(r) + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write serve.json: %w", err)
	}
	return os.Rename(tmp, serveFile(r))
}
