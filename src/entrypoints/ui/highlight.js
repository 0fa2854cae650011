// Highlight fragments are HTML-escaped document text with only <mark> and </mark> added.
// The page never hands them to innerHTML: it checks that shape, then builds text nodes and
// <mark> elements itself. Anything else is shown as plain text.

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const ENTITY = /&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos);/g;

function decode(text) {
  return text.replace(ENTITY, (_, name) => {
    if (name[0] !== "#") return ENTITIES[name];
    const code = name[1] === "x" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
  });
}

/** Text pieces and marked pieces of a fragment, or null when it is not of the safe shape. */
export function parseFragment(fragment) {
  if (typeof fragment !== "string") return null;
  const pieces = [];
  let marked = false;
  for (const part of fragment.split(/(<mark>|<\/mark>)/)) {
    if (part === "<mark>" || part === "</mark>") {
      if (marked === (part === "<mark>")) return null; // nested or unbalanced
      marked = !marked;
      continue;
    }
    if (/[<>]/.test(part) || /&(?!(#\d{1,7}|#x[0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos);)/.test(part)) {
      return null;
    }
    if (part) pieces.push({ text: decode(part), marked });
  }
  return marked ? null : pieces;
}

/** Append a fragment to ``parent``: <mark> elements for the matches, text nodes for the rest. */
export function appendHighlighted(parent, fragment) {
  const pieces = parseFragment(fragment);
  if (pieces === null) {
    parent.append(document.createTextNode(String(fragment)));
    return;
  }
  for (const { text, marked } of pieces) {
    if (marked) {
      const mark = document.createElement("mark");
      mark.textContent = text;
      parent.append(mark);
    } else {
      parent.append(document.createTextNode(text));
    }
  }
}
