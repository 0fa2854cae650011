// The built-in search page: state in the URL, one search request per change, DOM built with
// textContent (highlights through highlight.js only).

import { ApiError, getJson } from "./api.js";
import { drawHistogram, drawMap, tileBounds } from "./charts.js";
import { labelFilterDrawer, setUpFilterDrawer } from "./drawer.js";
import { debounce, el } from "./dom.js";
import { facetLists } from "./facets.js";
import { renderHit, renderPagination } from "./hits.js";
import { fieldLabel as label, formatPoint, formatValue } from "./labels.js";
import { parseTile, readState, writeState } from "./url_state.js";
import { keyPrompt } from "./key_prompt.js";
import { meaningParam, showMeaning, watchMeaning } from "./meaning.js";

const $ = (selector) => document.querySelector(selector);
const whole = new Intl.NumberFormat();
const NUMERIC = new Set(["integer", "float"]);
const SORTABLE = new Set(["integer", "float", "keyword", "date", "boolean"]);

const state = {
  indexes: [],
  handle: "",
  meta: null, // {fields: {name: type}, facets, perPage, capabilities, numeric, geo, title}
  q: "",
  page: 1,
  sort: "",
  filters: {}, // facet field -> [values]
  range: null, // {field, min, max}, an end null when open
  area: "", // the map tile zoomed into, "zoom/x/y"
  semantic: null, // the share of meaning (handles that search by meaning), null: the default
  expanded: new Set(),
  facetQuery: {},
};
let inFlight = null;
const facetPanel = facetLists(state, {
  toggle: toggleValue, refresh, filtersBut: currentFilters, failed,
});

// -- status, errors, loading -------------------------------------------------------------

function showError(message) {
  const box = $("#error");
  box.hidden = !message;
  box.textContent = message || "";
}

function busy(on) {
  $("#progress").classList.toggle("on", on);
  $("#hits").setAttribute("aria-busy", on ? "true" : "false");
}

function failed(error) {
  if (error.name === "AbortError") return;
  if (error instanceof ApiError && error.status === 401) {
    prompt.refused();
    return;
  }
  showError(error.message);
}

// -- the URL holds the state, so a reload or a shared link shows the same page -------------

// Each new search is a step of the browser's history, so Back undoes a filter, a sort, a page
// or the words; words being changed (typed) replace their step instead, and so does a state
// read from the URL.
let urlFromHistory = false;

function writeUrl() {
  const query = writeState(state);
  const shown = readState(location.search);
  const onlyWords = shown.handle === state.handle && Boolean(shown.q) && Boolean(state.q)
    && writeState({ ...shown, q: state.q }) === query;
  const url = `${location.pathname}${query}`;
  if (urlFromHistory || onlyWords) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  urlFromHistory = false;
}

function followHistory() {
  if (!state.meta) return; // still asking for a key: the handles come first
  const wanted = readState(location.search);
  urlFromHistory = true;
  if (wanted.handle !== state.handle && state.indexes.some((i) => i.handle === wanted.handle)) {
    selectHandle(wanted.handle, wanted).catch(failed);
    return;
  }
  Object.assign(state, wanted, { handle: state.handle });
  $("#q").value = state.q;
  $("#sort").value = state.sort;
  showMeaning(state);
  search();
}

// -- loading a handle ----------------------------------------------------------------------

async function loadIndexes() {
  const { body } = await getJson("/indexes");
  state.indexes = body.indexes;
  const select = $("#handle");
  select.replaceChildren(...body.indexes.map((i) => el("option", { value: i.handle }, i.handle)));
  select.disabled = body.indexes.length < 2;
  select.hidden = !body.indexes.length;
  $("#search-form").hidden = false;
  prompt.accepted();
  $("#app").hidden = false;
  if (!body.indexes.length) {
    showError("No index is configured: add one under `indexes` in the config file.");
    return;
  }
  // a link without index= searches the first handle; one naming a handle not served keeps
  // only its words (its fields may not exist on the first handle)
  const wanted = readState(location.search);
  const known = body.indexes.some((i) => i.handle === wanted.handle);
  const handle = known ? wanted.handle : body.indexes[0].handle;
  urlFromHistory = true;
  await selectHandle(handle, known || !wanted.handle ? wanted : { q: wanted.q });
}

async function selectHandle(handle, restore) {
  const info = state.indexes.find((i) => i.handle === handle);
  $("#handle").value = handle;
  const { body } = await getJson(`/${encodeURIComponent(handle)}/fields`);
  const fields = Object.fromEntries(body.fields.map((f) => [f.name, f.type || null]));
  const typed = (wanted) => body.fields.filter((f) => wanted.has(f.type)).map((f) => f.name);
  const meta = {
    fields, capabilities: info.capabilities, perPage: body.perPage,
    facets: body.facets.length ? body.facets : typed(new Set(["keyword", "boolean"])).slice(0, 4),
    numeric: typed(NUMERIC), geo: typed(new Set(["geo_point"]))[0] || null,
    sortable: typed(SORTABLE),
    title: body.fields.find((f) => f.type === "text" && f.searchable)?.name
      || body.fields.find((f) => f.type === "text")?.name || null,
    histogram: null,
  };
  Object.assign(state, {
    handle, meta, q: "", page: 1, sort: "", filters: {}, range: null, area: "", semantic: null,
    expanded: new Set(), facetQuery: {},
  });
  if (restore) Object.assign(state, restore, { handle });
  $("#q").value = state.q;
  $("#q").placeholder = `Search ${handle}…`;
  $("#q").disabled = false;
  document.title = `${handle} · searchport`;
  $("#analytics-link").search = new URLSearchParams({ index: handle }).toString();
  await learnFromHits();
  buildSortOptions();
  showMeaning(state);
  await prepareHistogram();
  await search();
}

// Without types in the config, the first hits say which fields are numbers or points, and
// which text names a hit (a field called like a title, else the first text of the hits).
const TITLE_NAMES = ["title", "name", "label", "headline", "subject"];

async function learnFromHits() {
  const { meta } = state;
  if (meta.title && meta.numeric.length && (meta.geo || !meta.capabilities.geoGrid)) return;
  const { body } = await getJson(`/${encodeURIComponent(state.handle)}/search`, { perPage: 20 });
  if (!meta.title) {
    const texts = body.hits.flatMap((hit) => Object.entries(hit)
      .filter(([name, value]) => typeof value === "string" && !name.startsWith("_")
        && name !== "objectID")
      .map(([name]) => name));
    meta.title = TITLE_NAMES.find((name) => texts.includes(name)) || texts[0] || null;
  }
  for (const hit of body.hits) {
    for (const [name, value] of Object.entries(hit)) {
      if (name.startsWith("_") || name === "objectID" || meta.fields[name]) continue;
      if (typeof value === "number" && !meta.numeric.includes(name)) {
        meta.numeric.push(name);
        meta.sortable.push(name);
      } else if (!meta.geo && value && typeof value === "object" && "lat" in value && "lon" in value) {
        meta.geo = name;
      }
    }
  }
}

function buildSortOptions() {
  const select = $("#sort");
  const options = [el("option", { value: "" }, "Relevance")];
  for (const field of state.meta.sortable) {
    const numeric = state.meta.numeric.includes(field);
    const [up, down] = numeric ? ["low to high", "high to low"] : ["A to Z", "Z to A"];
    options.push(el("option", { value: `${field}:desc` }, `${label(field)}: ${down}`));
    options.push(el("option", { value: `${field}:asc` }, `${label(field)}: ${up}`));
  }
  select.replaceChildren(...options);
  select.value = state.sort;
}

function niceStep(span, buckets) {
  const raw = Math.max(span / buckets, 1e-9);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  return state.meta.fields[state.meta.histogram?.field] === "integer" ? Math.max(1, Math.round(step)) : step;
}

// The histogram's interval comes from the field's range over the whole index.
async function prepareHistogram() {
  const { meta } = state;
  const field = meta.numeric[0];
  if (!field || !meta.capabilities.histogram) return;
  try {
    const ends = await Promise.all(["asc", "desc"].map((order) =>
      getJson(`/${encodeURIComponent(state.handle)}/search`, {
        perPage: 1, fields: field, sort: { [field]: order }, filters: { [field]: { exists: true } },
      })));
    const [min, max] = ends.map(({ body }) => body.hits[0]?.[field]);
    if (typeof min === "number" && typeof max === "number") meta.histogram = { field, min, max };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401) throw error;
  }
}

// -- searching -----------------------------------------------------------------------------

function filterValue(field, value) {
  return NUMERIC.has(state.meta.fields[field]) && value !== "" && !Number.isNaN(Number(value))
    ? Number(value) : value;
}

function currentFilters(except = null) {
  const filters = {};
  for (const [field, values] of Object.entries(state.filters)) {
    if (field !== except && values.length) filters[field] = values.map((v) => filterValue(field, v));
  }
  if (state.range && state.range.field !== except) {
    const { min, max } = state.range; // either end may be open (null)
    filters[state.range.field] = Object.fromEntries(
      Object.entries({ min, max }).filter(([, end]) => end !== null));
  }
  return filters;
}

function histogramInterval() {
  const h = state.meta.histogram;
  const closed = state.range && state.range.field === h.field
    && state.range.min !== null && state.range.max !== null;
  const range = closed ? state.range : h;
  return niceStep(range.max - range.min, 30);
}

function searchParams() {
  const { meta } = state;
  const params = {
    q: state.q, page: state.page, perPage: meta.perPage, highlight: "true",
    facets: meta.facets.join(","),
  };
  const filters = currentFilters();
  if (Object.keys(filters).length) params.filters = filters;
  if (state.sort) {
    const [field, order] = state.sort.split(":");
    params.sort = { [field]: order };
  }
  params.semantic = meaningParam(state);
  if (meta.histogram) params.histogram = { [meta.histogram.field]: histogramInterval() };
  if (meta.geo && meta.capabilities.geoGrid) {
    const tile = parseTile(state.area);
    // a zoomed-in tile is drawn with clusters three levels finer
    params.geoGrid = { field: meta.geo, precision: tile ? Math.min(29, tile.zoom + 3) : 4 };
    if (tile) params.geoGrid.bounds = tileBounds(state.area);
  }
  return params;
}

async function search() {
  inFlight?.abort();
  const controller = new AbortController();
  inFlight = controller;
  busy(true);
  writeUrl();
  try {
    const { body, timing } = await getJson(
      `/${encodeURIComponent(state.handle)}/search`, searchParams(), controller.signal);
    if (controller !== inFlight) return;
    if (!body.hits.length && body.page > body.totalPages && body.totalPages > 0) {
      await showLastPage(body.totalPages, `Page ${whole.format(body.page)} is past the last page, ${whole.format(body.totalPages)}.`);
      return;
    }
    showError("");
    render(body, timing);
    await refineHistogram(body.histograms || {}, controller);
  } catch (error) {
    if (controller !== inFlight) return;
    if (!(error instanceof ApiError && error.status === 400 && state.page > 1
      && await lastPageInstead(error, controller))) failed(error);
  } finally {
    if (controller === inFlight) busy(false);
  }
}

// A page past the result window (a link, or the URL edited by hand) is refused by the API:
// when the same search has pages, the last one is shown instead, with the API's sentence.
async function lastPageInstead(error, controller) {
  const params = { ...searchParams(), page: 1, facets: undefined, histogram: undefined, geoGrid: undefined };
  try {
    const { body } = await getJson(`/${encodeURIComponent(state.handle)}/search`, params, controller.signal);
    if (controller !== inFlight || body.totalPages < 1 || body.totalPages >= state.page) return false;
    await showLastPage(body.totalPages, error.message);
    return true;
  } catch {
    return false;
  }
}

async function showLastPage(last, sentence) {
  state.page = last;
  urlFromHistory = true; // the URL asked for a page that is not there: it is corrected, not added
  await search();
  const said = sentence.endsWith(".") ? sentence : `${sentence}.`;
  showError(`${said[0].toUpperCase()}${said.slice(1)} Showing page ${whole.format(last)}.`);
}

function refresh() {
  state.page = 1;
  search();
}

// -- rendering -----------------------------------------------------------------------------

function render(body, timing) {
  renderStatus(body, timing);
  facetPanel.renderChips();
  facetPanel.renderFacets(body.facets || {});
  renderSuggestions(body.suggestions || []);
  renderRuleData(body.userData || []);
  renderHistogram(body.histograms || {});
  renderMap(body.geoClusters);
  renderHits(body.hits);
  renderPagination($("#pagination"), body, goToPage);
}

function renderStatus(body, timing) {
  const noun = body.totalHits === 1 ? "result" : "results";
  let text = `${whole.format(body.totalHits)} ${noun}`;
  const filterCount = Object.values(state.filters).reduce((sum, values) => sum + values.length, 0)
    + (state.range ? 1 : 0) + (state.area ? 1 : 0);
  labelFilterDrawer(filterCount, text);
  if (body.totalPages > 1) text += ` · page ${body.page} of ${whole.format(body.totalPages)}`;
  if (timing.total !== undefined) text += ` · ${timing.total.toFixed(1)} ms`;
  $("#status").textContent = text;
}

function toggleValue(field, value) {
  const values = new Set(state.filters[field] || []);
  if (values.has(value)) values.delete(value);
  else values.add(value);
  if (values.size) state.filters[field] = [...values];
  else delete state.filters[field];
  refresh();
}

// what the query rules that applied send to the page (their userData): a title when the
// rule gives one, else the data as JSON, always as text
function renderRuleData(items) {
  const box = $("#rule-data");
  box.hidden = !items.length;
  box.replaceChildren(...items.map((item) => el("p", { class: "rule-item" },
    item && typeof item.title === "string" ? item.title : JSON.stringify(item))));
}

function renderSuggestions(suggestions) {
  const box = $("#suggestions");
  box.hidden = !suggestions.length;
  box.replaceChildren("Did you mean ", ...suggestions.slice(0, 3).map((s) => el("button", {
    type: "button", class: "link", onclick: () => {
      $("#q").value = s;
      state.q = s;
      refresh();
    },
  }, s)));
}

// The first answer's buckets use the interval of the field's whole range; when the results
// cover only a few of them, one more small request asks for finer ones.
async function refineHistogram(histograms, controller) {
  const h = state.meta.histogram;
  let buckets = h && histograms[h.field];
  let interval = histogramInterval();
  for (let round = 0; round < 3 && buckets && buckets.length > 0 && buckets.length < 10; round += 1) {
    const finer = niceStep(buckets.length * interval, 30);
    if (finer >= interval) return;
    const params = { ...searchParams(), perPage: 1, fields: h.field, histogram: { [h.field]: finer } };
    delete params.geoGrid;
    const { body } = await getJson(
      `/${encodeURIComponent(state.handle)}/search`, params, controller.signal);
    if (controller !== inFlight) return;
    renderHistogram(body.histograms || {}, finer);
    [buckets, interval] = [(body.histograms || {})[h.field], finer];
  }
}

function renderHistogram(histograms, interval = histogramInterval()) {
  const figure = $("#histogram");
  const h = state.meta.histogram;
  figure.hidden = !h;
  if (!h) return;
  figure.querySelector("figcaption").textContent = `${label(h.field)} · log scale · click a bar to filter`;
  drawHistogram(figure.querySelector(".chart"), histograms[h.field] || [], interval, (lower, upper) => {
    const integer = state.meta.fields[h.field] === "integer";
    state.range = { field: h.field, min: lower, max: integer ? upper - 1 : upper };
    refresh();
  });
}

function renderMap(clusters) {
  const figure = $("#map");
  figure.hidden = !clusters;
  if (!clusters) return;
  const total = clusters.reduce((sum, c) => sum + c.count, 0);
  figure.querySelector("figcaption").textContent =
    `${label(state.meta.geo)} · ${whole.format(clusters.length)} clusters of ${whole.format(total)} · click to zoom`;
  const title = state.meta.title;
  const describe = (c) => {
    const sample = c.hit && title && c.hit[title] ? `, e.g. ${formatValue(c.hit[title])}` : "";
    return `${whole.format(c.count)} near ${formatPoint(c.lat, c.lng)}${sample}`;
  };
  const bounds = state.area ? tileBounds(state.area) : undefined;
  drawMap(figure.querySelector(".chart"), clusters, bounds, describe, (cluster) => {
    state.area = cluster.key;
    refresh();
  });
}

function renderHits(hits) {
  const list = $("#hits");
  if (!hits.length) {
    const what = state.q ? `Nothing matches “${state.q}”` : "Nothing matches";
    const anyFilter = Object.keys(state.filters).length || state.range || state.area;
    list.replaceChildren(el("li", { class: "empty" }, el("strong", {}, `${what}${anyFilter ? " with these filters" : ""}.`),
      el("span", {}, anyFilter ? " Remove a filter, or try other words." : " Try other words.")));
    return;
  }
  list.replaceChildren(...hits.map((hit) => renderHit(hit, state.meta)));
}

function goToPage(page) {
  state.page = page;
  search();
  $("#hits").focus({ preventScroll: true });
  window.scrollTo({ top: 0, behavior: "smooth" });
}


// -- wiring --------------------------------------------------------------------------------

// No handle can be listed without the key: the page waits behind the key prompt.
const prompt = keyPrompt({ covers: ["#app", "#search-form", "#handle"], load: loadIndexes, failed });

function start() {
  setUpFilterDrawer();
  const typed = debounce(() => {
    state.q = $("#q").value.trim();
    refresh();
  }, 180);
  $("#q").addEventListener("input", typed);
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.q = $("#q").value.trim();
    refresh();
  });
  $("#handle").addEventListener("change", (event) => selectHandle(event.target.value, null).catch(failed));
  $("#sort").addEventListener("change", (event) => {
    state.sort = event.target.value;
    showMeaning(state);
    refresh();
  });
  watchMeaning((value) => {
    state.semantic = value;
    refresh();
  }, debounce);
  window.addEventListener("popstate", followHistory);
  document.addEventListener("keydown", (event) => {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement?.tagName);
    if (event.key === "/" && !typing) {
      event.preventDefault();
      $("#q").focus();
    }
  });
  loadIndexes().catch(failed);
}

start();
