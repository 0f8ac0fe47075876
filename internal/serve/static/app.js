// ralph serve: live updates over Server-Sent Events, and the buttons.
// No framework, no build step.
"use strict";
(() => {
  const meta = (n) => document.querySelector(`meta[name="${n}"]`)?.content || "";
  // The token, for actions: from the page when the request carried it,
  // else as the printed URL's redirect left it in the address's fragment,
  // kept in this dashboard's (this origin's) local storage.
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    try { localStorage.setItem("ralph-token", fromHash); } catch (_) {}
    history.replaceState(null, "", location.pathname + location.search);
  }
  let stored = "";
  try { stored = localStorage.getItem("ralph-token") || ""; } catch (_) {}
  const token = meta("ralph-token") || fromHash || stored;
  let lastEvent = meta("ralph-last-event") || "0";
  const toast = (msg, ok) => {
    let t = document.getElementById("toast");
    if (!t) {
      t = document.createElement("p");
      t.id = "toast";
      t.setAttribute("role", "status");
      document.querySelector("main").prepend(t);
    }
    t.textContent = msg;
    t.className = "card result " + (ok ? "ok" : "err");
  };

  // Fragments: parts of the page re-fetched when the store changes.
  const ids = (root) => [...root.querySelectorAll("[data-request]")].map((e) => e.dataset.request).join(",");
  // What someone has typed or picked survives a refresh: fields are keyed
  // by their form (its workflow and request: two workflows may both wait
  // on a request 1) and name.
  const fieldKey = (inp) => {
    const f = inp.closest("form");
    return (f ? [f.id, f.dataset.workflow || "", f.dataset.requestId || ""].join(":") : "") + "/" + inp.name;
  };
  async function refreshFragments() {
    for (const el of document.querySelectorAll("[data-fragment]")) {
      try {
        const res = await fetch(el.dataset.fragment, { credentials: "same-origin" });
        if (!res.ok) continue;
        const html = await res.text();
        const tpl = document.createElement("template");
        tpl.innerHTML = html;
        if (el.id === "pending" && ids(tpl.content) === ids(el) && el.contains(document.activeElement)) continue;
        const saved = new Map();
        let focused = null;
        for (const inp of el.querySelectorAll("input[name], select[name]")) {
          if (inp.value) saved.set(fieldKey(inp), inp.value);
          if (inp === document.activeElement) focused = fieldKey(inp);
        }
        el.replaceChildren(tpl.content);
        for (const inp of el.querySelectorAll("input[name], select[name]")) {
          const k = fieldKey(inp);
          const v = saved.get(k);
          if (v !== undefined && (inp.tagName !== "SELECT" || [...inp.options].some((o) => o.value === v))) inp.value = v;
          if (k === focused) inp.focus();
        }
        tick();
      } catch (e) { /* the next change retries */ }
    }
  }
  let pendingRefresh = null;
  const scheduleRefresh = () => {
    if (pendingRefresh) return;
    pendingRefresh = setTimeout(() => { pendingRefresh = null; refreshFragments(); }, 150);
  };

  // Events: new rows go on top of the live list, when they match its filters.
  function addEvent(ev) {
    const list = document.getElementById("events");
    if (!list || list.dataset.live === undefined || !ev.html) return;
    if (list.querySelector(`[data-id="${ev.id}"]`)) return;
    const f = list.dataset;
    if (f.filterKind && f.filterKind !== ev.kind) return;
    if (f.filterSource && f.filterSource !== ev.source) return;
    if (f.filterQ) {
      const hay = [ev.text, ev.tool, ev.data].join(" ").toLowerCase();
      if (!hay.includes(f.filterQ.toLowerCase())) return;
    }
    const tpl = document.createElement("template");
    tpl.innerHTML = ev.html.trim();
    const li = tpl.content.firstElementChild;
    if (!li) return;
    li.classList.add("new");
    list.prepend(li);
    const cap = parseInt(f.live, 10);
    if (cap > 0) while (list.children.length > cap) list.lastElementChild.remove();
  }

  // Notifications, opt-in.
  const notifyButton = document.getElementById("notify");
  if (notifyButton && "Notification" in window && Notification.permission !== "granted" && Notification.permission !== "denied") {
    notifyButton.hidden = false;
    notifyButton.addEventListener("click", async () => {
      const p = await Notification.requestPermission();
      notifyButton.hidden = p === "granted" || p === "denied";
    });
  }
  const notify = (title, body) => {
    if ("Notification" in window && Notification.permission === "granted") {
      try { new Notification(title, { body, tag: "ralph" }); } catch (e) { /* not allowed here */ }
    }
  };

  // The stream.
  const live = document.getElementById("live");
  const setLive = (cls, label) => {
    if (!live) return;
    live.className = "live " + cls;
    live.querySelector(".live-label").textContent = " " + label;
  };
  let state = null;
  function connect() {
    const es = new EventSource(`/api/events/stream?html=1&after=${encodeURIComponent(lastEvent)}`);
    es.addEventListener("open", () => setLive("on", "live"));
    es.addEventListener("error", () => setLive("off", "reconnecting"));
    es.addEventListener("event", (m) => {
      lastEvent = m.lastEventId || lastEvent;
      try { addEvent(JSON.parse(m.data)); } catch (e) { /* skip a bad message */ }
    });
    es.addEventListener("state", (m) => {
      const s = JSON.parse(m.data);
      // Always refresh: on a reconnect something may have changed unseen.
      scheduleRefresh();
      if (state) {
        if (s.pending > state.pending) notify("ralph is waiting for you", `${s.pending} request(s) pending`);
        if (state.running && !s.running) notify("ralph run ended", s.workflow ? `workflow ${s.workflow}: ${s.task_status}` : `task ${s.task}: ${s.reason || s.task_status}`);
      }
      state = s;
    });
  }
  if (window.EventSource) connect();

  // Clocks: how long a request has waited, how long until a timeout.
  const fmt = (ms) => {
    let s = Math.max(0, Math.round(ms / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s %= 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + s + "s";
  };
  function tick() {
    const now = Date.now();
    for (const e of document.querySelectorAll("[data-since]")) e.textContent = fmt(now - Date.parse(e.dataset.since));
    for (const e of document.querySelectorAll("[data-until]")) e.textContent = fmt(Date.parse(e.dataset.until) - now);
  }
  tick();
  setInterval(tick, 1000);

  // Actions.
  async function post(url, body, form) {
    const out = form.querySelector(".result");
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    try {
      const res = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const data = await res.json().catch(() => ({}));
      const msg = res.ok ? (data.message || "done") : (data.error || res.statusText);
      if (out) { out.textContent = msg; out.className = "result " + (res.ok ? "ok" : "err"); }
      if (res.ok) toast(msg, true);
      return res.ok;
    } catch (e) {
      if (out) { out.textContent = String(e); out.className = "result err"; }
      return false;
    } finally {
      for (const b of form.querySelectorAll("button")) b.disabled = !token;
      scheduleRefresh();
    }
  }
  document.addEventListener("submit", (e) => {
    const form = e.target;
    if (form.matches("form.answer")) {
      e.preventDefault();
      const verdict = e.submitter?.value === "reject" ? "reject" : "approve";
      const response = form.elements.response?.value || "";
      const body = { response };
      if (form.dataset.workflow) body.workflow = form.dataset.workflow;
      post(`/api/pending/${form.dataset.requestId}/${verdict}`, body, form);
    } else if (form.matches("form.stop")) {
      e.preventDefault();
      const body = { reason: form.elements.reason?.value || "" };
      if (form.dataset.workflow) body.workflow = form.dataset.workflow;
      post("/api/stop", body, form);
    } else if (form.id === "rollback-form") {
      e.preventDefault();
      post(`/api/snapshots/${encodeURIComponent(form.dataset.snapshot)}/rollback`, {}, form);
    }
  });
})();

// The Preview page: reload the app's frame (not the page) when the
// bundle changes.
(() => {
  const frame = document.getElementById("preview-frame");
  if (!frame) return;
  const error = document.getElementById("preview-error");
  setInterval(async () => {
    try {
      const res = await fetch("/api/preview", { credentials: "same-origin" });
      const state = await res.json();
      if (error) {
        error.hidden = !state.error;
        error.textContent = state.error ? "The app does not build: " + state.error : "";
      }
      if (state.version && state.version !== frame.dataset.version) {
        frame.dataset.version = state.version;
        frame.src = state.url + "/?v=" + state.version;
      }
    } catch (e) { /* the dashboard is restarting */ }
  }, 1000);
})();
