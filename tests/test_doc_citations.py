"""Every document the code and the docs cite is in the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITED = re.compile(r"\bdocs/([A-Za-z0-9_./-]+\.md)\b")
SOURCES = [*ROOT.glob("tracs/**/*.py"), *ROOT.glob("data_loaders/**/*.py"), *ROOT.glob("benchmarks/**/*.py"),
           *ROOT.glob("examples/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md"]


def test_every_cited_doc_exists():
    cited = {(path.relative_to(ROOT).as_posix(), name) for path in SOURCES
             for name in CITED.findall(path.read_text(encoding="utf-8"))}
    assert len(cited) > 10, "the citation pattern no longer finds the docs the code cites"
    missing = sorted((where, name) for where, name in cited if not (ROOT / "docs" / name).is_file())
    assert not missing, f"cited but not in docs/: {missing}"


def test_no_citation_of_a_spec_outside_the_repository():
    outside = sorted(path.relative_to(ROOT).as_posix() for path in SOURCES
                     if re.search(r"\b(MECHANISMS|TRACS|BASELINES)\.md\b", path.read_text(encoding="utf-8")))
    assert not outside, f"these files cite a spec that is not in the repository: {outside}"
