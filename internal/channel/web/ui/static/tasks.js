// homard web UI: the Tasks view (GET /api/tasks and /api/tasks/{id}).
//
// A task's body is what its owner approves. It is shown verbatim, as
// text, in a <pre>: the prompt is the owner's, but it is treated as
// untrusted text all the same (textContent only, hidden characters
// marked). Approve posts the hash shown next to that body, so a body
// changed since the page loaded is refused (409) rather than approved.
//
// "Add a task" posts the form to POST /api/tasks, which adds it pending,
// as `homard task add` does; the answer — the stored body and its hash —
// is drawn like any pending task, with the same Approve button, so
// nothing runs until the owner approves what they read. The server's
// words (an error, a warning) are shown as text.
//
// It defines window.homardTasks(ui) → {load, changed}, where ui holds
// app.js's helpers ($, el, elm, button, clear, fmtTime, api).
"use strict";

(function () {
  function tasksView(ui) {
    const t = window.homardLang.t; // the page's language (lang.js)
    const $ = ui.$, el = ui.el, elm = ui.elm, button = ui.button, clear = ui.clear, fmtTime = ui.fmtTime, api = ui.api;
    const shown = { id: "" }; // the task whose detail is open

    // deliveryText says where a run's summary went:
    // "telegram: failed — chat not found", "web", "not delivered".
    function deliveryText(r) {
      if (!r.delivery) return r.status === "succeeded" ? t("not delivered yet") : "";
      if (!r.delivery_state) return r.delivery;
      return r.delivery + ": " + r.delivery_state + (r.delivery_error ? " — " + r.delivery_error : "");
    }

    // Where a task came from, for a person.
    function originText(o) {
      return { cli: t("cli (homard task add)"), web: t("web (this page)"), chat: t("chat (approved in a conversation)") }[o];
    }

    function statusBadge(status) {
      return el("span", "task-status status-" + String(status || "").replace(/[^a-z]/g, ""), status);
    }

    // load draws the list, then the open task again (another tab or the
    // CLI may have changed it).
    async function load() {
      await loadList();
      if (shown.id) show(shown.id);
    }

    async function loadList() {
      const ul = $("tasks-list");
      let list;
      try { list = await api("GET", "/api/tasks"); }
      catch (e) { clear(ul); ul.appendChild(el("li", "error", e.message)); return; }
      clear(ul);
      for (const task of list || []) {
        const li = el("li", "task");
        li.setAttribute("data-task-id", task.id);
        const head = el("div", "task-head");
        head.appendChild(elm("strong", "task-name", task.name));
        head.appendChild(statusBadge(task.status));
        head.appendChild(elm("span", "task-schedule", task.schedule));
        if (task.origin) head.appendChild(elm("span", "task-origin", t("from %s", task.origin)));
        li.appendChild(head);
        const meta = [];
        if (task.next && task.next.length) meta.push(t("next %s", fmtTime(task.next[0])));
        if (task.last_run) meta.push(t("last run %s %s", task.last_run.status, fmtTime(task.last_run.started_at)));
        if (task.expires_at) meta.push(t("approved until %s", fmtTime(task.expires_at)));
        if (meta.length) li.appendChild(el("div", "meta", meta.join(" · ")));
        if (task.problem) li.appendChild(elm("div", "task-problem", task.problem));
        const open = button(t("Show"), function () { show(task.id); });
        open.setAttribute("aria-label", t("Show task %s", task.name));
        li.appendChild(open);
        ul.appendChild(li);
      }
      if (!list || !list.length) ul.appendChild(el("li", "empty", t("No tasks yet. Add one with Add a task, or with homard task add.")));
    }

    // show draws task id. Answers can arrive out of order (a live update
    // asks for the open task while the owner opens another): only the
    // answer for the task chosen last is drawn.
    async function show(id) {
      shown.id = id;
      const box = $("task-detail");
      let d;
      try { d = await api("GET", "/api/tasks/" + encodeURIComponent(id)); }
      catch (e) {
        if (shown.id !== id) return;
        clear(box); box.hidden = false; box.appendChild(el("p", "error", e.message)); return;
      }
      if (shown.id !== id) return;
      render(d);
    }

    // render draws task d; message, when set, is the outcome of the
    // last action (an error stays until the owner shows the task again).
    function render(d, message, failed) {
      const box = $("task-detail");
      clear(box);
      box.hidden = false;
      box.setAttribute("data-task-id", d.id);
      box.setAttribute("data-status", d.status);
      const h = elm("h2", null, t("Task %s", d.name) + " ");
      h.appendChild(statusBadge(d.status));
      box.appendChild(h);
      if (d.problem) box.appendChild(elm("p", "task-problem", d.problem));
      const dl = el("dl", "facts");
      function fact(k, v, cls) {
        dl.appendChild(el("dt", null, k));
        const dd = elm("dd", cls, v);
        dl.appendChild(dd);
        return dd;
      }
      fact(t("Id"), d.id, "sid");
      fact(t("From"), originText(d.origin) || d.origin || "", "task-from");
      fact(t("Schedule"), d.schedule);
      // The blast ceiling: above it a run's call is refused, never asked.
      fact(t("Ceiling"), d.ceiling || t("none (sealed before ceilings)"), "task-ceiling");
      if (d.next && d.next.length) fact(t("Next runs"), d.next.map(fmtTime).join(", "));
      fact(t("Body hash"), d.hash, "hash task-hash");
      if (d.seal) fact(t("Seal"), d.seal, "hash task-seal");
      if (d.seal_if_approved && d.seal_if_approved !== d.seal) fact(t("Seal if approved"), d.seal_if_approved, "hash task-seal-next");
      if (d.approved_at) fact(t("Approved"), fmtTime(d.approved_at));
      if (d.expires_at) fact(t("Approval ends"), fmtTime(d.expires_at));
      box.appendChild(dl);
      box.appendChild(el("p", "label", t("Exactly what you approve (the task's body, as stored):")));
      box.appendChild(elm("pre", "task-body", d.body, true));

      const actions = el("div", "actions");
      const outcome = el("p", failed ? "outcome error" : "outcome", message || "");
      outcome.setAttribute("role", "status");
      // act adds a button that posts path; body is the request body, or
      // a function that makes it when the button is pressed.
      function act(label, path, body, cls) {
        const b = button(label, async function () {
          for (const x of actions.querySelectorAll("button")) x.disabled = true;
          try {
            const req = typeof body === "function" ? body() : (body || {});
            const next = await api("POST", "/api/tasks/" + encodeURIComponent(d.id) + path, req);
            if (shown.id === d.id) render(next, t("%s: done.", label)); // unless another task was opened meanwhile
            loadList();
          } catch (e) {
            for (const x of actions.querySelectorAll("button")) x.disabled = false;
            outcome.className = "outcome error";
            outcome.textContent = e.message + (e.status === 409 ? t(" — Show it again to read the task as it is now.") : "");
          }
        }, cls);
        b.setAttribute("data-action", path.slice(1));
        actions.appendChild(b);
        return b;
      }
      // The body was changed since it was sealed: it may be approved again.
      const changed = d.seal && d.seal_if_approved && d.seal !== d.seal_if_approved;
      if (d.status === "pending" || (changed && d.status !== "removed")) {
        // The hash shown above, not the task as it may be by now.
        act(t("Approve body %s", String(d.hash).slice(0, 12)), "/approve", { hash: d.hash }, "approve");
      }
      if (d.status === "active") act(t("Pause"), "/pause");
      if (d.status === "paused") act(t("Resume"), "/resume", undefined, "approve");
      if (d.status === "active" || d.status === "paused") {
        const days = el("input", "renew-days");
        days.type = "number"; days.min = "1"; days.max = "366"; days.value = "10";
        days.setAttribute("aria-label", t("Renew for how many days"));
        actions.appendChild(days);
        act(t("Renew (days)"), "/renew", function () { return { expires: (days.value || "10") + "d" }; });
      }
      if (d.status !== "removed") act(t("Remove"), "/remove", undefined, "deny");
      actions.appendChild(button(t("Show again"), function () { show(d.id); }));
      box.appendChild(actions);
      box.appendChild(outcome);
      box.appendChild(runsTable(d.runs || []));
    }

    function runsTable(runs) {
      const wrap = el("div", "runs-wrap");
      wrap.appendChild(el("h3", null, t("Last runs")));
      if (!runs.length) { wrap.appendChild(el("p", "empty", t("No runs yet."))); return wrap; }
      const table = el("table", "runs");
      const head = el("tr");
      for (const c of [t("Slot"), t("Status"), t("Started"), t("Ended"), t("Tokens"), t("Summary or error"), t("Refused calls"), t("Delivery")]) head.appendChild(el("th", null, c));
      const thead = el("thead");
      thead.appendChild(head);
      table.appendChild(thead);
      const tbody = el("tbody");
      for (const r of runs) {
        const tr = el("tr", "run status-" + String(r.status || "").replace(/[^a-z]/g, ""));
        tr.setAttribute("data-run-id", String(r.id));
        tr.appendChild(el("td", null, fmtTime(r.slot_at)));
        tr.appendChild(el("td", "run-status", r.status));
        tr.appendChild(el("td", null, fmtTime(r.started_at)));
        tr.appendChild(el("td", null, r.ended_at ? fmtTime(r.ended_at) : t("running")));
        tr.appendChild(el("td", "num", String(r.tokens || 0)));
        tr.appendChild(elm("td", r.error ? "run-result error" : "run-result", r.error || r.summary, true));
        tr.appendChild(elm("td", r.refused ? "run-refused error" : "run-refused", r.refused || "", true));
        const dv = elm("td", "run-delivery", deliveryText(r));
        if (r.delivery_state === "failed") dv.classList.add("error");
        tr.appendChild(dv);
        tbody.appendChild(tr);
      }
      table.appendChild(tbody);
      wrap.appendChild(table);
      return wrap;
    }

    // changed handles task_changed {task_id, status} on the live
    // updates. The open task is drawn again when its status is not the
    // one shown (another tab acted); this page's own action, already
    // drawn with its outcome, is left as it is.
    function changed(d) {
      if ($("view-tasks").hidden) return;
      loadList();
      const box = $("task-detail");
      if (d && shown.id === d.task_id && box.getAttribute("data-status") !== d.status) show(d.task_id);
    }

    // ---------- adding a task ----------

    const form = $("task-add");
    const whenHint = {
      every: { type: "text", placeholder: "1d, 6h, 90m", label: t("Every how long") },
      at: { type: "datetime-local", placeholder: "2026-12-24T08:00", label: t("At what time (in the time zone)") },
      cron: { type: "text", placeholder: "0 9 * * 1", label: t("Cron expression, 5 fields (in the time zone)") },
    };

    // syncForm fits the fields to the choices: the kind of schedule, a
    // reminder (no tools), a list of tools.
    function syncForm() {
      const kind = $("task-when").value;
      const v = $("task-when-value"), hint = whenHint[kind] || whenHint.every;
      if (v.type !== hint.type) { v.value = ""; v.type = hint.type; }
      v.placeholder = hint.placeholder;
      v.setAttribute("aria-label", hint.label);
      $("task-tz").disabled = kind === "every"; // every counts in UTC from now
      const remind = $("task-remind").checked;
      $("task-tools-mode").disabled = remind;
      $("task-tools").disabled = remind || $("task-tools-mode").value !== "list";
    }

    function openForm(open) {
      form.hidden = !open;
      $("task-add-open").setAttribute("aria-expanded", open ? "true" : "false");
      if (!open) return;
      // A local time means the browser's zone unless the owner says otherwise.
      if (!$("task-tz").value) {
        try { $("task-tz").value = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* leave it empty: automation.tz */ }
      }
      syncForm();
      $("task-name").focus();
    }

    // request is the form as POST /api/tasks takes it: what is left
    // empty is left out, for the server's defaults.
    function request() {
      const req = { name: $("task-name").value.trim(), prompt: $("task-prompt").value };
      const kind = $("task-when").value;
      req[kind] = $("task-when-value").value.trim();
      const tz = $("task-tz").value.trim();
      if (tz && kind !== "every") req.tz = tz;
      if ($("task-remind").checked) {
        req.remind = true;
      } else if ($("task-tools-mode").value === "none") {
        req.tools = [];
      } else if ($("task-tools-mode").value === "list") {
        req.tools = $("task-tools").value.split(/[\s,]+/).filter(Boolean);
      }
      for (const k of ["deliver", "mode", "ceiling", "expires"]) {
        const v = $("task-" + k).value.trim();
        if (v) req[k] = v;
      }
      return req;
    }

    async function submit(e) {
      e.preventDefault();
      const outcome = $("task-add-outcome");
      const send = $("task-add-submit");
      outcome.className = "outcome";
      outcome.textContent = "";
      send.disabled = true;
      let d;
      try { d = await api("POST", "/api/tasks", request()); }
      catch (err) {
        outcome.className = "outcome error";
        outcome.textContent = err.message;
        send.disabled = false;
        return;
      }
      send.disabled = false;
      form.reset();
      $("task-deliver").value = "web";
      openForm(false);
      shown.id = d.id;
      render(d, t("Added, pending: nothing runs until you approve this body.") + (d.warning ? t(" Warning: %s", d.warning) : ""), !!d.warning);
      loadList();
      const box = $("task-detail");
      box.scrollIntoView({ block: "start" });
    }

    $("task-add-open").addEventListener("click", function () { openForm(form.hidden); });
    $("task-add-cancel").addEventListener("click", function () { openForm(false); });
    for (const id of ["task-when", "task-remind", "task-tools-mode"]) $(id).addEventListener("change", syncForm);
    form.addEventListener("submit", submit);

    return { load: load, changed: changed };
  }

  Object.defineProperty(window, "homardTasks", { value: tasksView, writable: false, configurable: false });
})();
