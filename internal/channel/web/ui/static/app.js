// homard web UI. Plain script, no framework, no build step.
//
// Safety rule for every line below: text that came from the model, a tool,
// memory or the audit log reaches the page only through textContent or
// createTextNode. No such text is ever parsed as HTML, no URL from it is
// ever loaded (no <img>, no fetch), and links are http(s) only. The one
// picture loaded is a screenshot artifact from the gateway itself:
// /api/artifacts/ID, the id URL-encoded (artifactPicture), served with
// nosniff and a sandbox CSP.
"use strict";

(function () {
  // t is the page's language (lang.js): homard's own words only.
  const t = window.homardLang.t;

  // ---------- small DOM helpers ----------

  function $(id) { return document.getElementById(id); }

  // el builds an element; text becomes a text node, never markup.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // HIDDEN matches the characters internal/termtext calls hidden: controls
  // (C0, DEL, C1), format characters (bidi embeddings, overrides, isolates
  // and marks, zero-width space and joiners, BOM, soft hyphen, tag
  // characters), line and paragraph separators, the combining grapheme
  // joiner, Hangul fillers and supplementary variation selectors. A browser
  // draws them as nothing, or reorders the text around them, so a path, a
  // file name or a tool name could look like another.
  const HIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029\u034f\u115f\u1160\u3164\uffa0\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

  // marked returns text as nodes in which each hidden character is a
  // visible token, \u202e, in a span of class "hidden-char" (styled apart,
  // so it cannot be confused with a literal backslash in the text). With
  // multiline, newline and tab stay as they are (a plan, a preview).
  function marked(text, multiline) {
    const s = text === undefined || text === null ? "" : String(text);
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of s.matchAll(HIDDEN)) {
      const ch = m[0];
      if (multiline && (ch === "\n" || ch === "\t")) continue;
      if (m.index > last) frag.appendChild(document.createTextNode(s.slice(last, m.index)));
      const span = el("span", "hidden-char", hiddenToken(ch));
      span.title = t("hidden character U+%s", ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0"));
      frag.appendChild(span);
      last = m.index + ch.length;
    }
    if (last < s.length) frag.appendChild(document.createTextNode(s.slice(last)));
    return frag;
  }

  // hiddenToken is the escape internal/termtext prints for ch: \x1b,
  // \u202e, \U000e0041.
  function hiddenToken(ch) {
    const cp = ch.codePointAt(0);
    const hex = cp.toString(16);
    if (cp < 0x80) return "\\x" + hex.padStart(2, "0");
    return cp > 0xffff ? "\\U" + hex.padStart(8, "0") : "\\u" + hex.padStart(4, "0");
  }

  // markedString is marked for places that hold only text (an <option>):
  // the tokens without their span.
  function markedString(text) {
    return String(text).replace(HIDDEN, hiddenToken);
  }

  // elm is el with the text marked (see marked).
  function elm(tag, cls, text, multiline) {
    const e = el(tag, cls);
    e.appendChild(marked(text, multiline));
    return e;
  }

  // setMarked replaces node's content with text, marked.
  function setMarked(node, text, multiline) {
    clear(node);
    node.appendChild(marked(text, multiline));
  }

  function button(label, onClick, cls) {
    const b = el("button", cls, label);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function fmtTime(s) {
    if (!s) return "";
    const d = new Date(s);
    if (isNaN(d.getTime())) return String(s);
    return d.toLocaleString(window.homardLang.tag() === "zh" ? "zh-CN" : undefined);
  }

  // hashPrefix turns "sha256:abcdef…" into its first 12 hex digits.
  function hashPrefix(h) {
    if (!h) return "";
    const s = String(h).replace(/^sha256:/, "");
    return s.slice(0, 12);
  }

  // ---------- API ----------

  class APIError extends Error {
    constructor(status, message, data) { super(message); this.status = status; this.data = data; }
  }

  async function api(method, path, body) {
    const init = { method: method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
    // The server wants this on every POST and DELETE, body or not (a
    // cross-site form cannot send it without a CORS preflight).
    if (method !== "GET") init.headers["Content-Type"] = "application/json";
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(path, init);
    if (res.status === 401) { showLoginNeeded(); throw new APIError(401, "not logged in"); }
    let data = null;
    const ct = res.headers.get("Content-Type") || "";
    if (ct.indexOf("application/json") >= 0) data = await res.json();
    if (!res.ok) {
      const msg = data && data.error ? data.error : res.status + " " + res.statusText;
      throw new APIError(res.status, msg, data);
    }
    return data;
  }

  function showLoginNeeded() {
    $("login-needed").hidden = false;
    for (const v of document.querySelectorAll(".view")) v.hidden = true;
  }

  // readSSE reads a text/event-stream body and calls onEvent(name, data)
  // for each event. Comment lines (": ping") are ignored.
  async function readSSE(body, onEvent) {
    const reader = body.getReader();
    const decoder = new TextDecoder("utf-8");
    let buf = "";
    let name = "";
    let data = [];
    function line(l) {
      if (l === "") {
        if (data.length) onEvent(name || "message", data.join("\n"));
        name = ""; data = [];
        return;
      }
      if (l[0] === ":") return;
      const i = l.indexOf(":");
      const field = i < 0 ? l : l.slice(0, i);
      let value = i < 0 ? "" : l.slice(i + 1);
      if (value[0] === " ") value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      buf += decoder.decode(r.value, { stream: true });
      let nl;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const l = buf.slice(0, nl);
        buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
        line(l);
      }
    }
    buf += decoder.decode();
    if (buf) line(buf);
    line("");
  }

  const markdown = window.homardMarkdown; // from markdown.js
  const tasks = window.homardTasks({ $: $, el: el, elm: elm, button: button, clear: clear, fmtTime: fmtTime, api: api }); // from tasks.js
  const browser = window.homardBrowser({ $: $, el: el, setMarked: setMarked, api: api }); // from browser.js

  // ---------- state ----------

  const state = {
    info: null,
    session: "",        // the session the chat view shows; "" = a new one
    streaming: false,
    cards: new Map(),   // approval id → {data, nodes: Set of card elements, status}
    // ownEnd is how this page's last turn ended ({session, key}), so its
    // own turn_done on /api/events, which may arrive after the chat
    // stream closed, does not redraw the transcript from history.
    ownEnd: null,
  };

  // ---------- approval cards ----------

  function choiceLabel(ch) {
    return { once: t("Approve once"), session: t("This session"), always: t("Always"), deny: t("Deny") }[ch];
  }
  function statusText(status) {
    const s = {
      approved: t("Approved"), denied: t("Denied"), consumed: t("Approved and used"),
      expired: t("Expired"), pending: t("Waiting for your answer"), closed: t("No longer pending"),
    }[status];
    return s || status;
  }

  function cardEntry(a) {
    const id = a.approval_id || a.id;
    let c = state.cards.get(id);
    if (!c) { c = { data: a, nodes: new Set(), status: a.status || "pending" }; state.cards.set(id, c); }
    else c.data = Object.assign({}, c.data, a);
    return c;
  }

  // makeCard builds a card for approval a (the shape of the approval event
  // or of GET /api/approvals).
  function makeCard(a) {
    const id = a.approval_id || a.id;
    const entry = cardEntry(a);
    const d = entry.data;
    const card = el("article", "card");
    card.setAttribute("data-approval-id", id);
    card.setAttribute("aria-label", t("Approval for %s", d.tool));
    const head = elm("h3", null, t("Approve %s?", d.tool));
    const risk = el("span", "risk risk-" + String(d.risk || "unknown").replace(/[^a-z]/g, ""), d.risk || t("unknown risk"));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(risk);
    card.appendChild(head);
    const planLabel = el("p", "label", t("Exactly what will run:"));
    card.appendChild(planLabel);
    card.appendChild(elm("pre", "plan", d.plan || "", true));
    if (d.preview) {
      card.appendChild(el("p", "label", t("What it does:")));
      const pre = el("pre", "preview");
      fillPreview(pre, d.preview, d.preview_kind === "diff");
      card.appendChild(pre);
      if (d.preview_omitted_lines > 0) {
        const more = button(t("Show all (%d more lines)", d.preview_omitted_lines), async function () {
          more.disabled = true;
          try {
            const full = await api("GET", "/api/approvals/" + encodeURIComponent(id));
            fillPreview(pre, full.preview_full || "", full.preview_kind === "diff");
            more.remove();
          } catch (e) { more.disabled = false; more.textContent = t("Show all (failed: %s)", e.message); }
        }, "expand");
        card.appendChild(more);
      }
    }
    const dl = el("dl", "facts");
    function fact(k, v, cls) {
      dl.appendChild(el("dt", null, k));
      const dd = elm("dd", cls, v);
      dl.appendChild(dd);
      return dd;
    }
    fact(t("Hash"), hashPrefix(d.plan_hash), "hash").title = d.plan_hash || "";
    const who = (state.info && state.info.owner ? state.info.owner + ", " : "") + t("the model in session %s", d.session || "?");
    fact(t("Asked by"), who, "who");
    if (d.reason) fact(t("Why"), d.reason, "reason");
    if (d.covers && d.risk !== "critical" && !d.once_only) fact(d.no_always ? t("Session would cover") : t("Session or always would cover"), d.covers, "covers");
    const exp = fact(t("Expires"), "", "expires");
    exp.setAttribute("data-expires", d.expires_at || "");
    tickOne(exp);
    card.appendChild(dl);
    const actions = el("div", "actions");
    // A critical or once-only card (the approval service's rule: a command
    // that runs code, a call a scheduled task's run or a paired client
    // asked) may only be approved once, and a command that runs code in
    // the graded sandbox (no_always) for the session at most; the server
    // refuses the others.
    const choices = d.risk === "critical" || d.once_only ? ["once", "deny"] : d.no_always ? ["once", "session", "deny"] : ["once", "session", "always", "deny"];
    // A card of permissions.totp's risk needs a code from the owner's
    // authenticator app to approve (deny needs none).
    let codeInput = null;
    if (d.needs_code) {
      codeInput = document.createElement("input");
      codeInput.type = "text";
      codeInput.inputMode = "numeric";
      codeInput.autocomplete = "one-time-code";
      codeInput.maxLength = 6;
      codeInput.className = "code";
      codeInput.placeholder = t("code");
      codeInput.setAttribute("aria-label", t("Code from your authenticator app"));
      actions.appendChild(codeInput);
    }
    for (const ch of choices) {
      const b = button(choiceLabel(ch), function () { answer(id, ch, codeInput && ch !== "deny" ? codeInput.value.trim() : ""); }, ch === "deny" ? "deny" : "approve");
      b.setAttribute("data-choice", ch);
      actions.appendChild(b);
    }
    card.appendChild(actions);
    const outcome = el("p", "outcome", "");
    outcome.tabIndex = -1; // focus lands here when the buttons go away
    card.appendChild(outcome);
    entry.nodes.add(card);
    paintCard(card, entry.status, "");
    return card;
  }

  // fillPreview shows a card's preview (what the call does: a write's
  // diff, a command's argv) in pre, one line per span, as text (marked:
  // hidden characters as tokens). In a diff, a line's class comes from its
  // first character, which homard wrote.
  function fillPreview(pre, text, diff) {
    clear(pre);
    const lines = String(text).replace(/\n$/, "").split("\n");
    for (const line of lines) {
      let cls = "pl";
      if (diff) {
        if (line.startsWith("+++ ") || line.startsWith("--- ")) cls += " diff-head";
        else if (line.startsWith("+")) cls += " diff-add";
        else if (line.startsWith("-")) cls += " diff-del";
        else if (line.startsWith("@@")) cls += " diff-hunk";
      }
      const span = el("span", cls);
      span.appendChild(marked(line, true));
      pre.appendChild(span);
      pre.appendChild(document.createTextNode("\n"));
    }
  }

  function paintCard(card, status, note) {
    card.setAttribute("data-status", status);
    const pending = status === "pending";
    for (const b of card.querySelectorAll(".actions button")) b.disabled = !pending;
    card.querySelector(".actions").hidden = !pending;
    const out = card.querySelector(".outcome");
    out.textContent = pending ? (note || "") : statusText(status) + (note ? " — " + note : "");
  }

  function setCardStatus(id, status, note) {
    const entry = state.cards.get(id);
    if (!entry) return;
    entry.status = status;
    for (const node of entry.nodes) paintCard(node, status, note);
    // Decided cards leave the pending list.
    if (status !== "pending" && $("approval-status").value === "pending") {
      for (const node of Array.from(entry.nodes)) {
        if (node.parentNode === $("approvals-list")) { node.remove(); entry.nodes.delete(node); }
      }
    }
    updatePendingCount();
  }

  async function answer(id, choice, code) {
    const entry = state.cards.get(id);
    // A keyboard user who answers keeps their place: focus moves to the
    // card's outcome line when its buttons go away.
    const focusCard = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".card") : null;
    if (entry) {
      entry.answeredHere = true;
      for (const n of entry.nodes) for (const b of n.querySelectorAll(".actions button")) b.disabled = true;
    }
    try {
      const body = { choice: choice };
      if (code) body.code = code;
      const a = await api("POST", "/api/approvals/" + encodeURIComponent(id), body);
      const st = (a && a.status) || (choice === "deny" ? "denied" : "approved");
      setCardStatus(id, st, choice === "deny" ? "" : t("scope: %s", choice));
    } catch (e) {
      if (e.status === 409) setCardStatus(id, "closed", t("answered elsewhere or expired"));
      else if (e.status === 403 && entry) { entry.answeredHere = false; for (const n of entry.nodes) paintCard(n, entry.status, e.message); }
      else if (entry) { for (const n of entry.nodes) paintCard(n, entry.status, t("Error: %s", e.message)); }
    }
    if (focusCard && focusCard.isConnected) focusCard.querySelector(".outcome").focus();
  }

  function updatePendingCount() {
    let n = 0;
    for (const c of state.cards.values()) if (c.status === "pending") n++;
    const b = $("pending-count");
    b.textContent = String(n);
    b.hidden = n === 0;
  }

  function tickOne(node) {
    const s = node.getAttribute("data-expires");
    if (!s) { node.textContent = t("unknown"); return; }
    const at = new Date(s).getTime();
    const left = Math.round((at - Date.now()) / 1000);
    if (isNaN(left)) { node.textContent = s; return; }
    if (left <= 0) {
      node.textContent = t("expired at %s", fmtTime(s));
      const card = node.closest(".card");
      if (card) {
        const id = card.getAttribute("data-approval-id");
        const entry = state.cards.get(id);
        if (entry && entry.status === "pending") setCardStatus(id, "expired", "");
      }
      return;
    }
    const m = Math.floor(left / 60), sec = left % 60;
    node.textContent = m ? t("in %d min %d s (%s)", m, sec, fmtTime(s)) : t("in %d s (%s)", sec, fmtTime(s));
  }

  setInterval(function () {
    for (const n of document.querySelectorAll(".card[data-status=pending] .expires")) tickOne(n);
  }, 1000);

  // ---------- chat ----------

  function transcript() { return $("transcript"); }

  function scrollDown() {
    const tr = transcript();
    tr.scrollTop = tr.scrollHeight;
  }

  function addUser(text) {
    const m = el("div", "msg user");
    m.appendChild(el("div", "who", t("You")));
    const body = el("div", "text", text);
    m.appendChild(body);
    transcript().appendChild(m);
    scrollDown();
  }

  function addAssistant(text) {
    const m = el("div", "msg assistant");
    m.appendChild(el("div", "who", "homard"));
    const body = el("div", "text");
    body.appendChild(markdown(text || ""));
    m.appendChild(body);
    transcript().appendChild(m);
    scrollDown();
    return { node: m, body: body, text: text || "" };
  }

  function setAssistant(a, text) {
    a.text = text;
    if (a.timer) { clearTimeout(a.timer); a.timer = 0; }
    clear(a.body);
    a.body.appendChild(markdown(text));
    scrollDown();
  }

  // appendAssistant adds a streamed fragment. The message is redrawn at
  // most every 50 ms, so a long answer streamed in many small pieces does
  // not re-render its whole Markdown for each one.
  function appendAssistant(a, fragment) {
    a.text += fragment;
    if (a.timer) return;
    a.timer = setTimeout(function () { a.timer = 0; setAssistant(a, a.text); }, 50);
  }

  // flushAssistant draws whatever is still waiting for its timer.
  function flushAssistant(a) {
    if (a && a.timer) setAssistant(a, a.text);
  }

  // statusWord is a call's status or an audit decision for a person (the
  // API's value stays in data attributes).
  function statusWord(s) {
    const w = { proposed: t("proposed"), ran: t("ran"), denied: t("denied"), pending: t("pending"), failed: t("failed"), error: t("error") }[s];
    return w || s || "";
  }

  function toolLine(ev) {
    const tr = transcript();
    let line = ev.id ? tr.querySelector('.tool[data-tool-id="' + CSS.escape(String(ev.id)) + '"]') : null;
    if (!line) {
      line = el("div", "tool");
      if (ev.id) line.setAttribute("data-tool-id", ev.id);
      line.appendChild(el("span", "tool-name"));
      line.appendChild(el("span", "tool-status"));
      line.appendChild(el("span", "tool-reason"));
      line.appendChild(el("pre", "tool-plan"));
      line.appendChild(el("pre", "tool-preview"));
      tr.appendChild(line);
    }
    line.setAttribute("data-status", ev.status || "");
    setMarked(line.querySelector(".tool-name"), "⚙ " + (ev.name || "tool"));
    line.querySelector(".tool-status").textContent = statusWord(ev.status);
    setMarked(line.querySelector(".tool-reason"), ev.reason || "");
    const plan = line.querySelector(".tool-plan");
    setMarked(plan, ev.plan || ev.args || "", true);
    plan.hidden = !plan.textContent;
    const prev = line.querySelector(".tool-preview");
    setMarked(prev, ev.preview || "", true);
    prev.hidden = !prev.textContent;
    if (ev.artifact && !line.querySelector(".tool-artifact")) line.appendChild(artifactNode(ev));
    scrollDown();
  }

  // artifactNode shows the artifact a call's result was kept as: a
  // screenshot as the picture, anything else as a link that opens the
  // whole result in a new tab (served as text or a download, never as a
  // page of this origin).
  function artifactNode(ev) {
    const box = el("div", "tool-artifact");
    if (ev.name === "browser_screenshot") {
      box.appendChild(artifactPicture(String(ev.artifact)));
      return box;
    }
    const a = el("a", null, t("whole result"));
    a.href = "/api/artifacts/" + encodeURIComponent(String(ev.artifact));
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    box.appendChild(a);
    return box;
  }

  // artifactPicture is the only image the page loads: a screenshot the
  // gateway keeps, from its own origin.
  function artifactPicture(id) {
    const img = document.createElement("img");
    img.src = "/api/artifacts/" + encodeURIComponent(id);
    img.alt = t("screenshot");
    img.className = "screenshot";
    return img;
  }

  function addCardToTranscript(a) {
    const id = a.approval_id || a.id;
    if (transcript().querySelector('.card[data-approval-id="' + CSS.escape(String(id)) + '"]')) return;
    const card = makeCard(a);
    transcript().appendChild(card);
    updatePendingCount();
    scrollDown();
    // On a phone the page scrolls, not the transcript: bring the card's
    // buttons into view so the owner can answer without hunting for them.
    card.querySelector(".actions").scrollIntoView({ block: "nearest" });
  }

  // turnEndKey tells how a turn ended: its error, or its final text.
  function turnEndKey(d) { return d.error !== undefined ? "error" : "text:" + (d.text || ""); }

  function chatStatus(s) { $("chat-status").textContent = s; }

  function setStreaming(on) {
    state.streaming = on;
    $("send").disabled = on;
    $("cancel-turn").hidden = !on;
    $("session-select").disabled = on;
    $("new-session").disabled = on;
  }

  async function send() {
    const input = $("input");
    const text = input.value;
    if (!text.trim() || state.streaming) return;
    input.value = "";
    state.ownEnd = null;
    addUser(text);
    setStreaming(true);
    // Screen readers wait for the streamed answer instead of reading every redraw.
    transcript().setAttribute("aria-busy", "true");
    chatStatus(t("Thinking…"));
    let answerMsg = null;
    let streamed = false;
    const body = { message: text };
    if (state.session) body.session = state.session;
    try {
      const res = await fetch("/api/chat", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
        body: JSON.stringify(body),
      });
      if (res.status === 401) { showLoginNeeded(); return; }
      if (!res.ok) {
        let msg = res.status + " " + res.statusText;
        try { const j = await res.json(); if (j && j.error) msg = j.error; } catch (e) { /* keep status */ }
        transcript().appendChild(el("div", "msg error", msg));
        chatStatus("");
        return;
      }
      await readSSE(res.body, function (name, raw) {
        let d;
        try { d = JSON.parse(raw); } catch (e) { return; }
        switch (name) {
          case "session":
            if (d.session && d.session !== state.session) { state.session = d.session; addSessionOption(d.session, true); }
            break;
          case "delta":
            if (!answerMsg) answerMsg = addAssistant("");
            streamed = true;
            transcript().setAttribute("aria-busy", "true");
            appendAssistant(answerMsg, d.text || "");
            chatStatus(t("Answering…"));
            break;
          case "tool":
            flushAssistant(answerMsg);
            toolLine(d);
            answerMsg = null; // text after a tool call is a new paragraph of the answer
            break;
          case "approval":
            flushAssistant(answerMsg);
            transcript().setAttribute("aria-busy", "false"); // the card must be announced
            addCardToTranscript(d);
            chatStatus(t("Waiting for your approval…"));
            break;
          case "done": {
            state.ownEnd = { session: d.session || state.session, key: turnEndKey(d) };
            flushAssistant(answerMsg);
            // The streamed deltas already showed the answer; done.text is
            // drawn only when nothing was streamed.
            if (d.text && !streamed) setAssistant(answerMsg || addAssistant(""), d.text);
            const parts = [];
            if (d.calls !== undefined) parts.push(t("calls %s/%s", d.calls, d.max_calls || "∞"));
            if (d.units !== undefined) parts.push(t("units %s/%s", d.units, d.max_units || "∞"));
            if (d.usage) parts.push(t("tokens in %d out %d", d.usage.input || 0, d.usage.output || 0));
            if (d.stopped) parts.push(t("stopped: %s", d.stopped));
            if (d.pending && d.pending.length) parts.push(t("%d approval(s) pending", d.pending.length));
            transcript().appendChild(el("div", "usage", parts.join(" · ")));
            scrollDown();
            break;
          }
          case "error":
            state.ownEnd = { session: state.session, key: turnEndKey(d) };
            transcript().appendChild(el("div", "msg error", d.error || t("error")));
            break;
        }
      });
      chatStatus("");
    } catch (e) {
      transcript().appendChild(el("div", "msg error", t("Connection lost: %s", e.message)));
      chatStatus("");
    } finally {
      flushAssistant(answerMsg);
      transcript().setAttribute("aria-busy", "false");
      setStreaming(false);
      loadSessions();
    }
  }

  function addSessionOption(id, select, label) {
    const sel = $("session-select");
    let found = null;
    for (const o of sel.options) if (o.value === id) found = o;
    if (!found) { found = el("option", null, markedString(id)); found.value = id; sel.insertBefore(found, sel.options[1] || null); }
    if (label) found.textContent = markedString(label);
    if (select) sel.value = id;
  }

  async function openSession(id) {
    state.session = id;
    $("session-select").value = id;
    clear(transcript());
    if (!id) return;
    try {
      const msgs = await api("GET", "/api/sessions/" + encodeURIComponent(id) + "/messages");
      // Another session was opened while this one loaded: its transcript
      // is the one on screen.
      if (state.session !== id) return;
      for (const m of msgs || []) {
        if (m.role === "user") addUser(m.text || "");
        else if (m.role === "assistant") addAssistant(m.text || "");
        else if (m.role === "tool") toolLine({ name: m.tool, status: m.status, preview: argsText(m.text) });
      }
    } catch (e) {
      if (state.session === id) transcript().appendChild(el("div", "msg error", e.message));
    }
  }

  // argsText shows a tool call's stored arguments (compact JSON) as text:
  // one "name: value" line per argument, a string value as itself (its
  // line breaks kept), anything else as JSON. Not JSON: shown as it is.
  function argsText(raw) {
    let v;
    try { v = JSON.parse(raw); } catch (e) { return raw || ""; }
    if (!v || typeof v !== "object" || Array.isArray(v)) return typeof v === "string" ? v : JSON.stringify(v);
    const lines = [];
    for (const k of Object.keys(v)) {
      const x = v[k];
      lines.push(k + ": " + (typeof x === "string" ? x : JSON.stringify(x)));
    }
    return lines.join("\n");
  }

  // ---------- sessions ----------

  // sessionLabel is how a session is named in lists: its title (the first
  // words of its first message) and id.
  function sessionLabel(s) { return s.title ? s.title + " — " + s.id : s.id; }

  // confirmDelete asks inside actions whether to delete s, then does.
  function confirmDelete(s, li, actions, del) {
    clear(actions);
    actions.appendChild(el("span", "confirm", t("Delete this conversation for good? The audit trail keeps its calls.")));
    const yes = button(t("Yes, delete"), async function () {
      try {
        await api("DELETE", "/api/sessions/" + encodeURIComponent(s.id));
        sessionGone(s.id);
        li.remove();
      } catch (e) {
        clear(actions);
        actions.appendChild(del);
        actions.appendChild(el("span", "error", e.message));
      }
    }, "deny");
    actions.appendChild(yes);
    actions.appendChild(button(t("Keep"), function () { clear(actions); actions.appendChild(del); del.focus(); }));
    yes.focus();
  }

  // sessionGone forgets a deleted session in this page.
  function sessionGone(id) {
    const sel = $("session-select");
    for (const o of Array.from(sel.options)) if (o.value === id) o.remove();
    if (state.session === id && !state.streaming) openSession("");
  }

  async function loadSessions() {
    let list;
    try { list = await api("GET", "/api/sessions"); } catch (e) { return; }
    const ul = $("sessions-list");
    clear(ul);
    for (const s of list || []) {
      addSessionOption(s.id, false, sessionLabel(s));
      const li = el("li", "session");
      li.setAttribute("data-session", s.id);
      li.appendChild(elm("span", "title", s.title || t("(no message yet)")));
      li.appendChild(elm("span", "sid", s.id));
      li.appendChild(el("span", "meta", t("%d turns · last %s", s.turns, fmtTime(s.last_at || s.created_at)) + (s.busy ? t(" · busy") : "") +
        (s.private_since ? t(" · has read your data: fetches ask") : "")));
      li.appendChild(button(t("Open"), function () { location.hash = "#chat"; openSession(s.id); }));
      const actions = el("span", "actions");
      const del = button(t("Delete"), function () { confirmDelete(s, li, actions, del); }, "deny");
      del.setAttribute("aria-label", t("Delete session %s", markedString(s.title || s.id)));
      actions.appendChild(del);
      li.appendChild(actions);
      ul.appendChild(li);
    }
    if (!list || !list.length) ul.appendChild(el("li", "empty", t("No sessions yet.")));
    if (state.session) $("session-select").value = state.session;
  }

  // ---------- approvals view ----------

  async function loadApprovals() {
    const status = $("approval-status").value;
    const box = $("approvals-list");
    let list;
    try { list = await api("GET", "/api/approvals?status=" + encodeURIComponent(status)); }
    catch (e) { clear(box); box.appendChild(el("p", "error", e.message)); return; }
    if ($("approval-status").value !== status) return; // a later choice's answer draws the list
    for (const c of state.cards.values()) for (const n of Array.from(c.nodes)) if (n.parentNode === box) c.nodes.delete(n);
    clear(box);
    for (const a of list || []) {
      const entry = cardEntry(a);
      entry.status = a.status || "pending";
      box.appendChild(makeCard(a));
    }
    if (!list || !list.length) box.appendChild(el("p", "empty", t("Nothing here.")));
    updatePendingCount();
    loadGrants();
  }

  // ---------- grants ----------

  // loadGrants lists the standing session and always approvals, each with
  // a button that revokes it (the calls it covered ask again).
  async function loadGrants() {
    const ul = $("grants-list");
    let list;
    try { list = await api("GET", "/api/grants"); }
    catch (e) { clear(ul); ul.appendChild(el("li", "error", e.message)); return; }
    clear(ul);
    for (const g of list || []) {
      const li = el("li", "grant");
      li.setAttribute("data-grant-id", g.id);
      const covers = g.template || (g.patterns && g.patterns.length ? g.patterns.join(" ") : t("calls without a path"));
      const scope = g.scope === "session" ? t("this session (%s)", g.session) : t("every session");
      li.appendChild(elm("span", "grant-what", t("%s on %s", g.tool, covers)));
      li.appendChild(elm("span", "grant-meta", t("%s · up to %s risk · until %s", scope, g.max_risk, fmtTime(g.expires_at))));
      const revoke = button(t("Revoke"), async function () {
        revoke.disabled = true;
        try { await api("POST", "/api/grants/" + encodeURIComponent(g.id) + "/revoke"); loadGrants(); }
        catch (e) { revoke.disabled = false; li.appendChild(el("span", "error", e.message)); }
      }, "deny");
      li.appendChild(revoke);
      ul.appendChild(li);
    }
    if (!list || !list.length) ul.appendChild(el("li", "empty", t("No standing approvals.")));
  }

  // ---------- audit view ----------

  // The timeline shows the newest record first; "Load more" goes back.
  const audit = { before: 0, limit: 50 };

  async function loadAudit(reset) {
    const ol = $("audit-list");
    if (reset) { audit.before = 0; clear(ol); }
    const q = new URLSearchParams();
    q.set("order", "newest");
    if (audit.before) q.set("before", String(audit.before));
    q.set("limit", String(audit.limit));
    const tool = $("audit-tool").value.trim();
    const dec = $("audit-decision").value;
    if (tool) q.set("tool", tool);
    if (dec) q.set("decision", dec);
    let page;
    try { page = await api("GET", "/api/audit?" + q.toString()); }
    catch (e) { ol.appendChild(el("li", "error", e.message)); return; }
    const recs = (page && page.records) || [];
    for (const r of recs) {
      const li = el("li", "rec decision-" + String(r.decision || "").replace(/[^a-z]/g, ""));
      const head = el("div", "rec-head");
      head.appendChild(el("span", "seq", "#" + r.seq));
      head.appendChild(el("time", null, fmtTime(r.time)));
      head.appendChild(elm("strong", "tool-name", r.tool));
      head.appendChild(el("span", "decision", statusWord(r.decision)));
      li.appendChild(head);
      const meta = [];
      if (r.session) meta.push(t("session %s", r.session));
      if (r.trust) meta.push(t("trust %s", r.trust));
      if (r.rule) meta.push(t("rule %s", r.rule));
      if (r.plan_hash) meta.push(t("hash %s", hashPrefix(r.plan_hash)));
      if (r.approval_id) meta.push(t("approval %s", r.approval_id));
      li.appendChild(el("div", "meta", meta.join(" · ")));
      if (r.reason) li.appendChild(elm("div", "reason", r.reason));
      if (r.args) li.appendChild(elm("pre", "args", typeof r.args === "string" ? r.args : JSON.stringify(r.args), true));
      ol.appendChild(li);
    }
    if (reset && !recs.length) ol.appendChild(el("li", "empty", t("No records.")));
    audit.before = (page && page.next) || 0;
    $("audit-more").hidden = !audit.before;
  }

  // ---------- memory view ----------

  async function loadMemory() {
    const ul = $("memory-list");
    const q = $("memory-q").value.trim();
    let list;
    try { list = await api("GET", "/api/memory" + (q ? "?q=" + encodeURIComponent(q) : "")); }
    catch (e) { clear(ul); ul.appendChild(el("li", "error", e.message)); return; }
    if ($("memory-q").value.trim() !== q) return; // the search changed: its own answer draws the list
    clear(ul);
    for (const m of list || []) {
      const li = el("li", "unit");
      li.appendChild(elm("div", "unit-text", m.text));
      const meta = [m.kind, m.source, m.created ? t("since %s", fmtTime(m.created)) : "", m.expires ? t("expires %s", fmtTime(m.expires)) : ""].filter(Boolean);
      li.appendChild(el("div", "meta", meta.join(" · ")));
      const actions = el("div", "actions");
      const forget = button(t("Forget"), function () {
        clear(actions);
        actions.appendChild(el("span", "confirm", t("Forget this for good?")));
        const yes = button(t("Yes, forget"), async function () {
          try { await api("DELETE", "/api/memory/" + encodeURIComponent(m.id)); li.remove(); }
          catch (e) { actions.appendChild(el("span", "error", e.message)); }
        }, "deny");
        actions.appendChild(yes);
        actions.appendChild(button(t("Keep"), function () { clear(actions); actions.appendChild(forget); forget.focus(); }));
        yes.focus();
      });
      actions.appendChild(forget);
      li.appendChild(actions);
      ul.appendChild(li);
    }
    if (!list || !list.length) ul.appendChild(el("li", "empty", q ? t("No match.") : t("Nothing remembered yet.")));
    const rv = $("memory-review");
    let review = [];
    try { review = await api("GET", "/api/memory/review"); } catch (e) { review = []; }
    clear(rv);
    for (const r of review || []) {
      const li = el("li", "unit");
      li.appendChild(elm("div", "unit-text", r.text));
      const meta = [r.kind, r.status, r.count ? r.count + "×" : "", r.conflicts_with ? t("conflicts with %s", r.conflicts_with) : ""].filter(Boolean);
      li.appendChild(el("div", "meta", meta.join(" · ")));
      const actions = el("div", "actions");
      const answer = function (action, replace) {
        return async function () {
          const body = { action: action };
          if (replace) body.replace = replace;
          try { await api("POST", "/api/memory/review/" + encodeURIComponent(r.id), body); }
          catch (e) { li.appendChild(el("div", "error", e.message)); return; }
          loadMemory();
        };
      };
      actions.appendChild(button(t("Remember"), answer("accept")));
      if (r.conflicts_with) actions.appendChild(button(t("Remember, forget %s", r.conflicts_with), answer("accept", r.conflicts_with)));
      actions.appendChild(button(t("Dismiss"), answer("dismiss")));
      li.appendChild(actions);
      rv.appendChild(li);
    }
    if (!review || !review.length) rv.appendChild(el("li", "empty", t("Nothing to review.")));
  }

  // loadWeekly shows the weekly memory review waiting for the owner (GET
  // /api/memory/weekly; 404: none waits) as one card. Its texts are the
  // model's and the memory's: text only, hidden characters marked.
  async function loadWeekly() {
    let rev = null;
    try { rev = await api("GET", "/api/memory/weekly"); }
    catch (e) { if (e.status !== 404) { weeklyCard(null, e.message); return; } }
    weeklyCard(rev, "");
  }

  function weeklyCard(rev, message) {
    const weeklyWords = { merge: t("merge"), delete: t("delete"), replace: t("replace"), approved: t("approved"),
      dismissed: t("dismissed"), stale: t("stale") };
    const box = $("memory-weekly");
    clear(box);
    box.hidden = !rev && !message;
    if (rev) box.appendChild(el("h2", "", t("Weekly memory review")));
    if (message) box.appendChild(el("div", "error", message));
    if (!rev) return;
    const ol = el("ol", "proposals");
    // answer approves or dismisses proposal n ("all"); the card shows the
    // review as the server answers, and a refusal (a stale proposal).
    const answer = function (n, action) {
      return async function () {
        try { weeklyCard(await api("POST", "/api/memory/weekly/" + n, { action: action }), ""); }
        catch (e) {
          if (e.data && e.data.review) weeklyCard(e.data.review, e.message);
          else {
            await loadWeekly();
            $("memory-weekly").appendChild(el("div", "error", e.message));
            $("memory-weekly").hidden = false;
          }
        }
      };
    };
    let pending = 0;
    for (const p of rev.proposals || []) {
      const li = el("li", "proposal");
      li.dataset.status = p.status;
      li.appendChild(el("div", "label", p.n + ". " + (weeklyWords[p.action] || p.action) +
        (p.status !== "pending" ? " [" + (weeklyWords[p.status] || p.status) + "]" : "")));
      for (const b of p.before || []) {
        const d = el("div", "before");
        d.appendChild(el("span", "meta", b.id + " "));
        d.appendChild(b.gone ? el("span", "meta", t("(no longer in memory)")) : elm("span", "unit-text", b.text));
        li.appendChild(d);
      }
      if (p.after) li.appendChild(elm("div", "after unit-text", "→ " + p.after));
      if (p.reason) li.appendChild(elm("div", "meta", t(" (why: %s)", p.reason).trim()));
      if (p.status === "pending") {
        pending++;
        const actions = el("div", "actions");
        actions.appendChild(button(t("Approve"), answer(p.n, "approve"), "approve"));
        actions.appendChild(button(t("Dismiss"), answer(p.n, "dismiss"), "deny"));
        li.appendChild(actions);
      }
      ol.appendChild(li);
    }
    box.appendChild(ol);
    if (pending > 0) {
      const all = el("div", "actions");
      all.appendChild(button(t("Approve all"), answer("all", "approve"), "approve"));
      box.appendChild(all);
    }
  }

  // ---------- live events ----------

  function startEvents() {
    if (!window.EventSource) return;
    const es = new EventSource("/api/events");
    const live = $("live");
    let opened = false;
    es.onopen = function () {
      live.textContent = t("live"); live.classList.add("on");
      // After a reconnect, decisions made while the stream was down were
      // missed: ask the server which cards are still pending.
      if (opened) syncPending();
      opened = true;
    };
    es.onerror = function () { live.textContent = t("offline"); live.classList.remove("on"); };
    function on(name, f) {
      es.addEventListener(name, function (e) {
        let d;
        try { d = JSON.parse(e.data); } catch (err) { return; }
        f(d);
      });
    }
    on("approval", function (d) {
      const entry = cardEntry(d);
      if (!$("view-approvals").hidden && $("approval-status").value === "pending" && entry.nodes.size === 0) {
        const empty = $("approvals-list").querySelector(".empty");
        if (empty) empty.remove();
        $("approvals-list").appendChild(makeCard(d));
      }
      updatePendingCount();
    });
    on("approval_decided", function (d) {
      const entry = state.cards.get(d.approval_id);
      if (!entry) return;
      if (entry.answeredHere) { if (entry.status === "pending") setCardStatus(d.approval_id, d.status || "decided", ""); return; }
      setCardStatus(d.approval_id, d.status || "decided", t("answered elsewhere"));
    });
    on("task_changed", tasks.changed);
    on("browser_changed", browser.changed);
    on("session_deleted", function (d) {
      if (!d.session) return;
      sessionGone(d.session);
      if (!$("view-sessions").hidden) loadSessions();
    });
    on("turn_done", function (d) {
      if (!$("view-sessions").hidden) loadSessions();
      // A turn of the shown session ran elsewhere (another tab, the CLI): show it.
      // This page's own turn, whose stream already ended, needs nothing.
      const own = state.ownEnd;
      if (own && own.session === d.session && own.key === turnEndKey(d)) { state.ownEnd = null; return; }
      if (d.session && d.session === state.session && !state.streaming) openSession(state.session);
    });
  }

  // syncPending closes every card the server no longer lists as pending.
  async function syncPending() {
    let list;
    try { list = await api("GET", "/api/approvals?status=pending"); } catch (e) { return; }
    const still = new Set((list || []).map(function (a) { return a.id; }));
    for (const [id, entry] of state.cards) {
      if (entry.status === "pending" && !still.has(id)) setCardStatus(id, "closed", t("answered elsewhere or expired"));
    }
    for (const a of list || []) cardEntry(a);
    updatePendingCount();
  }

  // ---------- routing and start ----------

  const views = ["chat", "approvals", "audit", "memory", "tasks", "browser", "sessions"];

  function route() {
    if (!state.info) return;
    const v = (location.hash || "#chat").slice(1);
    // The Browser view exists only when the server runs the browser.
    const name = views.indexOf(v) >= 0 && (v !== "browser" || browser.available()) ? v : "chat";
    for (const n of views) $("view-" + n).hidden = n !== name;
    for (const a of document.querySelectorAll("nav a")) {
      if (a.getAttribute("data-view") === name) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    if (name === "approvals") loadApprovals();
    if (name === "audit") loadAudit(true);
    if (name === "memory") { loadMemory(); loadWeekly(); }
    if (name === "sessions") loadSessions();
    if (name === "tasks") tasks.load();
    if (name === "browser") browser.show(); else browser.hide();
  }

  function wire() {
    $("composer").addEventListener("submit", function (e) { e.preventDefault(); send(); });
    $("input").addEventListener("keydown", function (e) {
      // Enter during IME composition (CJK input) confirms the composition; it must not send.
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) { e.preventDefault(); send(); }
    });
    $("session-select").addEventListener("change", function () { openSession($("session-select").value); });
    $("new-session").addEventListener("click", function () { openSession(""); $("input").focus(); });
    $("cancel-turn").addEventListener("click", function () {
      if (state.session) api("POST", "/api/sessions/" + encodeURIComponent(state.session) + "/cancel", {}).catch(function () {});
    });
    $("approval-status").addEventListener("change", loadApprovals);
    $("approvals-refresh").addEventListener("click", loadApprovals);
    $("audit-filter").addEventListener("submit", function (e) { e.preventDefault(); loadAudit(true); });
    $("audit-more").addEventListener("click", function () { loadAudit(false); });
    $("memory-search").addEventListener("submit", function (e) { e.preventDefault(); loadMemory(); });
    $("sessions-refresh").addEventListener("click", loadSessions);
    $("tasks-refresh").addEventListener("click", tasks.load);
    window.addEventListener("hashchange", route);
  }

  async function start() {
    await window.homardLang.load(); // the page's language, before anything is drawn
    wire();
    try { state.info = await api("GET", "/api/info"); }
    catch (e) { if (e.status !== 401) { $("info").textContent = t("error: %s", e.message); } return; }
    const i = state.info || {};
    $("info").textContent = [i.model, i.mode && t("mode %s", i.mode), i.owner].filter(Boolean).join(" · ");
    $("info").title = (i.workspace ? t("workspace %s", i.workspace) + " · " : "") + "homard " + (i.version || "");
    await browser.probe(); // shows the Browser entry when the server runs one
    document.body.setAttribute("data-ready", "1");
    route();
    loadSessions();
    startEvents();
    api("GET", "/api/approvals?status=pending").then(function (list) {
      for (const a of list || []) cardEntry(a);
      updatePendingCount();
    }).catch(function () {});
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
