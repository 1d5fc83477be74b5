"""A toy extension of tracs, installed as its own package (``pip install examples/extending``).

* :mod:`tracs_toy.perturber` — the method ``toy-cells``: randomized response over
  the public cells of a grid (``tracs perturb -m toy-cells``, ``tracs audit``,
  ``tracs evaluate``);
* :mod:`tracs_toy.text_format` — the format ``.toytext``: pipe-separated text whose
  first line carries the release's parameters (read by every command, written by
  ``tracs perturb -o released.toytext``);
* :mod:`tracs_toy.estimator` — the density estimator ``toy-cells`` of its reports
  (``tracs estimate``).

``pyproject.toml`` names the three objects in the entry-point groups
``tracs.methods``, ``tracs.formats`` and ``tracs.estimators``; tracs registers
them when a command first asks its registries, never on ``import tracs``.
Importing this package registers nothing by itself.
"""
