// The key prompt both pages share. It stands in for the parts of the page that need a key
// (`covers`: CSS selectors) until `load` succeeds with the key typed; the key lives in session
// storage (api.js), so it is forgotten with the tab or by "Forget".

import { apiKey } from "./api.js";

const $ = (selector) => document.querySelector(selector);

export function keyPrompt({ covers, load, failed }) {
  function ask(message) {
    $("#key-panel").hidden = false;
    for (const selector of covers) $(selector).hidden = true;
    $("#key-button").hidden = true;
    $("#key-error").textContent = message || "";
    $("#key-forget").hidden = !apiKey.get();
    $("#key").value = "";
    $("#key").focus();
  }

  $("#key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    apiKey.set($("#key").value.trim());
    load().catch(failed);
  });
  $("#key-forget").addEventListener("click", () => {
    apiKey.clear();
    ask("");
  });
  $("#key-button").addEventListener("click", () => ask(""));

  return {
    ask,
    /** A 401: no key was given, or the one given was refused. */
    refused: () => ask(apiKey.get() ? "That key was refused: check it and try again." : ""),
    /** The key (or none) was accepted: the prompt gives the page back. */
    accepted() {
      $("#key-panel").hidden = true;
      $("#key-button").hidden = !apiKey.get();
    },
  };
}
