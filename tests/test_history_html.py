"""`benchbpf history html`: the static pages, opened in a real headless
Chromium (Debian's chromium, which scripts/install.sh installs): no
console message, the plot has one point per run and one marker per
change point, and a screenshot is not blank."""
import os
import re
import shutil
import subprocess

import pytest

from benchbpf.tools import cli
from test_history import _stepped

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium in CI: scripts/install.sh installs Debian's chromium")
        pytest.skip("no chromium here (apt-get install chromium)")
    return CHROMIUM


def _chromium(browser, tmp_path, url, *args):
    """(stdout, the console messages) of one headless page load."""
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
                           "--v=0", *args, url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [l for l in done.stderr.splitlines() if ":CONSOLE" in l]


def _body(dom):
    m = re.search(r"<body([^>]*)>", dom)
    return dict(re.findall(r'data-(\w+)="(\d+)"', m.group(1))) if m else {}


def test_the_check_sees_console_errors(browser, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("wrong");'
                    "missing();</script></body></html>")
    _, console = _chromium(browser, tmp_path, page.as_uri(), "--dump-dom")
    assert any('"wrong"' in l for l in console) and any("missing" in l for l in console)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site")
    store = str(tmp / "h.sqlite")
    _stepped(store)                                        # 40 runs, one 10 % step
    _stepped(store, n=12, step=0.0, seed=5, cpu="Other CPU")  # 12 runs, stable
    out = tmp / "out"
    assert cli.main(["history", "--history", store, "html", str(out)]) == 0
    return out


def test_each_page_loads_clean_with_its_points_and_changes(browser, site, tmp_path):
    index = (site / "index.html").read_text()
    links = re.findall(r'href="(series-\w+\.html)"', index)
    assert len(links) == 2
    expected = {}
    for link in links:
        page = (site / link).read_text()
        runs = int(re.search(r"<p>(\d+) runs, (\d+) change points", page).group(1))
        expected[link] = (runs, "Other CPU" in page)
    # The series with a change comes first.
    assert [expected[l][1] for l in links] == [False, True]
    for link, want in zip(links, [(40, 1), (12, 0)]):
        dom, console = _chromium(browser, tmp_path, (site / link).as_uri(), "--dump-dom")
        assert console == []
        assert _body(dom) == {"points": str(want[0]), "changes": str(want[1])}
    dom, console = _chromium(browser, tmp_path, (site / "index.html").as_uri(), "--dump-dom")
    assert console == [] and _body(dom) == {"points": "0", "changes": "0"}


def test_a_screenshot_of_a_series_is_not_blank(browser, site, tmp_path):
    import matplotlib.image
    import numpy as np
    link = re.findall(r'href="(series-\w+\.html)"', (site / "index.html").read_text())[0]
    shot = tmp_path / "shot.png"
    _chromium(browser, tmp_path, (site / link).as_uri(), "--hide-scrollbars",
              "--window-size=1000,800", f"--screenshot={shot}")
    pixels = matplotlib.image.imread(str(shot))[..., :3]
    assert pixels.shape[:2] == (800, 1000)
    not_white = (pixels < 0.9).any(axis=-1).mean()
    assert not_white > 0.02
    # The points' blue and the change marker's red are drawn.
    blue = ((pixels[..., 2] > 0.5) & (pixels[..., 0] < 0.3)).sum()
    red = ((pixels[..., 0] > 0.6) & (pixels[..., 1] < 0.2) & (pixels[..., 2] < 0.2)).sum()
    assert blue > 100 and red > 50
