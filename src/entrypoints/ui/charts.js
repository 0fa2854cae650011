// The two pictures of a result set, drawn as SVG: a histogram of a numeric field and the geo
// clusters on a world outline (equirectangular: x = lon + 180, y = 90 - lat).

import { LAND } from "./world.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(name, attrs = {}, text = undefined) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) {
    const title = document.createElementNS(SVG, "title");
    title.textContent = text;
    node.append(title);
  }
  return node;
}

const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
const whole = new Intl.NumberFormat();
const plain = new Intl.NumberFormat(undefined, { useGrouping: false, maximumFractionDigits: 2 });

/** A bound of a histogram: compact for large spans (2.5M), exact where compact would round
 *  both ends to one label (years, 1972 to 2022). */
function bound(value, span) {
  return span >= 1000 || Math.abs(value) >= 100000 ? compact.format(value) : plain.format(value);
}

function activate(node, label, action) {
  node.setAttribute("tabindex", "0");
  node.setAttribute("role", "button");
  node.setAttribute("aria-label", label);
  node.addEventListener("click", action);
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      action();
    }
  });
}

/** Bars of ``buckets`` ({key, count}); a click on a bar calls onPick(lower, upper). */
export function drawHistogram(container, buckets, interval, onPick) {
  container.replaceChildren();
  if (!buckets.length) {
    container.append(Object.assign(document.createElement("p"), {
      className: "empty-chart", textContent: "No values in these results.",
    }));
    return;
  }
  const width = 600;
  const height = 300;
  const bottom = 26;
  const max = Math.max(...buckets.map((b) => b.count), 1);
  const step = width / buckets.length;
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, class: "histogram", role: "group",
    "aria-label": "Histogram",
  });
  buckets.forEach((bucket, i) => {
    // logarithmic heights: one huge bucket does not flatten all the others
    const h = bucket.count ? Math.max(3, ((height - bottom - 8) * Math.log1p(bucket.count)) / Math.log1p(max)) : 0;
    const upper = bucket.key + interval;
    const span = upper - bucket.key;
    const label = `${bound(bucket.key, span)} to ${bound(upper, span)}: ${whole.format(bucket.count)}`;
    const group = svg("g", { class: "bar", "data-key": bucket.key, "data-count": bucket.count }, label);
    group.append(svg("rect", { x: i * step, y: 0, width: step, height: height - bottom, class: "hit-area" }));
    group.append(svg("rect", {
      x: i * step + Math.min(1, step * 0.1), y: height - bottom - h,
      width: Math.max(1, step - Math.min(2, step * 0.2)), height: h, rx: 1.5, class: "fill",
    }));
    if (bucket.count) activate(group, `Filter ${label}`, () => onPick(bucket.key, upper));
    chart.append(group);
  });
  chart.append(svg("line", { x1: 0, x2: width, y1: height - bottom, y2: height - bottom, class: "axis" }));
  const first = buckets[0].key;
  const last = buckets[buckets.length - 1].key + interval;
  for (const [x, value, anchor] of [[0, first, "start"], [width, last, "end"]]) {
    const text = svg("text", { x, y: height - 7, "text-anchor": anchor, class: "tick" });
    text.textContent = bound(value, last - first);
    chart.append(text);
  }
  container.append(chart);
}

/** The latitude/longitude box of a geotile "z/x/y" (Web Mercator tiles, as engines use). */
export function tileBounds(key) {
  const [z, x, y] = key.split("/").map(Number);
  const n = 2 ** z;
  const lat = (row) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * row) / n))) * 180) / Math.PI;
  return {
    top_left: { lat: lat(y), lon: (x / n) * 360 - 180 },
    bottom_right: { lat: lat(y + 1), lon: ((x + 1) / n) * 360 - 180 },
  };
}

/** Clusters ({lat, lng, count, key, hit}) as circles; a click calls onPick(cluster). */
export function drawMap(container, clusters, bounds, describe, onPick) {
  container.replaceChildren();
  let view = [0, 0, 360, 180];
  if (bounds) {
    const left = bounds.top_left.lon + 180;
    const top = 90 - bounds.top_left.lat;
    view = [left, top, bounds.bottom_right.lon + 180 - left, 90 - bounds.bottom_right.lat - top];
  }
  const scale = view[2] / 360;
  const chart = svg("svg", {
    viewBox: view.join(" "), class: "map", role: "group", "aria-label": "Map of the results",
    preserveAspectRatio: "xMidYMid meet",
  });
  chart.append(svg("rect", { x: 0, y: 0, width: 360, height: 180, class: "sea" }));
  chart.append(svg("path", { d: LAND, class: "land", "vector-effect": "non-scaling-stroke" }));
  const max = Math.max(...clusters.map((c) => c.count), 1);
  const sorted = [...clusters].sort((a, b) => b.count - a.count);
  for (const cluster of sorted) {
    const r = (1.2 + 7 * Math.sqrt(cluster.count / max)) * scale;
    const label = describe(cluster);
    const circle = svg("circle", {
      cx: cluster.lng + 180, cy: 90 - cluster.lat, r, class: "cluster",
      "data-key": cluster.key, "data-count": cluster.count, "vector-effect": "non-scaling-stroke",
    }, label);
    activate(circle, `Zoom into ${label}`, () => onPick(cluster));
    chart.append(circle);
  }
  container.append(chart);
}
