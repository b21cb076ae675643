"""Size and load time of a ``pmask report`` page in headless Chromium.

    python benchmarks/report_load.py report.html [--repeat 3] [--screenshot first.png] [--sentence ID]

Prints the file size, then per run: ``page_ms`` (the page's own ``performance.now()`` when its
script has built the page: HTML and JSON parsed, lists and the first sentence drawn) and
``wall_s`` (navigation start to that moment seen from Python, DevTools round-trips included).
With ``--screenshot`` it also saves the shown sentence's view as PNG (``--sentence`` picks it).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from headless import Browser, find_or_install_chromium  # noqa: E402

# mean time of 50 ArrowDown moves (each builds the next sentence's view and draws its impact map)
SWITCH_JS = """(() => {
  document.querySelector('.srow.selected').focus();
  const t = performance.now();
  for (let i = 0; i < 50; i++) {
    document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true}));
  }
  return (performance.now() - t) / 50;
})()"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--screenshot", type=Path, default=None)
    ap.add_argument("--sentence", default=None, help="sentence id to show in the screenshot")
    ap.add_argument("--width", type=int, default=1280)
    args = ap.parse_args()
    binary, why = find_or_install_chromium()
    if binary is None:
        print(f"no Chromium: {why}", file=sys.stderr)
        return 1
    size = args.report.stat().st_size
    print(f"{args.report}: {size / 1e6:.2f} MB")
    url = args.report.resolve().as_uri() + (f"#s={args.sentence}" if args.sentence else "")
    page_ms, wall = [], []
    with Browser(binary, width=args.width, height=1000) as browser:
        for run in range(args.repeat):
            page = browser.open(url)
            page_ms.append(float(page.eval("document.documentElement.dataset.readyMs")))
            wall.append(page.wall_seconds)
            problems = page.problems()
            switch = page.eval(SWITCH_JS)
            print(f"run {run + 1}: page_ms={page_ms[-1]:.0f} wall_s={wall[-1]:.2f} "
                  f"switch_ms={switch:.1f} (per arrow-key move, map drawn) problems={len(problems)}")
        if args.screenshot:
            page = browser.open(url)
            rect = page.eval("(() => { const v = document.querySelector('.sentence-view:not([hidden])');"
                             "window.scrollTo(0, 0); const r = v.getBoundingClientRect();"
                             "return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; })()")
            page.screenshot(args.screenshot, clip=rect)
            print(f"wrote {args.screenshot}")
    print(f"median: page_ms={statistics.median(page_ms):.0f} wall_s={statistics.median(wall):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
