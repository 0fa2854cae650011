// The facet lists and the chips of the filters in use, drawn from the search page's state
// (app.js) and changed through its actions: this module never searches by itself.

import { getJson } from "./api.js";
import { debounce, el } from "./dom.js";
import { fieldLabel as label, formatFacetValue, formatRange } from "./labels.js";

const $ = (selector) => document.querySelector(selector);
const whole = new Intl.NumberFormat();
const FACET_SHOWN = 8;

/**
 * ``state``: the page's state; ``actions``: ``toggle(field, value)`` a facet value,
 * ``refresh()`` the search, ``filtersBut(field)`` the filters without that field's own,
 * ``failed(error)`` says what went wrong.
 */
export function facetLists(state, actions) {
  // a facet value as the facet list, the chips and the results all show it
  function shownValue(field, value) {
    return formatFacetValue(state.meta.fields[field], value);
  }

  function renderChips() {
    const chips = [];
    const chip = (text, onremove) => el("button", {
      type: "button", class: "chip", "aria-label": `Remove filter ${text}`, onclick: onremove,
    }, text, el("span", { "aria-hidden": "true" }, "×"));
    for (const [field, values] of Object.entries(state.filters)) {
      for (const value of values) {
        chips.push(chip(`${label(field)}: ${shownValue(field, value)}`, () => actions.toggle(field, value)));
      }
    }
    if (state.range) {
      const { field, min, max } = state.range;
      chips.push(chip(`${label(field)}: ${formatRange(min, max)}`, () => {
        state.range = null;
        actions.refresh();
      }));
    }
    if (state.area) {
      chips.push(chip("Map area", () => {
        state.area = "";
        actions.refresh();
      }));
    }
    if (chips.length > 1) {
      chips.push(el("button", { type: "button", class: "link", onclick: () => {
        Object.assign(state, { filters: {}, range: null, area: "" });
        actions.refresh();
      } }, "Clear all"));
    }
    $("#chips").replaceChildren(...chips);
  }

  function facetOption(field, { value, count }) {
    const checked = (state.filters[field] || []).includes(value);
    const id = `f-${field}-${value}`.replace(/[^\w-]/g, (c) => `_${c.charCodeAt(0)}`);
    return el("li", { class: "facet-value" },
      el("input", { type: "checkbox", id, checked, "data-value": value, onchange: () => actions.toggle(field, value) }),
      el("label", { for: id }, el("span", { class: "value" }, shownValue(field, value)),
        el("span", { class: "count" }, count === null ? "" : whole.format(count))));
  }

  function renderFacets(facets) {
    const groups = [];
    for (const field of state.meta.facets) {
      const values = facets[field] || [];
      const selected = state.filters[field] || [];
      const listed = new Set(values.map((v) => v.value));
      const found = state.facetQuery[field];
      let shown;
      if (found) {
        shown = found.values;
      } else {
        const expanded = state.expanded.has(field);
        shown = [
          ...selected.filter((v) => !listed.has(v)).map((value) => ({ value, count: null })),
          ...values.filter((v, i) => expanded || i < FACET_SHOWN || selected.includes(v.value)),
        ];
      }
      const list = el("ul", { class: "facet-values" }, ...shown.map((v) => facetOption(field, v)));
      if (found && !found.values.length) list.append(el("li", { class: "muted" }, "No match"));
      const group = el("fieldset", { class: "facet", "data-field": field },
        el("legend", {}, label(field)), list);
      if (!found && values.length > FACET_SHOWN) {
        const expanded = state.expanded.has(field);
        group.append(el("button", { type: "button", class: "link", "aria-expanded": String(expanded), onclick: () => {
          if (expanded) state.expanded.delete(field);
          else state.expanded.add(field);
          renderFacets(facets);
        } }, expanded ? "Show fewer" : `Show ${values.length - FACET_SHOWN} more`));
      }
      if (state.meta.fields[field] !== "boolean" && (values.length >= FACET_SHOWN || found)) {
        group.append(facetSearchBox(field, facets));
      }
      if (!values.length && !selected.length) continue;
      groups.push(group);
    }
    const active = document.activeElement?.dataset?.facetSearch;
    // the checkbox just used keeps the focus (keyboard users, the drawer on a phone)
    const checkbox = document.activeElement?.closest(".facet-value") ? document.activeElement.id : "";
    $("#facets").replaceChildren(...groups);
    if (checkbox) document.getElementById(checkbox)?.focus({ preventScroll: true });
    if (active) {
      const input = $(`input[data-facet-search="${CSS.escape(active)}"]`);
      input?.focus();
      input?.setSelectionRange(input.value.length, input.value.length);
    }
  }

  function facetSearchBox(field, facets) {
    const lookup = debounce(async (text) => {
      if (!text) {
        delete state.facetQuery[field];
        renderFacets(facets);
        return;
      }
      try {
        const filters = actions.filtersBut(field);
        const { body } = await getJson(
          `/${encodeURIComponent(state.handle)}/facets/${encodeURIComponent(field)}`,
          { q: text, maxValues: 20, filters: Object.keys(filters).length ? filters : undefined });
        state.facetQuery[field] = { text, values: body.values };
        renderFacets(facets);
      } catch (error) {
        actions.failed(error);
      }
    }, 200);
    return el("input", {
      type: "search", class: "facet-search", placeholder: `Find ${label(field).toLowerCase()}…`,
      "aria-label": `Find a value of ${label(field)}`, "data-facet-search": field,
      value: state.facetQuery[field]?.text || "", oninput: (event) => lookup(event.target.value.trim()),
    });
  }

  return { renderChips, renderFacets };
}
