-- Mixed traffic for the soak test (bench/soak.py runs it; not used in CI).
--
--   taskset -c 1 wrk -t2 -c16 -d30s --timeout=5s -s bench/soak.lua http://127.0.0.1:PORT
--
-- Each wrk thread cycles through REQUESTS (the two threads start half a cycle apart).
-- JSON parameters are written raw below and URL-encoded once at start-up; "{n}" in a
-- query or body is replaced by a per-thread counter, so that request is a new one every
-- time (an unbounded per-request memo anywhere would show as RSS growth).
-- At the end one line is printed for bench/soak.py:
--   SOAK_JSON {"requests":..,"rps":..,"p50_ms":..,"s2xx":..,"s4xx":..,"s5xx":..,...}
-- with responses counted by status class over both threads (the 4xx below are on
-- purpose and are not errors; 5xx and socket errors are).
--
-- Format (bench/soak.py reads this list too, to check every request once before the run):
--   {"METHOD", "/path", 'query or JSON body', expected status[, "gzip"]},
-- Not in the list: GET /bench/facets/<field>. The fake upstream's canned answer names its
-- aggregations "category" and "period" whatever the request, searchport names them
-- facet_0, ..., so facet-value search on the fake engine is a 502 by construction (and
-- /bench/search answers with its hits but no facets).
local REQUESTS = {
  -- cities (embedded tantivy): searches
  {"GET", "/cities/search", 'q=paris&facets=region,country', 200, "gzip"},
  {"GET", "/cities/search", 'q=berlin&filters={"region":"Europe","population":{"min":1000000}}&sort={"population":"desc"}', 200},
  {"GET", "/cities/search", 'q=san&page=2&perPage=10&facets=country,capital', 200},
  {"GET", "/cities/search", 'q=new york&highlight=true', 200},
  {"GET", "/cities/search", 'filters={"capital":true}&sort={"population":"desc"}&facets=region', 200},
  {"GET", "/cities/search", 'q=springfield&filters={"countryCode":["US","CA"]}', 200},
  {"GET", "/cities/search", 'perPage=1&histogram={"population":1000000}&geoGrid={"field":"location","precision":2}', 200},
  {"GET", "/cities/search", 'q=lon&filters={"region":"Europe"}&geoGrid={"field":"location","precision":4}', 200, "gzip"},
  {"GET", "/cities/search", 'q=tokyo&fields=name,country,population&highlight=false', 200},
  {"GET", "/cities/search", 'q=saint&filters={"population":{"min":-{n}}}', 200},
  {"GET", "/cities/search", 'q=mexico&filters={"region":{"not":["Europe","Asia"]}}&facets=region,country,capital', 200},
  {"GET", "/cities/search", 'q=rio&histogram={"population":500000}&sort={"country":"asc"}', 200},
  -- cities: facet values, autocomplete, documents, raw query, mapping
  {"GET", "/cities/facets/country", 'q=ger', 200},
  {"GET", "/cities/facets/region", '', 200},
  {"GET", "/cities/facets/timezone", 'q=america&maxValues=20', 200},
  {"GET", "/cities/autocomplete", 'q=ber&facets=country', 200},
  {"GET", "/cities/autocomplete", 'q=sain', 200, "gzip"},
  {"GET", "/cities/documents/2988507", '', 200},
  {"GET", "/cities/documents/2950159", '', 200},
  {"POST", "/cities/query", '{"query": "name:london AND population:[100000 TO *]", "limit": 5}', 200},
  {"GET", "/cities/mapping", '', 200},
  -- bench (Elasticsearch 8, the fake upstream on 127.0.0.1:9201)
  {"GET", "/bench/search", 'q=castle&facets=category,period&highlight=true', 200},
  {"GET", "/bench/search", 'q=castle', 200, "gzip"},
  {"GET", "/bench/search", 'q=portrait&filters={"category":"painting"}&sort={"dateCreated":"desc"}', 200},
  {"GET", "/bench/search", 'q=river {n}&page=3', 200},
  {"GET", "/bench/autocomplete", 'q=cas', 200},
  {"GET", "/bench/documents/1001", '', 200},
  {"POST", "/bench/query", '{"query":{"match":{"title":"castle"}},"size":20}', 200},
  {"GET", "/bench/mapping", '', 200},
  -- service routes
  {"GET", "/health", '', 200},
  {"GET", "/indexes", '', 200},
  {"GET", "/metrics", '', 200},
  -- client mistakes, on purpose (4xx, not errors)
  {"GET", "/cities/documents/no-such-city", '', 404},
  {"GET", "/cities/search", 'page=1000&perPage=20', 400},
  {"GET", "/cities/search", 'q=paris&filters=notjson', 400},
  {"GET", "/no-such-handle/search", 'q=x', 404},
  {"GET", "/cities/search", 'sort={"nofield":"desc"}', 400},
}

local function encode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

local function encode_query(query)
  local parts = {}
  for pair in query:gmatch("[^&]+") do
    local key, value = pair:match("^([^=]*)=(.*)$")
    if key then
      parts[#parts + 1] = key .. "=" .. encode(value)
    else
      parts[#parts + 1] = encode(pair)
    end
  end
  return table.concat(parts, "&")
end

local threads = {}

function setup(thread)
  thread:set("thread_no", #threads)
  threads[#threads + 1] = thread
end

-- per-thread state (each wrk thread has its own Lua state)
local prepared = {}
local position = 0
local counter = 0
s2xx, s3xx, s4xx, s5xx = 0, 0, 0, 0

function init(args)
  for i, r in ipairs(REQUESTS) do
    local method, path, params, gzip = r[1], r[2], r[3], r[5]
    local headers = {}
    if gzip then headers["Accept-Encoding"] = "gzip" end
    local entry = {method = method, headers = headers}
    if method == "POST" then
      headers["Content-Type"] = "application/json"
      entry.path, entry.body = path, params
    elseif params ~= "" then
      entry.path = path .. "?" .. encode_query(params)
    else
      entry.path = path
    end
    entry.dynamic = entry.path:find("%7Bn%7D", 1, true) ~= nil
      or (entry.body ~= nil and entry.body:find("{n}", 1, true) ~= nil)
    prepared[i] = entry
  end
  position = math.floor((thread_no or 0) * #prepared / 2)
  counter = (thread_no or 0) * 1000000000 + os.time() % 100000 * 1000
end

function request()
  position = position % #prepared + 1
  local r = prepared[position]
  if not r.dynamic then
    return wrk.format(r.method, r.path, r.headers, r.body)
  end
  counter = counter + 1
  local n = tostring(counter)
  local path = r.path:gsub("%%7Bn%%7D", n)
  local body = r.body and r.body:gsub("{n}", n)
  return wrk.format(r.method, path, r.headers, body)
end

function response(status, headers, body)
  if status >= 500 then
    s5xx = s5xx + 1
  elseif status >= 400 then
    s4xx = s4xx + 1
  elseif status >= 300 then
    s3xx = s3xx + 1
  else
    s2xx = s2xx + 1
  end
end

function done(summary, latency, requests)
  local c = {s2xx = 0, s3xx = 0, s4xx = 0, s5xx = 0}
  for _, t in ipairs(threads) do
    for k in pairs(c) do c[k] = c[k] + (t:get(k) or 0) end
  end
  local e = summary.errors
  local function ms(us) return us / 1000.0 end
  io.write(string.format(
    'SOAK_JSON {"requests":%d,"duration_s":%.6f,"rps":%.3f,"bytes":%d,' ..
    '"p50_ms":%.4f,"p90_ms":%.4f,"p99_ms":%.4f,"p999_ms":%.4f,"max_ms":%.4f,' ..
    '"s2xx":%d,"s3xx":%d,"s4xx":%d,"s5xx":%d,"err_status":%d,' ..
    '"err_connect":%d,"err_read":%d,"err_write":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    summary.bytes,
    ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)),
    ms(latency:percentile(99.9)), ms(latency.max),
    c.s2xx, c.s3xx, c.s4xx, c.s5xx, e.status,
    e.connect, e.read, e.write, e.timeout))
end
