// How the playground writes on the page: a character as it is shown (a space, newline or tab as a visible
// mark) and as a screen reader says it, and an element built from a tag, attributes and children.
// Used by playground.js, playground-step.js and playground-chart.js, loaded before them.
// A classic script (global PlaygroundText), so the page also works from file://.
(function () {
"use strict";

function visible(ch) {
  if (ch === " ") return "\u2423";
  if (ch === "\n") return "\u21b5";
  if (ch === "\t") return "\u21e5";
  return ch;
}

function spoken(ch) {
  if (ch === " ") return "space";
  if (ch === "\n") return "newline";
  if (ch === "\t") return "tab";
  return `\u201c${ch}\u201d`;
}

// The page's CSP forbids style attributes, so custom properties go through the CSSOM ("vars").
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "vars") for (const [name, v] of Object.entries(value)) node.style.setProperty(name, v);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

window.PlaygroundText = { visible, spoken, el };
})();
