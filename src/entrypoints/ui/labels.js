// How the page names fields and shows values: one place, so a facet list, a filter chip and a
// result say the same thing ("yes", not "true"; "1,234", not "1234").

const whole = new Intl.NumberFormat();
const NUMERIC = new Set(["integer", "float"]);

/** "alternateNames" -> "Alternate Names". */
export function fieldLabel(field) {
  return field.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/^./, (c) => c.toUpperCase());
}

export function formatPoint(lat, lon) {
  const f = (v, pos, neg) => `${Math.abs(v).toFixed(2)}°${v >= 0 ? pos : neg}`;
  return `${f(lat, "N", "S")} ${f(lon, "E", "W")}`;
}

/** A value of a document as the page shows it. */
export function formatValue(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return whole.format(value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map(formatValue).join(", ");
  if (typeof value === "object" && "lat" in value && "lon" in value) return formatPoint(value.lat, value.lon);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * A facet or filter value (the text the API's facets answer and its filters take) shown as
 * the same value is in a result: the field's type (from GET /:handle/fields) says how.
 */
export function formatFacetValue(type, value) {
  const flag = value === "true" || value === "false";
  if (flag && (type === "boolean" || !type)) return formatValue(value === "true");
  if (NUMERIC.has(type) && value !== "" && Number.isFinite(Number(value))) return formatValue(Number(value));
  return formatValue(value);
}

/** A range of numbers, both ends included; an end that is null is open. */
export function formatRange(min, max) {
  if (min === null) return `≤ ${formatValue(max)}`;
  if (max === null) return `≥ ${formatValue(min)}`;
  return `${formatValue(min)} – ${formatValue(max)}`;
}
