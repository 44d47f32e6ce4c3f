// homard web UI: the page's language (issue 26 point 3). GET /api/lang
// is {lang: "en"|"zh"|"auto", messages: the Chinese catalog keyed by the
// English text}; "auto" follows navigator.language. t(key, args…) is key
// in the page's language with %s, %d, %[n]s filled from args; a key with
// no entry is itself. Only homard's own words go through t, never text
// from the model, a tool, memory or the audit log, nor API values.
// window.homardLang → {t, load, tag}; app.js awaits load() first.
"use strict";

(function () {
  let table = {};
  let tag = "en";

  // format fills %s, %d and %[n]s / %[n]d with args; %% is "%".
  function format(s, args) {
    let next = 0;
    return s.replace(/%(?:\[(\d+)\])?([sdv%])/g, function (m, idx, verb) {
      if (verb === "%") return "%";
      const i = idx ? Number(idx) - 1 : next;
      next = i + 1;
      return i < args.length ? String(args[i]) : m;
    });
  }

  function t(key) {
    const s = Object.prototype.hasOwnProperty.call(table, key) ? table[key] : key;
    return arguments.length > 1 ? format(s, Array.prototype.slice.call(arguments, 1)) : s;
  }

  // pageLabels: index.html's own words (an identity t lists them for the
  // catalog test).
  const pageLabels = new Set((function (t) {
    return [
      t("Skip to the message box"), t("Chat"), t("Approvals"), t("Audit"), t("Memory"), t("Tasks"), t("Browser"),
      t("Sessions"), t("offline"), t("You are not logged in. Open the login URL printed by"), t("Session"),
      t("New session"), t("New"), t("Stop"), t("Message"), t("Send"), t("Show"), t("pending"), t("approved"),
      t("denied"), t("consumed"), t("expired"), t("all"), t("Refresh"), t("Standing approvals"),
      t("A session or always approval lets later calls it covers run without asking. Revoke one to be asked again."),
      t("Tool"), t("Decision"), t("any"), t("ran"), t("error"), t("Apply"), t("Load more"), t("Search"),
      t("Review queue"), t("Add a task"), t("Tasks run unattended, held to the body you approved. Add one here or with"),
      t(": it waits, pending, until you approve its exact body."), t("Name"), t("letters, digits,"), t("What it does"),
      t("A reminder: deliver this text as it is, with no model and no tools"), t("When"), t("every"), t("once, at"),
      t("on a cron schedule"), t("Time zone"), t("Tools"), t("the read-only tools (default)"), t("none"),
      t("only these:"), t("Deliver results to"), t("Add, pending my approval"), t("Cancel"), t("Take over"),
      t("Hand back"), t("While you have the browser, homard's model cannot use it."), t("Page"), t("Address"),
      t("Open"), t("Views"), t("Live updates"), t("Transcript"), t("Message (Enter sends, Shift+Enter new line)"),
      t("Audit timeline"), t("Scheduled tasks"), t("Summarise inbox.txt in five lines"), t("How it is scheduled"),
      t("When it runs"), t("Tools, separated by commas"), t("Task"),
      t("The browser's page: click and type here while you have it"), t("Mode"), t("Ceiling"), t("Approval lasts"),
      t("empty: the [automation] setting"),
    ];
  })(function (k) { return k; }));

  // translatePage translates the listed labels of the page.
  function translatePage() {
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const s = n.nodeValue, k = s.trim();
      if (k && pageLabels.has(k)) n.nodeValue = s.replace(k, t(k));
    }
    for (const attr of ["placeholder", "aria-label", "title"]) {
      for (const e of document.querySelectorAll("[" + attr + "]")) {
        const k = e.getAttribute(attr);
        if (pageLabels.has(k)) e.setAttribute(attr, t(k));
      }
    }
  }

  // load asks once; without an answer the page stays English.
  let loading = null;
  function load() {
    if (!loading) {
      loading = (async function () {
        try {
          const res = await fetch("/api/lang", { headers: { "Accept": "application/json" }, credentials: "same-origin" });
          if (!res.ok) return;
          const d = await res.json();
          const browserZH = /^zh\b/i.test(navigator.language || "");
          if (d && (d.lang === "zh" || (d.lang === "auto" && browserZH)) && d.messages) {
            table = d.messages;
            tag = "zh";
          }
        } catch (e) {
          return;
        }
        document.documentElement.lang = tag === "zh" ? "zh-Hans" : "en";
        if (tag !== "en") translatePage();
      })();
    }
    return loading;
  }

  Object.defineProperty(window, "homardLang", {
    value: Object.freeze({ t: t, load: load, tag: function () { return tag; } }),
    writable: false, configurable: false,
  });
})();
