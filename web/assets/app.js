// etwemu web: draws the scenario language's views (their JSON) as HTML and SVG.
// Plain JavaScript, no library, nothing loaded from elsewhere. Every drawn value that a
// view holds carries data-k, its key, so that what changed between two steps can be
// highlighted and a test can compare the page with the views.
"use strict";

const state = {
  lessons: [], lesson: "", typed: [], step: 0, total: 0,
  frame: null, prev: new Map(), selected: null, live: false, liveTimer: 0, busy: false, queued: null, delta: 0,
};

const SVGNS = "http://www.w3.org/2000/svg";
const palette = ["#3d7fd9", "#d9603d", "#2f9e6e", "#9b59b6", "#c9a227", "#1aa3b8", "#d14d8a", "#6b7d2a"];
const loggerColor = (id) => palette[Number(id) % palette.length];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}

// val draws one value of a view, keyed: the key is what highlighting and tests use.
function val(key, value, cls) {
  return el("span", { "data-k": key, class: cls }, String(value));
}

// shown is a name or a command as the page shows it, as the text output does
// (quote.Shown): what a terminal or the text's direction would act on escaped (control
// characters but the tab, the bidirectional overrides that reorder a line), and past most
// characters (64 for a name) cut, saying how long it was, so that a long name does not
// widen the page.
function shown(s, most = 64) {
  s = String(s);
  const cut = s.length > most ? s.slice(0, most) : s;
  const esc = cut.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const h = c.charCodeAt(0).toString(16);
    return c.charCodeAt(0) < 0x80 ? "\\x" + h.padStart(2, "0") : "\\u" + h.padStart(4, "0");
  });
  return cut === s ? esc : `${esc}… (${s.length} characters)`;
}

const hex = (n, w) => "0x" + Number(n).toString(16).padStart(w || 1, "0");
const bits8 = (n) => Number(n).toString(2).padStart(8, "0");

async function api(path, body) {
  const r = await fetch(path, body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error((await r.text()).trim() || r.statusText);
  return r.json();
}

// ---- the kernel's picture ----

function drawKernel(v) {
  document.getElementById("kernel").textContent =
    `Windows ${v.version}, ${v.processors} processor${v.processors === 1 ? "" : "s"}` + (state.live ? ", live: logger goroutines and real clocks" : ", synchronous kernel with a manual clock");
  const loggers = document.getElementById("loggers");
  loggers.replaceChildren();
  const rows = v.strdump || [];
  if (rows.length === 0) loggers.append(el("p", { class: "empty" }, "No logger is running."));
  const cards = el("div", { class: "cards" });
  for (const row of rows) cards.append(drawLogger(row, v.loggers[String(row.loggerId)] || {}, v.processors));
  loggers.append(cards);
  drawProviders(v);
  drawFiles(v.files || []);
}

function drawLogger(row, lv, nproc) {
  const id = row.loggerId;
  const k = `logger.${id}`;
  const bufs = lv.bufdump || [];
  const size = row.bufferSize;
  const card = el("article", { class: "card click", "data-select": `logger:${id}`, tabindex: 0, role: "button",
    "aria-label": `logger ${id} ${row.name}: show its ${row.kind === "private logger" ? "ETW_UM_LOGGER_CONTEXT" : "WMI_LOGGER_CONTEXT"}`,
    style: `border-top: 5px solid ${loggerColor(id)}` });
  card.append(el("h3", {}, val(`${k}.name`, shown(row.name)), el("small", {}, "LoggerId ", val(`${k}.id`, id), " · ", val(`${k}.mode`, row.loggerMode), " · ", row.kind, " · ", size / 1024, " KB buffers")));
  const counters = el("dl", { class: "counters" });
  for (const [name, field, bad] of [["EventsLost", "eventsLost", true], ["BuffersWritten", "buffersWritten", false],
    ["LogBuffersLost", "logBuffersLost", true], ["RealTimeBuffersLost", "realTimeBuffersLost", true],
    ["NumberOfBuffers", "numberOfBuffers", false], ["FreeBuffers", "freeBuffers", false], ["PeakBuffers", "peakBuffers", false]]) {
    counters.append(el("div", {}, el("dt", {}, name), el("dd", { class: bad && row[field] > 0 ? "bad" : "" }, val(`${k}.${field}`, row[field]))));
  }
  card.append(counters);
  // Each processor's current buffer as a fill bar.
  const byId = new Map(bufs.map((b) => [b.id, b]));
  const current = bufs.filter((b) => b.current);
  for (let p = 0; p < nproc; p++) {
    const b = current.find((x) => x.stream === p);
    const line = el("div", { class: "proc" }, el("span", { class: "label" }, `CPU ${p}`));
    if (!b) {
      line.append(el("span", { class: "off" }, "no current buffer"), el("span"));
    } else {
      const bar = fillBar(b.currentOffset, size, loggerColor(id), `processor ${p}'s current buffer ${b.id} (${b.stateName}): ${b.currentOffset} of ${size} bytes`);
      bar.setAttribute("data-k", `buf.${id}.${b.id}.state`);
      bar.setAttribute("data-v", b.stateName);
      line.append(bar,
        el("span", { class: "off" }, "buffer ", val(`cur.${id}.${p}`, b.id), " @ ", val(`buf.${id}.${b.id}.offset`, hex(b.currentOffset)), ` / ${hex(size)}`));
    }
    card.append(line);
  }
  const free = bufs.filter((b) => b.stateName === "Free");
  const flush = bufs.filter((b) => b.stateName === "Flush");
  const other = bufs.filter((b) => !b.current && b.stateName !== "Free" && b.stateName !== "Flush");
  const lists = el("div", { class: "lists" });
  const list = (label, items, cls, empty) => {
    lists.append(el("span", { class: "label", title: cls === "free" ? "buffers in state Free: the free list, and the spares the emulator keeps per processor" : cls === "flush" ? "buffers in state Flush: full, waiting for the logger to hand them on" : "buffers writers hold that are not current" }, label, " (", val(`${k}.${cls}list`, items.length), ")"),
      el("div", { class: "bufs" }, items.length ? items.map((b) => bufCell(b, size, cls, id)) : el("span", { class: "empty" }, empty)));
  };
  list("Free", free, "free", "none: a writer that needs a buffer now loses its event");
  list("Flush", flush, "flush", "none");
  if (other.length) list("In use", other, "inuse", "");
  card.append(lists);
  const dest = el("div", { class: "dest" }, el("span", { class: "label" }, "Full buffers go"), el("span", { class: "arrow" }, "→"));
  const ds = row.destinations || [];
  if (ds.length === 0) dest.append(el("span", { class: "pill none" }, "nowhere"));
  ds.forEach((d, i) => dest.append(el("span", { class: "pill", "data-k": `${k}.dest.${i}` }, d)));
  card.append(dest);
  return card;
}

function fillBar(used, size, color, label) {
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("class", "bar");
  svg.setAttribute("viewBox", "0 0 200 18");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  const frac = size > 0 ? Math.min(1, used / size) : 0;
  const hdr = size > 0 ? 0x48 / size : 0;
  const rect = (x, w, fill, op) => {
    const r = document.createElementNS(SVGNS, "rect");
    r.setAttribute("x", x); r.setAttribute("y", 1); r.setAttribute("width", Math.max(0, w)); r.setAttribute("height", 16);
    r.setAttribute("rx", 2); r.setAttribute("fill", fill); if (op) r.setAttribute("fill-opacity", op);
    svg.append(r);
  };
  rect(0, 200, "#eef0f3");
  rect(0, 200 * frac, color, ".75");
  rect(0, 200 * hdr, "#6b7786", ".8");
  const t = document.createElementNS(SVGNS, "title");
  t.textContent = label;
  svg.append(t);
  return svg;
}

function bufCell(b, size, cls, id) {
  // A free buffer holds nothing, whatever offset its last use left in its header.
  const frac = size > 0 && cls !== "free" ? Math.min(1, b.currentOffset / size) : 0;
  return el("div", { class: `buf ${cls}`, title: `buffer ${b.id}, ${b.stateName}, processor ${b.stream}, CurrentOffset ${hex(b.currentOffset)}, ${b.records} records`, "data-k": `buf.${id}.${b.id}.state`, "data-v": b.stateName },
    el("div", { class: "lvl", style: `height:${Math.round(frac * 100)}%` }), el("span", {}, b.id));
}

function drawProviders(v) {
  const host = document.getElementById("providers");
  host.replaceChildren();
  const guids = v.guids || [];
  const regs = v.regs || [];
  if (guids.length === 0 && regs.length === 0) {
    host.append(el("p", { class: "empty" }, "No provider registered or enabled."));
    return;
  }
  const cards = el("div", { class: "cards" });
  const seen = new Set();
  for (const g of guids) {
    seen.add(g.guid);
    cards.append(drawProvider(g, regs.filter((r) => r.guid === g.guid && r.registered)));
  }
  for (const r of regs) {
    if (!seen.has(r.guid)) cards.append(drawProvider(null, r.registered ? [r] : [], r));
  }
  host.append(cards);
}

function drawProvider(g, regs, alone) {
  const name = g ? (g.provider || g.guid) : alone.provider;
  const guid = g ? g.guid : alone.guid;
  const card = el("article", { class: "card" });
  card.append(el("h3", {}, shown(name), el("small", {}, guid)));
  const slotOf = new Map();
  if (g) {
    for (const s of g.slots) slotOf.set(s.slot, s);
    const entry = el("div", { class: "click", "data-select": `guid:${name}`, tabindex: 0, role: "button", "aria-label": `${name}'s ETW_GUID_ENTRY: show it as dt does` });
    entry.append(el("div", { class: "rowlabel" }, `ETW_GUID_ENTRY (${g.type}) · RefCount `, val(`guid.${guid}.refCount`, g.refCount), " · ", g.registrations, " registrations · EnableInfo[8]"));
    const slots = el("div", { class: "slots" });
    for (let i = 0; i < 8; i++) {
      const s = slotOf.get(i);
      const regBit = regs.some((r) => (r.enableMask >> i) & 1);
      const mismatch = regs.length > 0 && (!!s !== regBit);
      const cell = el("div", { class: "slot" + (s ? " on" : "") + (mismatch ? " mismatch" : ""), "data-k": `guid.${guid}.slot.${i}`, "data-v": s ? `L${s.loggerId}` : "free",
        style: s ? `border-color:${loggerColor(s.loggerId)}` : "", title: mismatch ? "this slot and the registrations' EnableMask bit disagree: something wrote one behind the kernel's back" : "" },
      el("div", { class: "n" }, `[${i}]`));
      if (s) {
        cell.append(el("div", {}, "Logger ", val(`guid.${guid}.slot.${i}.logger`, s.loggerId)),
          el("div", {}, "Level ", val(`guid.${guid}.slot.${i}.level`, s.level)),
          el("div", { title: `MatchAnyKeyword ${s.matchAnyKeyword}, MatchAllKeyword ${s.matchAllKeyword}` }, "Any ", val(`guid.${guid}.slot.${i}.any`, s.matchAnyKeyword)));
      } else {
        cell.append(el("div", { class: "n" }, "free"));
      }
      slots.append(cell);
    }
    entry.append(slots);
    card.append(entry);
  }
  const list = regs.length ? regs : (alone ? [alone] : []);
  for (const r of list) {
    const reg = el("div", { class: "click", "data-select": `reg:${r.provider}`, tabindex: 0, role: "button", "aria-label": `${r.provider}'s ETW_REG_ENTRY: show it as dt does` });
    if (!r.registered) {
      reg.append(el("div", { class: "rowlabel" }, `${shown(r.provider)}: not registered (a session may enable it before it registers)`));
      card.append(reg);
      continue;
    }
    reg.append(el("div", { class: "rowlabel" }, `ETW_REG_ENTRY index ${r.index} · EnableMask `, val(`reg.${r.provider}.enableMask`, "0b" + bits8(r.enableMask)),
      " · GroupEnableMask ", val(`reg.${r.provider}.groupEnableMask`, "0b" + bits8(r.groupEnableMask))));
    const bits = el("div", { class: "bits", role: "img", "aria-label": `EnableMask bits of ${r.provider}, bit 0 first` });
    for (let i = 0; i < 8; i++) {
      const on = (r.enableMask >> i) & 1;
      const s = slotOf.get(i);
      const mismatch = !!g && (!!s !== !!on);
      bits.append(el("div", { class: "bit" + (on ? " on" : "") + (mismatch ? " mismatch" : ""), "data-k": `reg.${r.provider}.bit.${i}`,
        style: on ? `background:${s ? loggerColor(s.loggerId) : "#c8402f"}` : "", title: `bit ${i}` + (s ? `: slot ${i}, logger ${s.loggerId}` : "") }, on ? "1" : "0"));
    }
    reg.append(bits);
    if (r.groupEnableMask) {
      const gb = el("div", { class: "bits" });
      for (let i = 0; i < 8; i++) {
        const on = (r.groupEnableMask >> i) & 1;
        gb.append(el("div", { class: "bit" + (on ? " on" : ""), "data-k": `reg.${r.provider}.groupbit.${i}`, style: on ? "background:#6b7d2a" : "" }, on ? "1" : "0"));
      }
      reg.append(el("div", { class: "rowlabel" }, "GroupEnableMask"), gb);
    }
    card.append(reg);
  }
  if (card.querySelector(".mismatch")) {
    card.append(el("p", { class: "warn" }, "The GUID entry's slots and the registration's EnableMask disagree: the kernel keeps them equal, so something wrote one of them behind its back."));
  }
  return card;
}

function drawFiles(files) {
  const host = document.getElementById("files");
  host.replaceChildren();
  if (files.length === 0) {
    host.append(el("p", { class: "empty" }, "No log file yet."));
    return;
  }
  const cards = el("div", { class: "cards files" });
  for (const f of files) {
    const card = el("article", { class: "card" });
    card.append(el("h3", {}, val(`file.${f.name}.name`, shown(f.name)), el("small", {}, val(`file.${f.name}.size`, f.size), " bytes · ", val(`file.${f.name}.buffers`, f.buffers.length + (f.moreBuffers || 0)), f.buffers.length + (f.moreBuffers || 0) === 1 ? " buffer" : " buffers")));
    const strip = el("div", { class: "strip" });
    f.buffers.forEach((b, i) => {
      const frac = b.bufferSize > 0 ? Math.min(1, b.filled / b.bufferSize) : 0;
      const cls = i === 0 ? "header" : (i === f.wrapAt ? "oldest" : "");
      strip.append(el("div", { class: `buf ${cls}`, "data-k": `file.${f.name}.buf.${i}`, "data-v": b.sequenceNumber,
        title: i === 0 ? "the header buffer: TRACE_LOGFILE_HEADER" : `at ${hex(b.fileOffset)}: processor ${b.processor}, sequence ${b.sequenceNumber}, ${b.filled} of ${b.bufferSize} bytes` + (i === f.wrapAt ? " — the oldest: the file wrapped here" : "") },
      el("div", { class: "lvl", style: `height:${Math.round(frac * 100)}%` }), el("span", {}, i === 0 ? "H" : b.sequenceNumber)));
    });
    card.append(strip);
    if (f.wrapAt === 1) card.append(el("p", { class: "warn" }, "Circular: the logger wrapped and came round to the start again; buffer 1 (dashed) is the oldest, so the file reads in order, but the buffers before it were overwritten."));
    else if (f.wrapAt > 0) card.append(el("p", { class: "warn" }, `Circular: the logger wrapped to the start; buffer ${f.wrapAt} (dashed) is the oldest, the ones before it are newer.`));
    if (f.moreBuffers) card.append(el("p", { class: "hint" }, `and ${f.moreBuffers} more buffers`));
    if (f.error) card.append(el("p", { class: "warn" }, f.error));
    cards.append(card);
  }
  host.append(cards);
}

// ---- dt panel ----

function drawDT() {
  const host = document.getElementById("dt");
  host.replaceChildren(el("h2", {}, "dt"));
  for (const c of document.querySelectorAll(".selected")) c.classList.remove("selected");
  const v = state.frame && state.frame.views;
  if (!state.selected || !v) {
    host.append(el("p", { class: "hint" }, "Click a logger, a GUID entry or a registration to see it as dt shows it, with its live values."));
    return;
  }
  const [kind, key] = state.selected.split(/:(.*)/s);
  // Own keys only: a key from the address such as "toString" names nothing.
  const own = (o) => (o && Object.hasOwn(o, key) ? o[key] : null);
  let s = null;
  if (kind === "logger") s = own(v.loggers) && own(v.loggers).logger;
  if (kind === "guid") s = own(v.guid);
  if (kind === "reg") s = own(v.reg);
  const node = document.querySelector(`[data-select="${CSS.escape(state.selected)}"]`);
  if (node) node.classList.add("selected");
  if (!s) {
    host.append(el("p", { class: "hint" }, `${state.selected.replace(":", " ")} is gone at this step.`));
    return;
  }
  host.append(el("p", {}, el("b", {}, "_" + s.structure), kind === "logger" ? ` of logger ${key}` : ` of ${key}`, s.layoutKnown ? ` (${s.offsets || "x64 offsets from the layout catalogue"})` : " (offsets unknown for this version)"));
  const t = el("table", { class: "dt" });
  for (const f of s.fields) {
    t.append(el("tr", {}, el("td", { class: "o" }, f.offset >= 0 ? "+" + hex(f.offset, 3) : "+?"), el("td", {}, f.name), el("td", { class: "v" }, val(`dt.${f.name}`, f.value))));
  }
  host.append(t);
}

// ---- the steps ----

// outputBlocks splits a command's output into what wraps and what must not: a table's
// lines (columns aligned by runs of two or more spaces, as the text views print them)
// go in a block of their own that keeps its lines whole and scrolls sideways, so that
// a table wider than the steps panel keeps its columns; the other lines wrap.
function outputBlocks(text) {
  const blocks = [];
  let lines = [], table = false;
  const flush = () => {
    if (lines.length) blocks.push(table ? el("span", { class: "table" }, lines.join("\n")) : lines.join("\n"));
    lines = [];
  };
  for (const line of text.split("\n")) {
    const t = line === "" ? table : /\S {2,}\S/.test(line); // a blank line stays with its block
    if (t !== table) flush();
    table = t;
    lines.push(line);
  }
  flush();
  return blocks;
}

function drawStory(f) {
  const now = document.getElementById("now");
  now.replaceChildren();
  const last = f.ran[f.ran.length - 1];
  if (!last) {
    now.append(el("p", { class: "comment" }, f.title), el("p", { class: "hint" }, "Press Step (or the \u2192 key) to run the first command, Back (\u2190) to undo one; click a step to go to it."));
  } else {
    for (const para of paragraphs(last.comment)) now.append(el("p", { class: "comment" }, para));
    if (last.command) now.append(el("code", { class: "cmd" }, shown(last.command, 200)));
    if (last.output) now.append(el("pre", { class: "out" + (last.output.startsWith("TAMPERED") ? " tampered" : "") }, outputBlocks(last.output.replace(/\n$/, ""))));
    if (last.error) now.append(el("pre", { class: "out err" }, "error: " + last.error));
  }
  const ol = document.getElementById("transcript");
  ol.replaceChildren();
  f.steps.forEach((s, i) => {
    const ran = f.ran[i];
    const cls = [i < f.step ? "done" : "", i === f.step - 1 ? "current" : "", ran && ran.error ? "failed" : ""].join(" ").trim();
    ol.append(el("li", { class: cls, title: (s.comment || []).join(" "), tabindex: 0, onclick: () => go(i + 1),
      onkeydown: (ev) => { if (ev.key === "Enter") go(i + 1); } }, s.command ? shown(s.command, 200) : "(commentary)"));
  });
  // The current step in view within the steps' own panel, never by scrolling the page
  // (which hid the command and its output above it).
  const cur = ol.querySelector(".current");
  const box = document.getElementById("story");
  if (cur && getComputedStyle(box).position === "sticky") {
    const top = cur.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top + cur.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, top - box.clientHeight / 2);
  }
  document.getElementById("pos").textContent = `step ${f.step} of ${f.steps.length}`;
}

// paragraphs joins a step's comment lines into paragraphs: a lesson's ## lines wrap its
// sentences, an empty ## line ends a paragraph, and a lesson's title line is one of its own.
function paragraphs(lines) {
  const out = [];
  let cur = [];
  for (const [i, l] of (lines || []).entries()) {
    if (i === 0 && /^Lesson \d+:/.test(l)) {
      out.push(l);
    } else if (l === "") {
      if (cur.length) out.push(cur.join(" "));
      cur = [];
    } else cur.push(l);
  }
  if (cur.length) out.push(cur.join(" "));
  return out;
}

// highlight marks every keyed value that differs from the previous picture (not in the
// live view, where every counter changes at every redraw).
function highlight() {
  const next = new Map();
  for (const e of document.querySelectorAll("[data-k]")) {
    const k = e.getAttribute("data-k");
    const v = e.getAttribute("data-v") ?? e.getAttribute("data-n") ?? e.textContent;
    next.set(k, v);
    if (state.live) continue;
    if (state.prev.size && state.prev.has(k) && state.prev.get(k) !== v) e.classList.add("changed");
    if (state.prev.size && !state.prev.has(k) && !k.startsWith("dt.")) e.classList.add("changed");
  }
  state.prev = next;
}

function render(f) {
  state.frame = f;
  drawStory(f);
  drawKernel(f.views);
  drawDT();
  highlight();
  document.body.setAttribute("data-step", String(f.step));
}

// go shows step of the lesson and the typed commands, and reports whether it could. A
// call while a request runs is kept, the last one only, and made when that request ends:
// a lesson chosen meanwhile is not lost.
async function go(step) {
  if (state.busy) {
    state.queued = step;
    return false;
  }
  state.busy = true;
  let ok = false;
  try {
    const f = await api("/api/frame", { lesson: state.lesson, typed: state.typed, step: step });
    state.step = f.step;
    state.total = f.steps.length;
    render(f);
    setHash();
    ok = true;
  } catch (e) {
    showError(e);
  } finally {
    state.busy = false;
  }
  if (state.queued !== null) {
    const next = state.queued;
    state.queued = null;
    return go(next);
  }
  if (state.delta !== 0) {
    const d = state.delta;
    state.delta = 0;
    return go(Math.max(0, state.step + d));
  }
  return ok;
}

// stepBy moves d steps from the current one; presses while a request runs add up, so
// that ten quick presses of the arrow key go ten steps.
function stepBy(d) {
  if (state.busy) {
    state.delta += d;
    return;
  }
  go(Math.max(0, state.step + d));
}

function showError(e) {
  const now = document.getElementById("now");
  now.append(el("pre", { class: "out err" }, String(e.message || e)));
}

function setHash() {
  if (state.live) return;
  const p = new URLSearchParams({ lesson: state.lesson, step: String(state.step) });
  state.typed.forEach((t) => p.append("typed", t));
  history.replaceState(null, "", "#" + p.toString());
}

// ---- live mode ----

let lastLive = null;
async function pollLive() {
  if (!state.live) return;
  try {
    const f = await api("/api/live");
    state.frame = f;
    const now = document.getElementById("now");
    let rate = "";
    if (lastLive && f.seconds > lastLive.seconds) rate = Math.round((f.eventsWritten - lastLive.eventsWritten) / (f.seconds - lastLive.seconds)).toLocaleString("en") + " events/s";
    lastLive = f;
    now.replaceChildren(el("p", { class: "comment" }, "Live: one writer per processor writes as etwemu demo does; the picture is redrawn four times a second. Its counters and its buffer lists are read a moment apart while the writers go on, so they may differ by a buffer or two."),
      el("p", {}, el("span", { class: "rate", "data-k": "live.rate" }, rate || "…")),
      el("p", {}, "events accepted: ", val("live.written", f.eventsWritten.toLocaleString("en")), ` in ${f.seconds.toFixed(1)} s`));
    drawKernel(f.views);
    drawDT();
    highlight();
    document.body.setAttribute("data-state", "live");
  } catch (e) {
    showError(e);
  }
  state.liveTimer = setTimeout(pollLive, 250);
}

function startLive() {
  state.live = true;
  lastLive = null;
  state.prev = new Map();
  document.getElementById("transcript").replaceChildren();
  document.getElementById("pos").textContent = "live";
  for (const id of ["first", "prev", "next", "last", "cmd"]) document.getElementById(id).disabled = true;
  history.replaceState(null, "", "#live=1");
  pollLive();
}

function stopLive() {
  state.live = false;
  clearTimeout(state.liveTimer);
  if (document.body.getAttribute("data-state") === "live") document.body.setAttribute("data-state", "ready");
  for (const id of ["first", "prev", "next", "last", "cmd"]) document.getElementById(id).disabled = false;
}

// ---- wiring ----

async function loadLesson(name, step, typed) {
  stopLive();
  state.lesson = name;
  state.typed = typed || [];
  state.prev = new Map();
  document.getElementById("lesson").value = name;
  await go(step);
}

// play steps forward one at a time, as the Step button does, up to step target.
async function play(target) {
  while (state.step < Math.min(target, state.total)) {
    const before = state.step;
    await go(state.step + 1);
    if (state.step === before) break;
  }
}

async function main() {
  const info = await api("/api/lessons");
  state.lessons = info.lessons;
  const sel = document.getElementById("lesson");
  for (const l of info.lessons) sel.append(el("option", { value: l.name }, `${l.name}: ${l.title}`));
  if (info.live) sel.append(el("option", { value: "#live" }, "Live: writers on a running kernel"));
  sel.addEventListener("change", () => (sel.value === "#live" ? startLive() : loadLesson(sel.value, 0)));
  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => stepBy(-1));
  document.getElementById("next").addEventListener("click", () => stepBy(1));
  document.getElementById("last").addEventListener("click", () => go(-1));
  document.getElementById("cmdform").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = document.getElementById("cmd");
    const cmd = input.value.trim();
    if (!cmd || state.busy) return;
    // A command the server refuses (too long, too many steps) is taken back: the page
    // stays where it was, with the command in the box to mend.
    const before = { typed: state.typed.slice(), lesson: state.lesson };
    // A typed command runs after the current step; the steps after it are dropped.
    const lessonSteps = state.total - state.typed.length;
    if (state.step < lessonSteps) {
      // Typing in the middle of a lesson: keep the lesson's steps up to here, as typed lines.
      state.typed = state.frame.steps.slice(0, state.step).map((s) => s.command).filter((c) => c);
      state.lesson = "";
      document.getElementById("lesson").value = "";
    } else {
      state.typed = state.typed.slice(0, state.step - lessonSteps);
    }
    state.typed.push(cmd);
    input.value = "";
    if (!(await go(-1))) {
      state.typed = before.typed;
      state.lesson = before.lesson;
      document.getElementById("lesson").value = before.lesson;
      input.value = cmd;
    }
  });
  // An address typed or edited in the bar goes where it says (the page's own changes use
  // replaceState, which fires no hashchange).
  window.addEventListener("hashchange", () => {
    const q = new URLSearchParams(location.hash.slice(1));
    if (q.get("live") === "1" && info.live) {
      sel.value = "#live";
      startLive();
      return;
    }
    loadLesson(q.get("lesson") ?? info.first, Number(q.get("step") || 0), q.getAll("typed"));
  });
  document.getElementById("picture").addEventListener("click", (ev) => {
    const t = ev.target.closest("[data-select]");
    if (!t) return;
    state.selected = t.getAttribute("data-select");
    drawDT();
  });
  document.getElementById("picture").addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const t = ev.target.closest("[data-select]");
    if (!t) return;
    ev.preventDefault();
    state.selected = t.getAttribute("data-select");
    drawDT();
  });
  document.addEventListener("keydown", (ev) => {
    // The arrows of a focused field are the field's: the lesson menu's change the lesson.
    if (["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName) || state.live) return;
    if (ev.key === "ArrowRight") stepBy(1);
    if (ev.key === "ArrowLeft") stepBy(-1);
  });

  // The address says where to start: #lesson=NAME&step=N&typed=CMD..., #live=1, or
  // #lesson=NAME&play=N|end&back=K&select=KIND:KEY, which steps forward one step at a
  // time as the Step button does and then back K steps; then what the browser test does
  // as a reader would: run=CMD types each command and submits it, key=ID:KEY presses a
  // key on that element, after=N presses Step N times, goto=ADDRESS edits the address.
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.get("live") === "1" && info.live) {
    sel.value = "#live";
    startLive();
    return;
  }
  const name = p.get("lesson") ?? info.first;
  if (p.has("select")) state.selected = p.get("select");
  if (p.has("play")) {
    await loadLesson(name, 0, p.getAll("typed"));
    await play(p.get("play") === "end" ? Infinity : Number(p.get("play")));
    for (let i = Number(p.get("back") || 0); i > 0; i--) await go(Math.max(0, state.step - 1));
  } else {
    await loadLesson(name, Number(p.get("step") || 0), p.getAll("typed"));
  }
  for (const cmd of p.getAll("run")) {
    document.getElementById("cmd").value = cmd;
    document.getElementById("cmdform").requestSubmit();
    while (state.busy) await new Promise((r) => setTimeout(r, 10));
  }
  for (const k of p.getAll("key")) { // pressed one after another, as fast as a reader can
    const [id, key] = k.split(":");
    document.getElementById(id).dispatchEvent(new KeyboardEvent("keydown", { key: key, bubbles: true }));
  }
  while (state.busy) await new Promise((r) => setTimeout(r, 10));
  for (let i = Number(p.get("after") || 0); i > 0; i--) await go(state.step + 1);
  if (p.has("goto")) { // an address edited in the bar: goto=ADDRESS
    location.hash = p.get("goto");
    await new Promise((r) => setTimeout(r, 50));
    while (state.busy) await new Promise((r) => setTimeout(r, 10));
  }
  document.body.setAttribute("data-typed", String(state.typed.length));
  document.body.setAttribute("data-input", String(document.getElementById("cmd").value.length));
  document.body.setAttribute("data-width", String(document.documentElement.scrollWidth));
  document.body.setAttribute("data-client-width", String(document.documentElement.clientWidth));
  document.body.setAttribute("data-state", "ready");
}

main().catch((e) => {
  showError(e);
  document.body.setAttribute("data-state", "error");
});
