"""Tokyo check-ins of a few users, perturbed with TraCS-D at ε = 2 and ε = 8, on maps.

Writes three HTML pages into the output folder:

* ``tokyo_eps2.html`` and ``tokyo_eps8.html`` — each user's true trips, what the
  collector receives (TraCS-D, ε per point), the reports rounded to the nearest
  venue, the displacement of every point, the venues and a heat map of reports;
* ``tokyo_compare.html`` — both side by side, their views moving together.

Data: the Foursquare Tokyo sample (``foursquare_tky_101users.csv``) from the path
given as the first argument or from the folder in ``TRACS_DATA_DIR``; without
either, a synthetic city with the same shape of data (no download).

Run::

    python examples/tokyo_map.py [CHECKINS.csv] [--output-dir maps] [--users 3] [--online]

The pages embed Leaflet, so they open without a network (tiles that cannot load are
replaced by a plain background and a visible note; ``--online`` links Leaflet from
its CDN instead), and
``--screenshot FILE.png`` photographs the side-by-side page in headless Chromium
(needs ``chromium``, ``chromedriver`` and selenium); the README's picture is::

    python examples/tokyo_map.py --users 2 --trips 3 --tiles none \
        --screenshot docs/images/map.png
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

import data_loaders
import tracs
from tracs.maps import compare_maps, save_map, trajectory_map

TKY_FILE = "foursquare_tky_101users.csv"
EPSILONS = (2.0, 8.0)


def load_checkins(path: str | None):
    """The check-ins and a name for them: the given file, the Tokyo file where tracs finds data, or synthetic."""
    if path is None:
        try:
            path = str(data_loaders.dataset_path("tky"))
        except FileNotFoundError as exc:
            print(f"no Tokyo file ({exc}): using a synthetic city", file=sys.stderr)
            return data_loaders.synthetic_checkins(users=30, seed=0), "synthetic city"
    return data_loaders.load_foursquare(path), "Foursquare check-ins, Tokyo"
    return data_loaders.synthetic_checkins(users=30, seed=0), "synthetic city"


def screenshot(page: Path, png: Path, size=(1200, 720)) -> Path:
    """Open ``page`` in headless Chromium and save a PNG (palette-compressed when Pillow is there)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        raise RuntimeError("a screenshot needs chromium and chromedriver on the PATH")
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium download a browser
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    with tempfile.TemporaryDirectory() as profile:
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     "--disable-background-networking", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        try:
            driver.set_window_size(*size)
            inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
            driver.set_window_size(size[0] * 2 - inner[0], size[1] * 2 - inner[1])
            driver.get(page.resolve().as_uri())
            png.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(png))
        finally:
            driver.quit()
    try:
        from PIL import Image
    except ImportError:
        return png
    with Image.open(png) as image:
        image.convert("RGB").quantize(colors=128).save(png, optimize=True)
    return png


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", help=f"check-in file (default: $TRACS_DATA_DIR/{TKY_FILE})")
    parser.add_argument("--output-dir", default="tokyo-maps", help="folder for the pages")
    parser.add_argument("--users", type=int, default=3, help="users to draw (default: 3)")
    parser.add_argument("--trips", type=int, default=4, help="trips per user (default: 4)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the perturbation")
    parser.add_argument("--tiles", default="OpenStreetMap", help="folium tiles, or none")
    parser.add_argument("--online", action="store_true",
                        help="link Leaflet from its CDN instead of embedding it in the pages")
    parser.add_argument("--screenshot", metavar="PNG", help="also save a picture of the side-by-side page")
    args = parser.parse_args(argv)

    checkins, name = load_checkins(args.path)
    # the public region: the fixed Tokyo box (tracs.public.CITY_BOXES), never the data's own bounds;
    # projected to the UTM zone of its centre
    box = tracs.public.CITY_BOXES["tky"]
    # trips: a new trajectory after 6 hours without a check-in
    everyone = data_loaders.to_trajectories(checkins, split_gap="6h", min_points=3, crs=box.metric_crs())
    region = box.to_region(everyone.crs)
    # the venues of the data set stand in for a public venue list (a research illustration:
    # a release would read them from a published list, as `tracs perturb --pois` does)
    venues = everyone.pois().coords
    pois = tracs.POISpace(venues, region=region)

    # the first trips of the first users
    owner = everyone.frame["uid"].to_numpy()[everyone.offsets[:-1]]
    chosen_users = list(dict.fromkeys(owner))[: args.users]
    picked = np.concatenate([np.flatnonzero(owner == u)[: args.trips] for u in chosen_users])
    trips = everyone.select(np.sort(picked))
    coords, offsets = np.asarray(trips.coords), np.asarray(trips.offsets)

    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    tiles = None if args.tiles.lower() == "none" else args.tiles
    maps = []
    for eps in EPSILONS:
        rng = np.random.default_rng([args.seed, int(eps * 1000)])
        users = [str(u) for u in trips.frame["uid"].to_numpy()[offsets[:-1]]]  # one stream per user
        reported = tracs.TraCSD(region, eps).perturb_many(coords, offsets, rng=rng, keys=users)
        rounded, _ = pois.round(reported)
        error = tracs.average_error(coords, reported, offsets)
        error_rounded = tracs.average_error(coords, rounded, offsets)
        print(f"ε = {eps:g}: average error {error:,.0f} m, rounded to venues {error_rounded:,.0f} m "
              f"({len(coords)} points, {len(offsets) - 1} trips, {len(chosen_users)} users)")

        def draw():
            return trajectory_map(trips, reported, rounded=rounded, pois=venues, tiles=tiles,
                                  epsilon=eps, method="TraCS-D", title=name)

        print(f"wrote {save_map(draw(), out / f'tokyo_eps{eps:g}.html', offline=not args.online)}")
        maps.append(draw())  # a second copy: compare_maps resizes the maps it is given
    page = compare_maps(*maps, titles=[f"TraCS-D, ε = {eps:g}" for eps in EPSILONS])
    compare = save_map(page, out / "tokyo_compare.html", offline=not args.online)
    print(f"wrote {compare}")
    if args.screenshot:
        print(f"wrote {screenshot(compare, Path(args.screenshot))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
