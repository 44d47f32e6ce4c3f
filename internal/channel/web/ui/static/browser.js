// homard web UI: the Browser view (GET /api/browser and its actions).
//
// The owner watches homard's isolated browser and may take it over (to
// log in to a site), then hand it back. While the owner has it, the
// model's browser tools are refused: that is the tools' rule, enforced
// by homard, not by this page; the page only relays clicks and keys.
//
// Frames come as base64 JPEG on GET /api/browser/frames and are drawn on
// a <canvas> with createImageBitmap: the page's CSP (img-src 'self')
// would refuse a data: or blob: image, and a decoded bitmap needs no
// URL at all. The page's URL and title are untrusted text (setMarked).
//
// It defines window.homardBrowser(ui) → {probe, available, show, hide,
// changed}, where ui holds app.js's helpers ($, el, setMarked, api).
"use strict";

(function () {
  const t = window.homardLang.t; // the page's language (lang.js)
  // Keys sent by name; every other key that types one character is sent
  // as text.
  const NAMED_KEYS = new Set(["Enter", "Backspace", "Tab", "Escape", "Delete", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight",
    "Home", "End", "PageUp", "PageDown"]);

  function browserView(ui) {
    const $ = ui.$, api = ui.api, setMarked = ui.setMarked;
    const st = {
      available: false,
      state: null,      // the last GET /api/browser
      frames: null,     // the open EventSource, while the view shows
      drawing: false,   // a frame is being decoded
      waiting: null,    // the newest frame that came meanwhile
      queue: Promise.resolve(), // input requests, sent one after another
      poll: 0,
    };

    // probe asks whether the server runs a browser and shows the nav
    // entry if it does (404: it is off).
    async function probe() {
      try { render(await api("GET", "/api/browser")); st.available = true; }
      catch (e) { st.available = false; }
      $("nav-browser").hidden = !st.available;
    }

    function render(s) {
      st.state = s;
      const view = $("view-browser");
      view.setAttribute("data-owner", s.owner ? "owner" : "model");
      view.setAttribute("data-running", s.running ? "1" : "0");
      $("browser-who").textContent = !s.running ? t("The browser is not running; it starts when homard's model first uses it.") :
        s.owner ? t("You have the browser.") : t("homard's model has the browser.");
      setMarked($("browser-title"), s.title || "");
      setMarked($("browser-url"), s.url || "");
      $("browser-take").hidden = s.owner;
      $("browser-give").hidden = !s.owner;
      $("browser-open").hidden = !s.owner;
      $("browser-screen").setAttribute("aria-disabled", s.owner ? "false" : "true");
    }

    function outcome(text, failed) {
      const o = $("browser-outcome");
      o.textContent = text || "";
      o.className = failed ? "outcome error" : "outcome";
    }

    async function act(path, body) {
      try { render(await api("POST", path, body || {})); outcome(""); }
      catch (e) { outcome(e.message, true); if (e.status === 404) hide(); }
    }

    async function refresh() {
      try { render(await api("GET", "/api/browser")); } catch (e) { /* the next poll tries again */ }
    }

    function show() {
      refresh();
      if (!st.frames && window.EventSource) {
        const es = new EventSource("/api/browser/frames");
        es.addEventListener("frame", function (e) { frame(e.data); });
        st.frames = es;
      }
      if (!st.poll) st.poll = setInterval(refresh, 3000);
    }

    // hide stops the frames (the server stops the screencast) and the poll.
    function hide() {
      if (st.frames) { st.frames.close(); st.frames = null; }
      if (st.poll) { clearInterval(st.poll); st.poll = 0; }
    }

    // frame draws one base64 JPEG; frames that come while one is decoded
    // are dropped but for the newest.
    function frame(b64) {
      if (st.drawing) { st.waiting = b64; return; }
      st.drawing = true;
      let bytes;
      try {
        const bin = atob(b64);
        bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      } catch (e) { done(); return; }
      createImageBitmap(new Blob([bytes], { type: "image/jpeg" })).then(function (bmp) {
        const c = $("browser-screen");
        if (c.width !== bmp.width || c.height !== bmp.height) { c.width = bmp.width; c.height = bmp.height; }
        c.getContext("2d").drawImage(bmp, 0, 0);
        bmp.close();
        c.setAttribute("data-frames", String(Number(c.getAttribute("data-frames") || 0) + 1));
      }).catch(function () { /* a broken frame: wait for the next */ }).then(done);
      function done() {
        st.drawing = false;
        const next = st.waiting;
        st.waiting = null;
        if (next) frame(next);
      }
    }

    // send queues one input request, so keys arrive in the order typed.
    function send(body) {
      st.queue = st.queue.then(function () { return api("POST", "/api/browser/input", body); })
        .catch(function (e) { outcome(e.message, true); if (e.status === 409) refresh(); });
    }

    function owner() { return st.state && st.state.owner; }

    // point is the page's viewport position under a mouse event: the
    // frame's pixels are the viewport's CSS pixels (device scale 1), so
    // scale by its natural size over the size shown.
    function point(e) {
      const c = $("browser-screen");
      const r = c.getBoundingClientRect();
      if (!r.width || !r.height) return null;
      const x = (e.clientX - r.left) * (c.width / r.width);
      const y = (e.clientY - r.top) * (c.height / r.height);
      return { x: Math.max(0, Math.round(x * 10) / 10), y: Math.max(0, Math.round(y * 10) / 10) };
    }

    function wire() {
      $("browser-take").addEventListener("click", function () { act("/api/browser/take"); });
      $("browser-give").addEventListener("click", function () { act("/api/browser/give"); });
      $("browser-open").addEventListener("submit", function (e) {
        e.preventDefault();
        const u = $("browser-address").value.trim();
        if (u) act("/api/browser/open", { url: u });
      });
      const c = $("browser-screen");
      c.addEventListener("click", function (e) {
        c.focus();
        if (!owner()) return;
        const p = point(e);
        if (!p) return;
        send({ kind: "press", x: p.x, y: p.y });
        send({ kind: "release", x: p.x, y: p.y });
      });
      c.addEventListener("keydown", function (e) {
        if (!owner() || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
        if (NAMED_KEYS.has(e.key)) { e.preventDefault(); send({ kind: "key", key: e.key }); return; }
        if (e.key.length === 1 || [...e.key].length === 1) { e.preventDefault(); send({ kind: "text", text: e.key }); }
      });
    }

    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
    else wire();

    return {
      probe: probe,
      available: function () { return st.available; },
      show: show,
      hide: hide,
      changed: function (d) { if (st.available && d) render(d); },
    };
  }

  window.homardBrowser = browserView;
})();
