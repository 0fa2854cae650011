// At phone width the facets live in a drawer that slides over the results: a Filters button
// in the results' toolbar opens it, "Show results", the backdrop or Escape close it. On wider
// screens the same element is the sidebar and none of this shows (style.css decides).

const OPEN = "filters-open";
const NARROW = "(max-width: 860px)"; // style.css's breakpoint for the drawer

export function setUpFilterDrawer() {
  const body = document.body;
  const opener = document.querySelector("#filters-open");
  const closer = document.querySelector("#filters-close");
  const behind = [document.querySelector(".top"), document.querySelector(".results")];

  const toggle = (open) => {
    body.classList.toggle(OPEN, open);
    opener.setAttribute("aria-expanded", String(open));
    // while the drawer is open, the page behind it takes no focus or clicks
    for (const part of behind) part.inert = open;
    (open ? closer : opener).focus({ preventScroll: true });
  };
  opener.addEventListener("click", () => toggle(true));
  closer.addEventListener("click", () => toggle(false));
  document.querySelector("#filters-backdrop").addEventListener("click", () => toggle(false));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && body.classList.contains(OPEN)) toggle(false);
  });
  // a window widened past the breakpoint shows the sidebar: nothing stays inert
  matchMedia(NARROW).addEventListener("change", (event) => {
    if (!event.matches && body.classList.contains(OPEN)) toggle(false);
  });
}

/** The Filters button and the drawer's close button say how many filters and results there are. */
export function labelFilterDrawer(filterCount, resultsText) {
  document.querySelector("#filters-open").textContent = filterCount ? `Filters (${filterCount})` : "Filters";
  document.querySelector("#filters-close").textContent = `Show ${resultsText}`;
}
