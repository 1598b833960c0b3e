// Halo Studio: live updates, in plain JavaScript with no build step. Every page reads
// without it; this only keeps the page current while runs change.
"use strict";

// swapParts fetches the page again and replaces each [data-part] whose data-key changed,
// keeping open folds, focus and what is being typed.
async function swapParts() {
  const res = await fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
  if (!res.ok) return false;
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  for (const fresh of doc.querySelectorAll("[data-part]")) {
    const old = document.getElementById(fresh.id);
    if (!old || old.dataset.key === fresh.dataset.key) continue;
    if (old.contains(document.activeElement) && document.activeElement.matches("textarea, input, select")) {
      const v = document.activeElement.value;
      if (v !== "" && old.id === "wait" && fresh.querySelector("form.answer")) continue; // still waiting: keep what is typed
    }
    const open = new Set([...old.querySelectorAll("details[open]")].map(keyOf));
    const focused = document.activeElement && old.contains(document.activeElement) ? keyOf(document.activeElement) : null;
    for (const d of fresh.querySelectorAll("details")) if (open.has(keyOf(d))) d.open = true;
    old.replaceWith(document.adoptNode(fresh));
    if (focused) {
      const el = [...fresh.querySelectorAll("a, button, summary, textarea, input, select")].find(e => keyOf(e) === focused);
      if (el) el.focus();
    }
  }
  return true;
}

// keyOf names an element by where it is among its kind under its entry or part.
function keyOf(el) {
  const home = el.closest("[id]");
  const same = home ? [...home.querySelectorAll(el.tagName)] : [];
  return (home ? home.id : "") + ":" + el.tagName + ":" + same.indexOf(el);
}

// followRun listens to the run's events (the API's stream, through Studio) and refreshes
// the parts of the page that changed, at most a few times a second.
function followRun(el) {
  const es = new EventSource(el.dataset.events);
  let busy = false, again = false, over = false;
  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try { await swapParts(); } catch (e) { /* the next event tries again */ }
    busy = false;
    if (again) { again = false; setTimeout(refresh, 250); }
  };
  const onEvent = (ev) => {
    if (ev.type === "run") { over = true; es.close(); }
    refresh();
  };
  for (const t of ["llm", "tool", "agent_tool", "violation", "loop", "branch", "stage", "paused", "answered", "run", "message"]) {
    es.addEventListener(t, onEvent);
  }
  es.addEventListener("error", () => { if (over) es.close(); });
  window.addEventListener("pagehide", () => es.close());
}

// followList listens to Studio's stream of the runs list and swaps in the new rows.
function followList(el) {
  const es = new EventSource(el.dataset.liveList);
  es.addEventListener("runs", (ev) => {
    const focused = document.activeElement && el.contains(document.activeElement) ? document.activeElement.id : "";
    el.innerHTML = ev.data;
    if (focused) {
      const again = document.getElementById(focused);
      if (again) again.focus();
    }
  });
  es.addEventListener("problem", () => es.close());
  window.addEventListener("pagehide", () => es.close());
}

document.addEventListener("DOMContentLoaded", () => {
  const run = document.querySelector("[data-events]");
  if (run) followRun(run);
  const list = document.querySelector("[data-live-list]");
  if (list) followList(list);
});
