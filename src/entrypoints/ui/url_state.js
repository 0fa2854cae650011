// The page's state as its URL, so a reload or a shared link shows the same results.
// The format (docs/search-page.md describes it for users):
//   index=<handle>                 the handle searched (default: the first of GET /indexes)
//   q=<text>                       the words typed
//   page=<n>                       the page of results, from 1 (left out for page 1)
//   sort=<field>:<asc|desc>        left out for relevance
//   f.<field>=<value>              one per selected facet value (repeat the parameter for more)
//   range.<field>=<min>..<max>     a range of a number field, both ends included; one end
//                                  may be left empty (open): range.population=1000000..
//   area=<zoom>/<x>/<y>            the map tile zoomed into
//   semantic=<0..1>                the share of meaning (handles that search by meaning);
//                                  left out at the page's default
// Anything else in the URL is ignored; a malformed value is dropped.

const FACET = "f.";
const RANGE = "range.";
const SORT = /^([^:]+):(asc|desc)$/;
const TILE = /^(\d{1,2})\/(\d+)\/(\d+)$/;
const DEEPEST_TILE = 29;

/** The tile of a geo cluster key "zoom/x/y" (null unless it names a real tile). */
export function parseTile(text) {
  const match = TILE.exec(text || "");
  if (!match) return null;
  const [zoom, x, y] = match.slice(1).map(Number);
  const side = 2 ** zoom;
  return zoom <= DEEPEST_TILE && x < side && y < side ? { zoom, x, y } : null;
}

function parseRange(field, text) {
  const ends = text.split("..");
  if (ends.length !== 2 || ends.every((end) => end.trim() === "")) return null;
  const [min, max] = ends.map((end) => (end.trim() === "" ? null : Number(end)));
  const valid = [min, max].every((end) => end === null || Number.isFinite(end));
  return valid && (min === null || max === null || min <= max) ? { field, min, max } : null;
}

/** The state named by a location's query string (missing parts at their defaults). */
export function readState(search) {
  const params = new URLSearchParams(search);
  const filters = {};
  let range = null;
  for (const [name, value] of params) {
    if (name.startsWith(FACET) && name.length > FACET.length) {
      const field = name.slice(FACET.length);
      if (!(filters[field] || []).includes(value)) filters[field] = [...(filters[field] || []), value];
    } else if (name.startsWith(RANGE) && !range) {
      range = parseRange(name.slice(RANGE.length), value);
    }
  }
  const page = Number(params.get("page"));
  const sort = params.get("sort") || "";
  const area = params.get("area") || "";
  const semantic = params.get("semantic") ? Number(params.get("semantic")) : NaN;
  return {
    handle: params.get("index") || "",
    q: params.get("q") || "",
    page: Number.isInteger(page) && page > 1 ? page : 1,
    sort: SORT.test(sort) ? sort : "",
    filters,
    range,
    area: parseTile(area) ? area : "",
    semantic: semantic >= 0 && semantic <= 1 ? semantic : null,
  };
}

/** The query string ("?index=...") of a state: {handle, q, page, sort, filters, range, area,
 * semantic}. */
export function writeState(state) {
  const params = new URLSearchParams();
  params.set("index", state.handle);
  if (state.q) params.set("q", state.q);
  if (state.page > 1) params.set("page", String(state.page));
  if (state.sort) params.set("sort", state.sort);
  for (const [field, values] of Object.entries(state.filters)) {
    for (const value of values) params.append(FACET + field, value);
  }
  if (state.range) {
    const { field, min, max } = state.range;
    params.set(RANGE + field, `${min ?? ""}..${max ?? ""}`);
  }
  if (state.area) params.set("area", state.area);
  if (state.semantic !== null && state.semantic !== undefined) {
    params.set("semantic", String(state.semantic));
  }
  return `?${[...params].map(([name, value]) => `${encode(name)}=${encode(value)}`).join("&")}`;
}

// URLSearchParams would write "population%3Adesc" and "4%2F8%2F5"; ":" and "/" are allowed in
// a query string as they are, and a space reads better as "+"
function encode(text) {
  return encodeURIComponent(text).replace(/%3A/g, ":").replace(/%2F/g, "/").replace(/%20/g, "+");
}
