// The page's settings come from its URL: ?host=127.0.0.1:<port>&index=<handle>
// [&apiKey=<searchport token>][&authMode=WithinHeaders|WithinQueryParameters]
// [&dynamic=1: the facet lists come from dynamicWidgets, i.e. from renderingContent]
// [&lists=region,country: only a refinementList of each of these attributes]
// [&mode=keywordSearch|neuralSearch: Algolia's search parameter, sent with every search].
"use strict";

const settings = new URLSearchParams(window.location.search);
const { liteClient } = window["algoliasearch/lite"];
const searchClient = liteClient("searchport-e2e", settings.get("apiKey") || "no-key", {
  hosts: [{ url: settings.get("host"), protocol: "http", accept: "readWrite" }],
  authMode: settings.get("authMode") || "WithinQueryParameters",
});

const { configure, searchBox, stats, hits, refinementList, rangeSlider, rangeInput, pagination,
        dynamicWidgets, hierarchicalMenu, breadcrumb } = instantsearch.widgets;

const search = instantsearch({ indexName: settings.get("index"), searchClient });
search.on("error", (event) => {
  // the client's ApiError: its name, the HTTP status and the body's "message"
  const error = event.error || event;
  const status = error.status === undefined ? "" : ` ${error.status}`;
  document.querySelector("#error").textContent = `${error.name}${status}: ${error.message}`;
});
const lists = settings.get("lists");
const facetWidgets = lists ? lists.split(",").map((attribute) =>
  refinementList({ container: `#${attribute}`, attribute })
) : settings.get("dynamic") ? [
  dynamicWidgets({
    container: "#dynamic",
    widgets: [],  // no widget of its own: every facet through the fallback, in the order given
    fallbackWidget: ({ container, attribute }) => refinementList({ container, attribute }),
  }),
] : [
  refinementList({ container: "#region", attribute: "region" }),
  refinementList({ container: "#country", attribute: "country", searchable: true,
                   searchablePlaceholder: "Find a country" }),
  rangeSlider({ container: "#population-slider", attribute: "population", pips: false }),
  rangeInput({ container: "#population-input", attribute: "population" }),
  // the rows' levels: lvl0 the continent, lvl1 "continent > country"
  hierarchicalMenu({ container: "#hierarchy", attributes: ["lvl0", "lvl1"], limit: 100,
                     sortBy: ["count:desc", "name:asc"] }),
  breadcrumb({ container: "#breadcrumb", attributes: ["lvl0", "lvl1"] }),
];
search.addWidgets([
  configure(settings.get("mode") ? { hitsPerPage: 10, mode: settings.get("mode") }
                                  : { hitsPerPage: 10 }),
  searchBox({ container: "#searchbox", placeholder: "Search cities" }),
  stats({ container: "#stats" }),
  ...facetWidgets,
  hits({
    container: "#hits",
    templates: {
      item: (hit, { html, components }) => html`
        <article class="hit" data-id="${hit.objectID}" data-position="${hit.__position}">
          <h3 class="hit-name">${components.Highlight({ attribute: "name", hit })}</h3>
          <p>
            <span class="hit-country">${hit.country}</span> ·
            <span class="hit-region">${hit.region}</span> ·
            <span class="hit-population">${hit.population}</span>
          </p>
        </article>`,
    },
  }),
  pagination({ container: "#pagination" }),
]);
search.start();
