"""The report as a person sees it: rendered by headless Chromium (Debian's `chromium`), every
section of a report of real runs there, non-empty, its plots decoded, the page within a sane
height; a screenshot is kept in build/artifacts/ for a person to look at."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import mpirun
from latscope import cli

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "build" / "artifacts"
# the sections a report of a ping-pong run (--raw), a bandwidth run, a Hockney fit and a baseline has
SECTIONS = ["Summary", "Point-to-point latency", "Per-pair small-message latency", "Bandwidth",
            "Comparison with the baseline", "Fitted parameters", "Distributions", "All points", "Provenance"]
MAX_HEIGHT_PX = 12000   # the whole page at 1200 px wide: nine sections, one plot each at most

# Measured in the page once it has loaded: its height, each section's content height (from the
# end of its heading to the next heading) and whether each plot decoded.
PROBE = """<pre id="probe"></pre><script>
window.addEventListener('load', function () {
  var hs = Array.prototype.slice.call(document.querySelectorAll('h2'));
  var out = {height: document.documentElement.scrollHeight, sections: []};
  hs.forEach(function (h, i) {
    var top = h.getBoundingClientRect().bottom + window.scrollY;
    var end = i + 1 < hs.length ? hs[i + 1].getBoundingClientRect().top + window.scrollY
                                : document.getElementById('probe').getBoundingClientRect().top + window.scrollY;
    var imgs = [], n = h.nextElementSibling;
    while (n && n.tagName !== 'H2') {
      if (n.tagName === 'IMG') imgs.push(n.naturalWidth);
      n.querySelectorAll && n.querySelectorAll('img').forEach(function (m) { imgs.push(m.naturalWidth); });
      n = n.nextElementSibling;
    }
    out.sections.push({name: h.textContent, height: end - top, imgs: imgs});
  });
  document.getElementById('probe').textContent = JSON.stringify(out);
});
</script>"""


def _chromium() -> str:
    """Chromium's path; installed from Debian's packages when missing (root with apt-get), since
    this test's subject is the rendered page."""
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return str(shutil.which(name))
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
        if subprocess.run(cmd, env=env, capture_output=True, timeout=900).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=600)
            subprocess.run(cmd, env=env, capture_output=True, timeout=900)
    found = shutil.which("chromium")
    if not found:
        pytest.skip("no chromium: not installed, and it could not be installed here "
                    "(needs root and apt-get with Debian's package lists: apt-get install chromium)")
    return found


def _browser(exe: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", f"--user-data-dir={tmp / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("browser")
    mp = pytest.MonkeyPatch()
    mp.setenv("LATSCOPE_QUICK", "1")   # records, not precise numbers: a quick run (the banner shows)
    try:
        for name, args in (("a", ["--op", "pingpong", "--sizes", "0,8,1K,64K", "--raw"]),
                           ("b", ["--op", "pingpong", "--sizes", "0,8,1K,64K", "--raw"]),
                           ("bw", ["--op", "bandwidth", "--sizes", "8,64K"])):
            cp = mpirun(2, ["p2p", *args, "-o", str(d / f"{name}.jsonl")])
            assert cp.returncode == 0, cp.stderr
        assert cli.main(["fit", "hockney", str(d / "b.jsonl"), "--json", str(d / "params.json")]) == 0
        out = d / "report.html"
        assert cli.main(["report", str(d / "b.jsonl"), str(d / "bw.jsonl"), "--params", str(d / "params.json"),
                         "--baseline", str(d / "a.jsonl"), "-o", str(out)]) == 0
    finally:
        mp.undo()
    return out


def probe(exe: str, report: Path, tmp: Path) -> dict:
    """The page as Chromium laid it out: {height, sections: [{name, height, imgs}]}."""
    text = report.read_text()
    assert "could not be drawn" not in text, re.findall(r"could not be drawn[^<]*", text)
    assert not re.search(r"\bnan\b", re.sub(r"<img[^>]*>", "", text), re.I)   # never a nan shown
    probed = tmp / "probed.html"
    probed.write_text(text.replace("</body>", PROBE + "</body>"))
    cp = _browser(exe, tmp, "--virtual-time-budget=10000", "--dump-dom", probed.as_uri())
    m = re.search(r'<pre id="probe">([^<]+)</pre>', cp.stdout)
    assert m, cp.stderr[-2000:]
    page: dict = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    for s in page["sections"]:
        assert s["height"] > 20, s                           # something under every heading
        assert all(w > 0 for w in s["imgs"]), s              # every plot decoded
    return page


def test_report_in_a_browser(report_page: Path, tmp_path: Path) -> None:
    exe = _chromium()
    page = probe(exe, report_page, tmp_path)
    names = [s["name"] for s in page["sections"]]
    for want in SECTIONS:
        assert want in names, (want, names)
    assert sum(len(s["imgs"]) for s in page["sections"]) >= 5   # latency, heatmap, bandwidth, ratio, ECDF
    assert 1000 < page["height"] < MAX_HEIGHT_PX, page["height"]
    # the screenshot, kept for a person to look at
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report-browser.png"
    shutil.copy(report_page, ARTIFACTS / "report-browser.html")
    cp = _browser(exe, tmp_path, f"--window-size=1200,{page['height']}", f"--screenshot={shot}",
                  report_page.as_uri())
    assert shot.exists() and shot.stat().st_size > 10000, cp.stderr[-2000:]
    import matplotlib.image as mpimg
    px = mpimg.imread(str(shot))
    assert px.shape[0] == page["height"] and px.shape[1] == 1200
    assert px[..., :3].std() > 0.05                          # not a blank page
    print(f"\nreport screenshot: {shot} ({page['height']} px tall, {len(names)} sections)")


DEMO_MAX_HEIGHT_PX = 15000   # `make demo`'s report: every part's section, one or two plots each


def test_demo_report_in_a_browser(characterized, tmp_path: Path) -> None:
    """`latscope characterize --quick`'s report (every part's sections): each non-empty, its plots
    decoded, no nan, within a sane height; its screenshot kept beside the other."""
    exe = _chromium()
    out, _ = characterized
    page = probe(exe, out / "report.html", tmp_path)
    names = [s["name"] for s in page["sections"]]
    assert len(names) >= 12 and names[0] == "Summary" and names[-1] == "References", names
    assert page["height"] < DEMO_MAX_HEIGHT_PX, page["height"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "demo-report-browser.png"
    _browser(exe, tmp_path, f"--window-size=1200,{page['height']}", f"--screenshot={shot}", (out / "report.html").as_uri())
    assert shot.exists() and shot.stat().st_size > 10000
    print(f"\ndemo report screenshot: {shot} ({page['height']} px tall, {len(names)} sections)")


def test_report_opens_with_its_answer(report_page: Path) -> None:
    """The summary, the quick-run banner and the contents come before the first section; the
    contents link every section; citations are a references list."""
    text = report_page.read_text()
    first = text.index("<h2>Point-to-point latency</h2>")
    assert text.index("id='quick-banner'") < first and "QUICK RUN" in text[:first]
    assert text.index("<h2>Summary</h2>") < first and text.index("<nav class='toc'>") < first
    for i, name in enumerate(SECTIONS[1:], 1):
        assert f"<a href='#s{i}'>{name}</a>" in text and f"<a id='s{i}'></a><h2>{name}</h2>" in text
    assert "MPICH Version:" not in text.split("<h2>Provenance</h2>")[1]   # the MPI string normalised
    assert " us<" not in text and " us " not in re.sub(r"<img[^>]*>", "", text)   # µs throughout
