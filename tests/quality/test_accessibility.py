"""WCAG 2.1 A and AA as axe-core checks them, and a keyboard-only walk, on every built page.

axe runs in Debian's chromium in both colour schemes, at a desktop and a phone width, because the
dark palette and the narrow layout each have their own contrast and overflow. The page CSP
(script-src 'self') blocks add_script_tag's inline script, so axe is evaluated through the
DevTools protocol, which the page's CSP does not govern.
"""
from __future__ import annotations

import pytest

from quality_support import AXE, exercise_widgets, need_node_modules, open_page

pytestmark = pytest.mark.browser

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
MODES = [("light", 1280), ("dark", 1280), ("light", 390), ("dark", 390)]

RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary.split("\\n").slice(1).join(" ").slice(0, 300))}));
}"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    return need_node_modules(AXE).read_text(encoding="utf-8")


def describe(violations) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}")
        lines += [f"    {n}" for n in v["nodes"][:6]]
    return "\n".join(lines)


@pytest.mark.parametrize("scheme,width", MODES, ids=[f"{s}-{w}px" for s, w in MODES])
def test_axe_finds_no_wcag_a_or_aa_violation(browser, origin, axe_source, page_name, scheme, width):
    visit = open_page(browser, origin, page_name, color_scheme=scheme, viewport={"width": width, "height": 900})
    try:
        exercise_widgets(visit.page)
        visit.page.evaluate(axe_source)
        violations = visit.page.evaluate(RUN_AXE, WCAG_TAGS)
    finally:
        visit.page.context.close()
    assert not violations, f"{page_name} ({scheme}, {width}px):\n{describe(violations)}"


FOCUSABLE = ("a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, iframe, "
             "[contenteditable=''], [contenteditable=true], [tabindex]")

# Marks every element that Tab should reach, and every one a composite widget takes out of the
# tab order on purpose (roving tabindex), so the walk can compare what it met against both.
MARK_TARGETS = """(selector) => {
  const composite = "[role=tablist], [role=radiogroup], [role=toolbar], [role=listbox], [role=menu], [role=menubar], [role=grid], [role=tree]";
  const shown = el => el.checkVisibility({visibilityProperty: true}) && !el.closest("[inert]");
  const out = {reach: [], roving: [], stray: []};
  let n = 0;
  for (const el of document.querySelectorAll(selector)) {
    if (!shown(el) || el.disabled) continue;
    const key = "k" + (n++);
    el.dataset.qaKey = key;
    const name = `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""} "${(el.getAttribute("aria-label") || el.textContent || el.value || "").trim().slice(0, 40)}"`;
    const item = {key, name, group: el.type === "radio" ? "radio:" + el.name : null};
    if (el.getAttribute("tabindex") === null || el.tabIndex >= 0) out.reach.push(item);
    else if (el.matches("a[href], button, input, select, textarea, summary, [role=tab], [role=radio], [role=option]")) {
      const owner = el.closest(composite);
      if (owner) { owner.dataset.qaGroup ||= "g" + (n++); item.group = owner.dataset.qaGroup; out.roving.push(item); }
      else out.stray.push(item);
    }
  }
  return out;
}"""

FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const s = getComputedStyle(el);
  const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 && s.outlineColor !== "rgba(0, 0, 0, 0)";
  const shadow = s.boxShadow !== "none";
  const r = el.getBoundingClientRect();
  const group = el.type === "radio" ? "radio:" + el.name : (el.closest("[data-qa-group]") || {dataset: {}}).dataset.qaGroup || null;
  return {key: el.dataset.qaKey || null, group, visible: (outline || shadow) && r.width > 0 && r.height > 0,
          name: `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}`.slice(0, 80),
          style: `outline ${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}; box-shadow ${s.boxShadow}`};
}"""


def test_tab_reaches_every_control_and_focus_is_always_visible(browser, origin, page_name):
    visit = open_page(browser, origin, page_name)
    page = visit.page
    try:
        targets = page.evaluate(MARK_TARGETS, FOCUSABLE)
        met, groups_met, invisible, order = set(), set(), [], []
        for _ in range(2 * len(targets["reach"]) + 5):
            page.keyboard.press("Tab")
            now = page.evaluate(FOCUSED)
            if now is None or (order and now["key"] is not None and now["key"] == order[0]):
                break  # past the last control, or round to the first again
            if order and now["key"] == order[-1]:
                pytest.fail(f"{page_name}: Tab does not move on from {now['name']}: a keyboard trap")
            order.append(now["key"])
            met.add(now["key"])
            if now["group"]:
                groups_met.add(now["group"])
            if not now["visible"]:
                invisible.append(f"{now['name']}: {now['style']}")
    finally:
        page.context.close()
    unreached = [t["name"] for t in targets["reach"] if t["key"] not in met and not (t["group"] and t["group"] in groups_met)]
    orphans = [t["name"] for t in targets["roving"] if t["group"] not in groups_met]
    assert not invisible, f"{page_name}: focus not visible on\n" + "\n".join(invisible)
    assert not unreached, f"{page_name}: Tab never reaches {unreached}"
    assert not orphans, f"{page_name}: no member of these composite widgets is in the tab order: {orphans}"
    assert not targets["stray"], f"{page_name}: controls taken out of the tab order (tabindex=-1): {targets['stray']}"
