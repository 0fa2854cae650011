// The stock algoliasearch JavaScript client (v5, Node requester) against a real searchport
// serve: each read call the client offers, and how it reports a write. Prints one JSON line
// with every answer (or the error's status and message) for tests/e2e/test_algolia_js_client.py.
import { algoliasearch } from "algoliasearch";

const [url, indexName, id, other] = process.argv.slice(2);
const { host } = new URL(url);
const client = algoliasearch("any-app-id", "any-key", {
  hosts: [{ url: host, protocol: "http", accept: "readWrite" }],
});

async function outcome(call) {
  try {
    return { ok: await call() };
  } catch (error) {
    return { status: error.status ?? null, message: error.message };
  }
}

const out = {
  getObject: await outcome(() => client.getObject({ indexName, objectID: id })),
  getObjectSome: await outcome(() =>
    client.getObject({ indexName, objectID: id, attributesToRetrieve: ["name"] })),
  getObjectMissing: await outcome(() => client.getObject({ indexName, objectID: "no-such-id" })),
  getObjects: await outcome(() => client.getObjects({
    requests: [
      { indexName, objectID: other },
      { indexName, objectID: "no-such-id" },
      { indexName, objectID: id, attributesToRetrieve: ["name"] },
    ],
  })),
  listIndices: await outcome(() => client.listIndices()),
  getSettings: await outcome(() => client.getSettings({ indexName })),
  browse: await outcome(() =>
    client.browse({ indexName, browseParams: { hitsPerPage: 5, filters: "region:Europe" } })),
  search: await outcome(() => client.searchSingleIndex({
    indexName, searchParams: { query: "", hitsPerPage: 3, facets: ["region"] },
  })),
  saveObject: await outcome(() =>
    client.saveObject({ indexName, body: { objectID: "x", name: "x" } })),
  deleteIndex: await outcome(() => client.deleteIndex({ indexName })),
};
process.stdout.write(JSON.stringify(out) + "\n");
