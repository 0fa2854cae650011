// The keyword <-> meaning slider, on handles that search by meaning (GET /indexes says so:
// capabilities.semantic). Its value is the search's `semantic` (0: words only, 1: meaning
// only); the page starts half way on such a handle. A sorted search ranks by its sort, not
// by meaning: the slider is then disabled and `semantic` not sent.

export const DEFAULT_MEANING = 0.5;

const $ = (selector) => document.querySelector(selector);

/** The share of meaning a search of this state sends (undefined: none). */
export function meaningParam(state) {
  if (!state.meta?.capabilities.semantic || state.sort) return undefined;
  return state.semantic ?? DEFAULT_MEANING;
}

/** Shows the slider for the state's handle, at the state's value. */
export function showMeaning(state) {
  const box = $("#meaning");
  const on = Boolean(state.meta?.capabilities.semantic);
  box.hidden = !on;
  if (!on) return;
  const slider = $("#semantic");
  const value = state.semantic ?? DEFAULT_MEANING;
  slider.value = String(value);
  slider.disabled = Boolean(state.sort);
  slider.title = state.sort ? "A sorted search ranks by its sort, not by meaning" : "";
  slider.setAttribute("aria-valuetext", describe(value));
  $("#meaning-value").textContent = describe(value);
}

function describe(value) {
  if (value <= 0) return "words only";
  if (value >= 1) return "meaning only";
  return `${Math.round(value * 100)}% meaning`;
}

/** Calls ``changed(value)`` when the slider is moved (a while after it stops). */
export function watchMeaning(changed, debounce) {
  const slider = $("#semantic");
  const later = debounce(() => changed(Number(slider.value)), 150);
  slider.addEventListener("input", () => {
    $("#meaning-value").textContent = describe(Number(slider.value));
    later();
  });
}
