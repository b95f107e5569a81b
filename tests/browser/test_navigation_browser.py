"""The frame of every page on a phone (issue 10 item 7, navigation part): at 390 px the first screen shows the
page's title and the start of its text, the section list waits in a <details> that opens on request without
JavaScript, and on a wide screen the list (main path, then the appendix under its own heading) simply shows."""

import pytest
import yaml

from browser_support import require_chromium
from support import ROOT

pytestmark = pytest.mark.browser

sync_api = require_chromium()
CONFIG = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module", params=[True, False], ids=["with-script", "without-script"])
def phone(browser, request):
    context = browser.new_context(viewport=PHONE, java_script_enabled=request.param)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("slug", CONFIG["pages"] + CONFIG.get("beyond", []) + CONFIG["appendix"])
def test_the_first_phone_screen_shows_the_title_and_the_start_of_the_text(phone, origin, slug):
    phone.goto(f"{origin}/{slug}.html")
    title = phone.locator("main h1").bounding_box()
    assert title and title["y"] + title["height"] <= PHONE["height"], slug
    first = phone.locator("main article > p, main article > figure").first.bounding_box()
    assert first and first["y"] < PHONE["height"] - 40, (slug, first)
    assert not phone.locator(".nav-list[data-nav='main']").is_visible(), slug


def test_the_section_list_opens_on_request_without_script(browser, origin):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/speedup.html")
    assert not pg.locator(".nav-list[data-nav='main'] a").first.is_visible()
    pg.click(".nav-disclosure > summary")
    links = pg.locator(".site-nav a")
    assert links.count() == len(CONFIG["pages"]) + len(CONFIG.get("beyond", [])) + len(CONFIG["appendix"])
    assert links.first.is_visible() and pg.locator(".nav-appendix-title").is_visible()
    assert pg.locator(".site-nav a[aria-current='page']").inner_text() == pg.locator("main h1").inner_text()
    context.close()


def test_on_a_wide_screen_the_main_path_and_the_appendix_show_without_a_click(browser, origin):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/index.html")
    main = pg.locator(".nav-list[data-nav='main'] a")
    appendix = pg.locator(".nav-list[data-nav='appendix'] a")
    assert main.count() == len(CONFIG["pages"]) and appendix.count() == len(CONFIG["appendix"])
    assert main.last.is_visible() and appendix.last.is_visible()
    assert pg.locator(".nav-appendix-title").is_visible()
    assert not pg.locator(".nav-disclosure > summary").is_visible()
    assert main.first.bounding_box()["y"] < appendix.first.bounding_box()["y"]
    context.close()
