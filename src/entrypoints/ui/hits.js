// A result card and the pager, drawn from an answer of GET /:handle/search: text through
// textContent, highlights through highlight.js only.

import { el } from "./dom.js";
import { appendHighlighted } from "./highlight.js";
import { fieldLabel as label, formatPoint, formatValue } from "./labels.js";

const whole = new Intl.NumberFormat();

/** One hit as a card: ``meta`` says which fields are the title, facts, numbers, place. */
export function renderHit(hit, meta) {
  const highlights = hit._highlights || {};
  const titleField = meta.title && hit[meta.title] !== undefined ? meta.title : null;
  const heading = el("h3", { class: "hit-title" });
  if (titleField && highlights[titleField]?.length) appendHighlighted(heading, highlights[titleField][0]);
  else heading.textContent = titleField ? formatValue(hit[titleField]) : hit.objectID;

  const facts = el("div", { class: "facts" });
  const said = new Set(); // two facets holding the same value (a hierarchy's levels) say it once
  for (const field of meta.facets) {
    const value = hit[field];
    if (value === undefined || value === null || value === "") continue;
    if (typeof value === "boolean") {
      if (value) facts.append(el("span", { class: "badge" }, label(field)));
    } else if (!said.has(formatValue(value))) {
      said.add(formatValue(value));
      facts.append(el("span", { class: "fact", title: label(field) }, formatValue(value)));
    }
  }
  const side = el("div", { class: "hit-side" });
  for (const field of meta.numeric.slice(0, 2)) {
    if (typeof hit[field] === "number") {
      side.append(el("div", { class: "metric" }, el("strong", {}, whole.format(hit[field])),
        el("span", {}, label(field).toLowerCase())));
    }
  }
  if (meta.geo && hit[meta.geo]?.lat !== undefined) {
    side.append(el("div", { class: "coords" }, formatPoint(hit[meta.geo].lat, hit[meta.geo].lon)));
  }

  const matched = el("div", { class: "matched" });
  for (const [field, fragments] of Object.entries(highlights)) {
    if (field === titleField || !fragments.length) continue;
    const line = el("p", {}, el("span", { class: "field" }, `${label(field)}: `));
    fragments.slice(0, 3).forEach((fragment, i) => {
      if (i) line.append(" · ");
      appendHighlighted(line, fragment);
    });
    matched.append(line);
  }

  const rows = Object.entries(hit).filter(([k]) => !k.startsWith("_"))
    .map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, formatValue(v))));
  const details = el("details", { class: "all-fields" }, el("summary", {}, "All fields"),
    el("table", {}, el("tbody", {}, ...rows)));

  facts.append(details);
  return el("li", { class: "hit", "data-id": hit.objectID },
    el("div", { class: "hit-main" }, heading, facts, matched.childElementCount ? matched : null),
    side);
}

/** Pages 1, the last and two either side of the current one; ``goTo(page)`` shows one. */
export function renderPagination(nav, body, goTo) {
  const last = body.totalPages; // only pages that can be fetched (the handle's result window)
  if (last <= 1) {
    nav.replaceChildren();
    return;
  }
  const go = (page) => () => goTo(page);
  const pages = new Set([1, last]);
  for (let p = body.page - 2; p <= body.page + 2; p += 1) if (p >= 1 && p <= last) pages.add(p);
  const items = [el("button", { type: "button", class: "page", disabled: body.page <= 1,
    "aria-label": "Previous page", onclick: go(body.page - 1) }, "‹ Prev")];
  let previous = 0;
  for (const page of [...pages].sort((a, b) => a - b)) {
    if (page - previous > 1) items.push(el("span", { class: "gap" }, "…"));
    items.push(el("button", {
      type: "button", class: "page", "aria-current": page === body.page ? "page" : undefined,
      "aria-label": `Page ${page}`, onclick: go(page),
    }, whole.format(page)));
    previous = page;
  }
  items.push(el("button", { type: "button", class: "page", disabled: body.page >= last,
    "aria-label": "Next page", onclick: go(body.page + 1) }, "Next ›"));
  nav.replaceChildren(...items);
}
