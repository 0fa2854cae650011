// ?host=127.0.0.1:<port>&index=<handle>&apiKey=<searchport key>: InstantSearch with
// `insights: true` finds the search-insights that insights.html initialised (window.aa) and
// sends its click, conversion and view events through it; every search asks for a queryID.
"use strict";

const settings = new URLSearchParams(window.location.search);
const { liteClient } = window["algoliasearch/lite"];
const searchClient = liteClient("searchport-e2e", settings.get("apiKey"), {
  hosts: [{ url: settings.get("host"), protocol: "http", accept: "readWrite" }],
});

const { searchBox, hits } = instantsearch.widgets;
const search = instantsearch({ indexName: settings.get("index"), searchClient, insights: true });
search.addWidgets([
  searchBox({ container: "#searchbox", placeholder: "Search cities" }),
  hits({
    container: "#hits",
    templates: {
      item: (hit, { html, components, sendEvent }) => html`
        <article class="hit" data-id="${hit.objectID}" data-position="${hit.__position}">
          <h3 class="hit-name">${components.Highlight({ attribute: "name", hit })}</h3>
          <button type="button" class="buy"
                  onClick="${(event) => {
                    event.stopPropagation();
                    sendEvent("conversion", hit, "Added to cart");
                  }}">Add to cart</button>
        </article>`,
    },
  }),
]);
search.start();
