// The page's settings come from its URL: ?host=127.0.0.1:<port>&index=<suggestions handle>
// &source=<the handle it suggests from>[&apiKey=<searchport token>].
"use strict";

const settings = new URLSearchParams(window.location.search);
const { liteClient } = window["algoliasearch/lite"];
const searchClient = liteClient("searchport-e2e", settings.get("apiKey") || "no-key", {
  hosts: [{ url: settings.get("host"), protocol: "http", accept: "readWrite" }],
});
const { autocomplete } = window["@algolia/autocomplete-js"];
const { createQuerySuggestionsPlugin } = window["@algolia/autocomplete-plugin-query-suggestions"];

const querySuggestions = createQuerySuggestionsPlugin({
  searchClient,
  indexName: settings.get("index"),
  getSearchParams() {
    return { hitsPerPage: 5 };
  },
  // where Algolia's Query Suggestions records keep the top values of a source facet
  categoryAttribute: [settings.get("source"), "facets", "exact_matches", "country"],
  itemsWithCategories: 1,
  categoriesPerItem: 2,
});

autocomplete({
  container: "#autocomplete",
  placeholder: "Search cities",
  openOnFocus: true,
  debug: true,  // the panel stays open when the page loses focus
  // never the detached (mobile) mode: its default media query comes from the theme's CSS,
  // which this page does not load
  detachedMediaQuery: "none",
  plugins: [querySuggestions],
  onStateChange({ state }) {
    document.querySelector("#error").textContent = state.status === "error" ? "error" : "";
  },
});
