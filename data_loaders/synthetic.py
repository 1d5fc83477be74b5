"""A seeded synthetic city: POIs in neighbourhoods, users moving between them.

Model (all vectorised; one call, no Python loop over users or check-ins):

* **Neighbourhoods**: ``clusters`` centres in a disc of radius ``radius_m`` around
  ``center`` (denser towards the middle), each with a popularity weight
  (log-normal) and a spread (200 m – 1.2 km).
* **POIs**: ``pois`` venues, each in a neighbourhood chosen by popularity, placed
  with a Gaussian spread around its centre, with its own Zipf-like popularity and
  a category.
* **Users**: each has ``favourites`` neighbourhoods (the first is home, visited
  most).  Check-ins come in sessions (days out): a session starts at home or at
  a favourite; after each check-in the user stays in the neighbourhood (p = 0.65)
  or moves to another favourite; one check-in in twenty repeats the previous
  venue.  Venues are drawn by popularity inside the neighbourhood.
* **Times**: within a session gaps are log-normal with a median of 40 min;
  between sessions a median of 20 h, so ``split_gap="3h"`` recovers sessions.
  The number of check-ins per user is ``1 + Poisson(checkins_per_user - 1)``.

Coordinates are placed in metres and converted to degrees with a local
equirectangular approximation (good to well under 0.1 % over a city).
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from tracs._validation import as_generator, check_finite, check_integer

from tracs.errors import InputError
from tracs.io.checkins import build_checkins

__all__ = ["synthetic_checkins"]

_CATEGORIES = np.array(["Train Station", "Office", "Café", "Restaurant", "Convenience Store",
                        "Park", "Bar", "Gym", "Home (private)", "University", "Shop", "Museum"])
_METRES_PER_DEGREE = 111_320.0


def _pick(cdf_key: np.ndarray, group: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of an item drawn within ``group`` from per-group cumulative weights.

    ``cdf_key`` is ``group_of_item + cumulative_share_within_group`` (sorted), so a
    draw ``group + u`` with ``u`` in ``[0, 1)`` lands inside that group's items.
    """
    return np.searchsorted(cdf_key, group + u, side="right")


def synthetic_checkins(*, users: int, seed, checkins_per_user: float = 40.0, pois: int = 1500,
                       clusters: int = 12, center=(139.70, 35.68), radius_m: float = 12_000.0,
                       favourites: int = 4, start="2012-04-01"):
    """Seeded synthetic check-ins of a plausible city, in the loaders' form.

    Parameters
    ----------
    users : int
        Number of users (ids ``0 .. users-1``).
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Randomness (see :func:`tracs.as_generator`); the same seed gives the same data.
    checkins_per_user : float, default 40
        Mean number of check-ins per user (at least 1 each).
    pois, clusters : int
        Number of venues and of neighbourhoods.
    center : (float, float), default (139.70, 35.68)
        Longitude and latitude of the city centre (degrees).
    radius_m : float, default 12 km
        Radius of the city.
    favourites : int, default 4
        Neighbourhoods each user frequents (capped at ``clusters``).
    start : str or pandas.Timestamp, default "2012-04-01"
        Earliest session start (UTC); users start within the following 30 days.

    Returns
    -------
    geopandas.GeoDataFrame
        ``uid``, ``datetime`` (UTC), ``poi_id`` (int), ``category``, ``geometry``
        (WGS84), sorted by (uid, datetime); ``attrs["report"]`` says nothing was
        dropped (format ``"synthetic"``).
    """
    users = check_integer(users, "users")
    pois = check_integer(pois, "pois")
    clusters = check_integer(clusters, "clusters")
    favourites = min(check_integer(favourites, "favourites"), clusters)
    mean = check_finite(checkins_per_user, "checkins_per_user")
    if mean < 1:
        raise InputError(f"checkins_per_user must be >= 1, got {mean}")
    radius = check_finite(radius_m, "radius_m")
    if radius <= 0:
        raise InputError(f"radius_m must be > 0, got {radius}")
    lon0, lat0 = (check_finite(v, "center") for v in center)
    if abs(lat0) > 80 or abs(lon0) > 180:
        raise InputError(f"center must be a (longitude, latitude) away from the poles, got {center}")
    rng = as_generator(seed)

    # neighbourhoods and venues (metres from the centre)
    r = radius * 0.85 * rng.random(clusters) ** 0.75
    phi = rng.uniform(0.0, 2 * np.pi, clusters)
    centres = np.column_stack([r * np.cos(phi), r * np.sin(phi)])
    weight = rng.lognormal(0.0, 0.8, clusters)
    spread = rng.uniform(200.0, 1200.0, clusters)
    venue_cluster = np.sort(rng.choice(clusters, size=pois, p=weight / weight.sum()))
    xy = centres[venue_cluster] + rng.normal(size=(pois, 2)) * spread[venue_cluster, None]
    popularity = (rng.permutation(pois) + 1.0) ** -0.9
    share = np.bincount(venue_cluster, popularity, minlength=clusters)
    cum = np.cumsum(popularity) - np.r_[0.0, np.cumsum(share)][venue_cluster]
    cdf_key = venue_cluster + cum / share[venue_cluster]
    last = np.r_[venue_cluster[1:] != venue_cluster[:-1], True]
    cdf_key[last] = venue_cluster[last] + 1.0  # exact group ends
    category = rng.integers(0, len(_CATEGORIES), pois)

    # users: favourite neighbourhoods (weighted, without replacement, among those with
    # venues: smallest Exp(1) / weight first), check-in counts
    occupied = np.bincount(venue_cluster, minlength=clusters) > 0
    favourites = min(favourites, int(occupied.sum()))
    key = rng.exponential(size=(users, clusters)) / weight
    key[:, ~occupied] = np.inf
    fav = np.argsort(key, axis=1)[:, :favourites]
    counts = 1 + rng.poisson(mean - 1.0, users)
    n = int(counts.sum())
    user = np.repeat(np.arange(users), counts)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    is_first = np.zeros(n, dtype=bool)
    is_first[first] = True

    session_start = is_first | (rng.random(n) < 0.25)
    move = session_start | (rng.random(n) < 0.35)
    home_bias = np.where(session_start, 0.5, 0.2)
    slot = np.where(rng.random(n) < home_bias, 0, rng.integers(0, favourites, n))
    candidate = fav[user, slot]
    last_move = np.maximum.accumulate(np.where(move, np.arange(n), 0))
    cluster = candidate[last_move]
    venue = _pick(cdf_key, cluster, rng.random(n))
    repeat = ~session_start & (rng.random(n) < 0.05)
    venue = venue[np.maximum.accumulate(np.where(repeat, 0, np.arange(n)))]

    gap_min = np.where(session_start, rng.lognormal(np.log(20 * 60), 0.5, n),
                       rng.lognormal(np.log(40), 0.6, n))
    gap_min[is_first] = rng.uniform(0.0, 30 * 24 * 60, users)
    minutes = np.cumsum(gap_min)
    minutes -= np.repeat(minutes[first] - gap_min[first], counts)
    stamps = pd.Timestamp(start, tz="UTC") + pd.to_timedelta(np.round(minutes * 60), unit="s")

    lat = lat0 + xy[venue, 1] / _METRES_PER_DEGREE
    lng = lon0 + xy[venue, 0] / (_METRES_PER_DEGREE * np.cos(np.radians(lat0)))
    return build_checkins(
        uid=pd.Series(user), time=pd.Series(stamps), lat=pd.Series(lat), lng=pd.Series(lng),
        poi=pd.Series(venue.astype(np.int64)), extra={"category": pd.Series(_CATEGORIES[category[venue]])},
        lines=np.arange(n), source="<synthetic>", fmt="synthetic", position="row")
