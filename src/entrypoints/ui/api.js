// searchport's own JSON API, as the page calls it: the key (when one is needed) comes from
// session storage, errors carry the API's {"error"} sentence, timings come from Server-Timing.

const KEY_STORAGE = "searchport.apiKey";
// this module lives at <root>/ui/assets/api.js: the API is at <root>/
const ROOT = new URL("../../", import.meta.url);

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export const apiKey = {
  get: () => sessionStorage.getItem(KEY_STORAGE) || "",
  set: (key) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

function serverTiming(header) {
  const timing = {};
  for (const part of (header || "").split(",")) {
    const match = /^\s*([\w-]+)\s*;.*dur=([\d.]+)/.exec(part);
    if (match) timing[match[1]] = Number(match[2]);
  }
  return timing;
}

/** GET a JSON answer; params: a plain object (objects and arrays are sent as JSON text). */
export async function getJson(path, params = {}, signal = undefined) {
  const url = new URL(path.replace(/^\//, ""), ROOT);
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    url.searchParams.set(name, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  const headers = { Accept: "application/json" };
  const key = apiKey.get();
  if (key) headers.Authorization = `Bearer ${key}`;
  let response;
  try {
    response = await fetch(url, { headers, signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError("searchport cannot be reached. Is the server running?", 0);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    // searchport's own routes say {"error"}; Algolia's routes (/1/, /2/) say {"message"}
    const said = body && (typeof body.error === "string" ? body.error : body.message);
    const message = typeof said === "string" ? said : `The server answered ${response.status}.`;
    throw new ApiError(message, response.status);
  }
  return { body, timing: serverTiming(response.headers.get("Server-Timing")) };
}
