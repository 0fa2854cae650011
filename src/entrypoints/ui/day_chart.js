// A count per day as SVG bars, drawn in the page itself (no chart library): linear heights
// from zero, each bar titled with its day and count, the counts written above the bars while
// there is room for them.

const SVG = "http://www.w3.org/2000/svg";
const whole = new Intl.NumberFormat("en-US");
const HEIGHT = 200; // the chart's height in CSS pixels; its width is the container's
const BOTTOM = 26; // room for the day labels
const TOP = 22; // room for the count above the tallest bar
const LABELLED = 16; // at most this many days have their count written above the bar

function svg(name, attrs = {}, text = undefined) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "2026-11-20" as "20 Nov" (the page names the period's year). */
export const shortDay = (day) => `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]}`;

/** Bars of ``days`` ([{day: "YYYY-MM-DD", count}]) into ``container`` (drawn again by the
caller when the container's width changes). */
export function drawDays(container, days) {
  container.replaceChildren();
  // drawn at the container's own width, so that text keeps its size on a phone and a desktop
  const width = Math.max(240, Math.round(container.clientWidth || 640));
  const labelled = Math.min(LABELLED, Math.floor(width / 28));
  const total = days.reduce((sum, d) => sum + d.count, 0);
  const max = Math.max(1, ...days.map((d) => d.count));
  const step = width / Math.max(1, days.length);
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${HEIGHT}`, class: "days", role: "img",
    "aria-label": `Searches per day: ${whole.format(total)} in ${days.length} days`,
  });
  const floor = HEIGHT - BOTTOM;
  days.forEach((d, i) => {
    const h = d.count ? Math.max(2, ((floor - TOP) * d.count) / max) : 0;
    const bar = svg("g", { class: "day", "data-date": d.day, "data-count": d.count });
    bar.append(svg("title", {}, `${d.day}: ${whole.format(d.count)} searches`));
    const gap = Math.min(6, step * 0.2);
    bar.append(svg("rect", {
      x: i * step + gap / 2, y: floor - h, width: Math.max(1, step - gap), height: h, rx: 2,
      class: "fill",
    }));
    if (days.length <= labelled) {
      bar.append(svg("text", {
        x: i * step + step / 2, y: floor - h - 6, "text-anchor": "middle", class: "value",
      }, whole.format(d.count)));
    }
    chart.append(bar);
  });
  chart.append(svg("line", { x1: 0, x2: width, y1: floor, y2: floor, class: "axis" }));
  // the first and last days, and a few between when they fit
  const every = Math.max(1, Math.ceil(days.length / Math.max(2, Math.floor(width / 56))));
  days.forEach((d, i) => {
    if (i % every && i !== days.length - 1) return;
    if (i !== days.length - 1 && days.length - 1 - i < every) return; // too close to the last
    chart.append(svg("text", {
      x: i * step + step / 2, y: HEIGHT - 8, "text-anchor": "middle", class: "tick",
    }, shortDay(d.day)));
  });
  container.append(chart);
}
