// The analytics page: the figures of one handle over a period, read from the Analytics API
// (GET /2/...) as any client reads them. The handle and the period live in the URL.

import { ApiError, getJson } from "./api.js";
import { drawDays, shortDay } from "./day_chart.js";
import { keyPrompt } from "./key_prompt.js";

const $ = (selector) => document.querySelector(selector);
const whole = new Intl.NumberFormat("en-US");
const percent = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 });
const decimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });
const NONE = "–";
const TOP = 10;
const DAY_MS = 86_400_000;

const state = { handles: [], handle: "", start: "", end: "" };
let generation = 0;

/** A UTC day as YYYY-MM-DD, ``offset`` days from ``day``. */
function shiftDay(day, offset) {
  return new Date(Date.parse(`${day}T00:00:00Z`) + offset * DAY_MS).toISOString().slice(0, 10);
}

function daysOf(start, end) {
  const days = [];
  for (let day = start; day <= end && days.length < 400; day = shiftDay(day, 1)) days.push(day);
  return days;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

const count = (n) => whole.format(n);
// a day within the period's one year is named short ("20 Nov"), else in full
const dayName = (day) => (state.start.slice(0, 4) === state.end.slice(0, 4) ? shortDay(day) : day);
const ratio = (r) => (r === null || r === undefined ? NONE : percent.format(r));
const position = (p) => (p === null || p === undefined ? NONE : decimal.format(p));

// -- key, errors, busy ---------------------------------------------------------------------

function showError(message) {
  $("#error").hidden = !message;
  $("#error").textContent = message || "";
}

function failed(error) {
  if (error.name === "AbortError") return;
  if (error instanceof ApiError && error.status === 401) {
    prompt.refused();
  } else if (error instanceof ApiError && error.status === 403) {
    prompt.ask(`This key may not read analytics (${error.message}). Use the service's apiKey `
      + "or a named key with analytics: true.");
  } else {
    showError(error.message);
  }
}

// -- the URL holds the handle and the period -----------------------------------------------

function readUrl() {
  const params = new URLSearchParams(location.search);
  const today = new Date().toISOString().slice(0, 10);
  const valid = (day) => /^\d{4}-\d{2}-\d{2}$/.test(day || "") && !Number.isNaN(Date.parse(day));
  const end = valid(params.get("endDate")) ? params.get("endDate") : today;
  // Algolia's default period: the last eight days, the end day included
  const start = valid(params.get("startDate")) ? params.get("startDate") : shiftDay(end, -7);
  return { handle: params.get("index") || "", start, end };
}

function writeUrl() {
  const params = new URLSearchParams({ index: state.handle, startDate: state.start, endDate: state.end });
  history.replaceState(null, "", `${location.pathname}?${params}`);
}

// -- loading -------------------------------------------------------------------------------

async function loadHandles() {
  const { body } = await getJson("/indexes");
  state.handles = body.indexes.map((i) => i.handle);
  prompt.accepted();
  if (!state.handles.length) {
    showError("No index is configured: add one under `indexes` in the config file.");
    return;
  }
  const wanted = readUrl();
  Object.assign(state, wanted, {
    handle: state.handles.includes(wanted.handle) ? wanted.handle : state.handles[0],
  });
  $("#handle").replaceChildren(...state.handles.map((h) => el("option", { value: h }, h)));
  $("#handle").value = state.handle;
  $("#start").value = state.start;
  $("#end").value = state.end;
  $("#period-form").hidden = false;
  await loadReport();
}

/** One report of the Analytics API for the chosen handle and period. */
function report(path, extra = {}) {
  return getJson(path, { index: state.handle, startDate: state.start, endDate: state.end, ...extra })
    .then(({ body }) => body);
}

async function loadReport() {
  const mine = ++generation;
  writeUrl();
  showError("");
  document.title = `${state.handle} analytics · searchport`;
  $("#progress").classList.add("on");
  $("#report").setAttribute("aria-busy", "true");
  const asked = {
    count: report("/2/searches/count"),
    users: report("/2/users/count"),
    noResultRate: report("/2/searches/noResultRate"),
    clickThroughRate: report("/2/clicks/clickThroughRate"),
    averageClickPosition: report("/2/clicks/averageClickPosition"),
    conversionRate: report("/2/conversions/conversionRate"),
    // the specification's default direction is asc: the top ones are asked for
    searches: report("/2/searches", { limit: TOP, orderBy: "searchCount", direction: "desc" }),
    noResults: report("/2/searches/noResults", { limit: TOP }),
    filters: report("/2/filters", { limit: TOP }),
  };
  const names = Object.keys(asked);
  const settled = await Promise.allSettled(Object.values(asked));
  if (mine !== generation) return; // a newer choice was made meanwhile
  $("#progress").classList.remove("on");
  $("#report").setAttribute("aria-busy", "false");
  const got = Object.fromEntries(names.map((name, i) => [name, settled[i]]));
  // a refused key refuses every route: ask again instead of drawing empty panels
  const refusal = settled.find((s) => s.status === "rejected"
    && s.reason instanceof ApiError && [401, 403].includes(s.reason.status));
  if (refusal) {
    failed(refusal.reason);
    return;
  }
  // a question no report answers (a period too long, a handle gone): said once, at the top
  const invalid = settled.find((s) => s.status === "rejected" && s.reason.status === 400);
  if (invalid && !settled.some((s) => s.status === "fulfilled")) {
    $("#report").hidden = true;
    showError(invalid.reason.message);
    return;
  }
  $("#report").hidden = false;
  $("#report-title").textContent = `${state.handle}: ${state.start} to ${state.end} (UTC)`;
  renderTotals(got);
  renderPerDay(got.count);
  renderClicks(got.clickThroughRate, got.averageClickPosition);
  renderTable("#top-searches", got.searches, (body) => body.searches,
    (s) => [s.search || "(empty search)", count(s.count), count(s.nbHits)]);
  renderTable("#no-results", got.noResults, (body) => body.searches || [],
    (s) => [s.search || "(empty search)", count(s.count), count(s.withFilterCount)]);
  renderTable("#top-filters", got.filters, (body) => body.attributes,
    (a) => [a.attribute, count(a.count)]);
}

// -- drawing -------------------------------------------------------------------------------

/** Why a report could not be read, in words. */
function why(reason) {
  return reason instanceof ApiError && reason.status === 404
    ? "This server does not answer this report yet." : reason.message;
}

const valueOf = (result) => (result.status === "fulfilled" ? result.value : null);

function renderTotals(got) {
  const figures = {
    searches: [got.count, (b) => count(b.count)],
    users: [got.users, (b) => count(b.count)],
    noResultRate: [got.noResultRate, (b) => ratio(b.rate)],
    clickThroughRate: [got.clickThroughRate, (b) => ratio(b.rate)],
    averageClickPosition: [got.averageClickPosition, (b) => position(b.average)],
    conversionRate: [got.conversionRate, (b) => ratio(b.rate)],
  };
  for (const [name, [result, format]] of Object.entries(figures)) {
    const cell = document.querySelector(`.total[data-figure="${name}"] dd`);
    const body = valueOf(result);
    cell.textContent = body ? format(body) : NONE;
    cell.title = body ? "" : why(result.reason);
  }
}

function renderPerDay(result) {
  const chart = $("#per-day .chart");
  const body = valueOf(result);
  if (!body) {
    chart.replaceChildren(el("p", { class: "unavailable" }, why(result.reason)));
    return;
  }
  const counts = Object.fromEntries(body.dates.map((d) => [d.date, d.count]));
  drawn = daysOf(state.start, state.end).map((day) => ({ day, count: counts[day] || 0 }));
  drawDays(chart, drawn);
}

let drawn = null; // the days of the chart, drawn again at a new width
let drawnWidth = 0;
function redrawOnResize() {
  const chart = $("#per-day .chart");
  const width = Math.round(chart.clientWidth);
  if (drawn && width && width !== drawnWidth) drawDays(chart, drawn);
  drawnWidth = width;
}

function renderClicks(rates, positions) {
  const body = $("#clicks tbody");
  const ctr = valueOf(rates);
  const average = valueOf(positions);
  if (!ctr) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: "5" }, why(rates.reason))));
    return;
  }
  const byDay = Object.fromEntries((average ? average.dates : []).map((d) => [d.date, d]));
  const rows = ctr.dates.filter((d) => d.trackedSearchCount || d.clickCount).map((d) => el(
    "tr", { "data-date": d.date },
    el("th", { scope: "row" }, dayName(d.date)), el("td", {}, count(d.trackedSearchCount)),
    el("td", {}, count(d.clickCount)), el("td", {}, ratio(d.rate)),
    el("td", {}, position(byDay[d.date] ? byDay[d.date].average : null)),
  ));
  body.replaceChildren(...(rows.length ? rows : [el("tr", { class: "empty-row" },
    el("td", { colspan: "5" }, "No tracked search in this period."))]));
}

// Any client can log a query of thousands of characters: a table shows its start, and the
// whole of it on hover (its title), so one query never stretches the page.
const SHOWN_CHARACTERS = 60;

function rowHeading(text) {
  if (text.length <= SHOWN_CHARACTERS) return el("th", { scope: "row" }, text);
  return el("th", { scope: "row", class: "cut", title: text },
    `${text.slice(0, SHOWN_CHARACTERS).trimEnd()}…`);
}

function renderTable(panel, result, items, cells) {
  const tbody = document.querySelector(`${panel} tbody`);
  const table = tbody.closest(".scroll");
  table.hidden = false;
  document.querySelector(`${panel} .unavailable`)?.remove();
  if (result.status === "rejected") {
    table.hidden = true;
    table.after(el("p", { class: "unavailable" }, why(result.reason)));
    return;
  }
  const list = items(result.value);
  const rows = list.map((item) => el("tr", {}, ...cells(item).map(
    (text, i) => (i ? el("td", {}, text) : rowHeading(text)))));
  const width = tbody.closest("table").tHead.rows[0].cells.length;
  tbody.replaceChildren(...(rows.length ? rows : [el("tr", { class: "empty-row" },
    el("td", { colspan: String(width) }, "Nothing in this period."))]));
}

// -- wiring --------------------------------------------------------------------------------

// No handle can be listed without the key: the page waits behind the key prompt.
const prompt = keyPrompt({ covers: ["#report", "#period-form"], load: loadHandles, failed });

function start() {
  $("#period-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const [from, to] = [$("#start").value, $("#end").value];
    if (!from || !to) return;
    if (from > to) {
      showError("The period must start on or before the day it ends.");
      return;
    }
    Object.assign(state, { handle: $("#handle").value, start: from, end: to });
    loadReport().catch(failed);
  });
  $("#handle").addEventListener("change", () => $("#period-form").requestSubmit());
  new ResizeObserver(redrawOnResize).observe($("#per-day .chart"));
  loadHandles().catch(failed);
}

start();
