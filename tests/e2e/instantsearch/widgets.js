// The page's settings come from its URL: ?host=127.0.0.1:<port>. The handles are those of
// the test's config: cities, its standard replica cities-smallest (population ascending) and
// its virtual replica cities-relevant (relevant sort, population descending).
// window.page holds what the test calls as a widget's own refine: the geoSearch
// connector's (a box) and a configure connector's (polygons, several boxes, optional words).
"use strict";

const settings = new URLSearchParams(window.location.search);
const { liteClient } = window["algoliasearch/lite"];
const searchClient = liteClient("searchport-e2e", "no-key", {
  hosts: [{ url: settings.get("host"), protocol: "http", accept: "readWrite" }],
});

const {
  configure, searchBox, voiceSearch, stats, hits, infiniteHits, refinementList, menu,
  menuSelect, rangeSlider, rangeInput, numericMenu, toggleRefinement, ratingMenu, sortBy,
  relevantSort, hitsPerPage, pagination, currentRefinements, clearRefinements,
  dynamicWidgets, queryRuleCustomData, queryRuleContext, index, hierarchicalMenu, breadcrumb,
} = instantsearch.widgets;
const { connectGeoSearch, connectConfigure } = instantsearch.connectors;
window.page = {};

const search = instantsearch({ indexName: "cities", searchClient });
search.on("error", (event) => {
  const error = event.error || event;
  const status = error.status === undefined ? "" : ` ${error.status}`;
  document.querySelector("#error").textContent = `${error.name}${status}: ${error.message}`;
});

// the geoSearch connector with a renderer of its own: one marker per hit, from _geoloc
const geoMarkers = connectGeoSearch((state) => {
  window.page.geo = state;
  document.querySelector("#geo").replaceChildren(...state.items.map((hit) => {
    const marker = document.createElement("li");
    marker.className = "marker";
    marker.dataset.id = hit.objectID;
    marker.dataset.lat = hit._geoloc.lat;
    marker.dataset.lng = hit._geoloc.lng;
    marker.textContent = hit.name;
    return marker;
  }));
});
// parameters no stock widget sets from a click: shapes drawn on a map, optional words
const extraParameters = connectConfigure((state) => { window.page.configure = state.refine; });

const hitTemplate = (hit, { html, components }) => html`
  <article class="hit" data-id="${hit.objectID}" data-position="${hit.__position}"
           data-population="${hit.population}">
    <h3 class="hit-name">${components.Highlight({ attribute: "name", hit })}</h3>
    <p class="hit-snippet">${components.Snippet({ attribute: "name", hit })}</p>
  </article>`;

search.addWidgets([
  configure({ attributesToSnippet: ["name:2"], snippetEllipsisText: "…" }),
  extraParameters({ searchParameters: {} }),
  searchBox({ container: "#searchbox", placeholder: "Search cities" }),
  voiceSearch({ container: "#voice", language: "en-US",
                additionalQueryParameters: () => ({}) }),
  stats({ container: "#stats" }),
  sortBy({ container: "#sort", items: [
    { label: "Relevance", value: "cities" },
    { label: "Smallest first", value: "cities-smallest" },
    { label: "Largest relevant first", value: "cities-relevant" },
  ] }),
  relevantSort({ container: "#relevant" }),
  hitsPerPage({ container: "#per-page", items: [
    { label: "10 per page", value: 10, default: true },
    { label: "25 per page", value: 25 },
  ] }),
  currentRefinements({ container: "#current" }),
  clearRefinements({ container: "#clear" }),
  queryRuleContext({ trackedFilters: { region: (values) => values } }),
  queryRuleCustomData({
    container: "#banner",
    templates: {
      default: ({ items }, { html }) => html`${items.map((item) => html`
        <p class="banner" data-link="${item.link}">${item.title}</p>`)}`,
    },
  }),
  menu({ container: "#region", attribute: "region", sortBy: ["count:desc", "name:asc"] }),
  menuSelect({ container: "#currency", attribute: "currency", limit: 8,
               sortBy: ["count:desc", "name:asc"] }),
  refinementList({ container: "#country", attribute: "country", limit: 5, showMore: true,
                   showMoreLimit: 10, searchable: true }),
  rangeSlider({ container: "#latitude", attribute: "latitude", pips: false }),
  rangeInput({ container: "#population", attribute: "population" }),
  numericMenu({ container: "#size", attribute: "population", items: [
    { label: "All" },
    { label: "Under 1M", end: 999999 },
    { label: "1M to 5M", start: 1000000, end: 5000000 },
    { label: "Over 5M", start: 5000001 },
  ] }),
  toggleRefinement({ container: "#capital", attribute: "capital" }),
  ratingMenu({ container: "#stars", attribute: "stars" }),  // 0 to 5
  // the rows' levels: lvl0 the continent, lvl1 "continent > country"
  hierarchicalMenu({ container: "#hierarchy", attributes: ["lvl0", "lvl1"], limit: 100,
                     sortBy: ["count:desc", "name:asc"] }),
  breadcrumb({ container: "#breadcrumb", attributes: ["lvl0", "lvl1"] }),
  dynamicWidgets({
    container: "#dynamic",
    // the facets of the other widgets, not "*" (InstantSearch's default, which searchport
    // answers with the handle's defaults.facets only): the lists mount on the first answer
    facets: [],
    maxValuesPerFacet: 100,
    widgets: [],
    fallbackWidget: ({ container, attribute }) => {
      container.dataset.attribute = attribute;
      return refinementList({ container, attribute });
    },
  }),
  hits({ container: "#hits", templates: { item: hitTemplate } }),
  pagination({ container: "#pagination" }),
  geoMarkers({}),
  index({ indexName: "cities-smallest", indexId: "smallest" }).addWidgets([
    configure({ hitsPerPage: 5 }),
    infiniteHits({ container: "#smallest", templates: { item: hitTemplate } }),
  ]),
]);
search.start();
