"""Tests for judging.stats.report: the long-format CSV reader and the agreement report."""

import json
import random
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judging.stats.report import agreement_report, ratings_from_csv

ROWS = [
    ("u1", "ann", "1"), ("u1", "bob", "1"), ("u1", "cat", "2"),
    ("u2", "ann", "3"), ("u2", "bob", "3"), ("u2", "cat", "3"),
    ("u3", "ann", "2"), ("u3", "bob", ""), ("u3", "cat", "2"),
    ("u4", "ann", "4"), ("u4", "bob", "3"), ("u4", "cat", "4"),
    ("u5", "ann", "1"), ("u5", "bob", "2"), ("u5", "cat", "1"),
    ("u6", "ann", "5"), ("u6", "bob", "5"),
    ("u7", "ann", "2"), ("u7", "bob", "2"), ("u7", "cat", "3"),
    ("u8", "cat", "4"),
]  # fmt: skip


def write_csv(path: Path, rows: list[tuple[str, str, str]], bom: bool = False) -> Path:
    text = "item,rater,label\n" + "".join(f"{i},{r},{label}\n" for i, r, label in rows)
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return path


def matrix(rows: list[tuple[str, str, str]]) -> np.ndarray:
    """Raters × items numeric matrix (NaN = missing), raters and items sorted by name."""
    items = sorted({i for i, _, _ in rows})
    raters = sorted({r for _, r, _ in rows})
    data = np.full((len(raters), len(items)), np.nan)
    for i, r, label in rows:
        if label:
            data[raters.index(r), items.index(i)] = float(label)
    return data


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_report_values_match_reference_libraries(tmp_path: Path, level: str) -> None:
    """Alpha equals krippendorff.alpha at the requested level and each pair's kappa equals
    sklearn's (unweighted / linear / quadratic for nominal / ordinal / interval)."""
    report = agreement_report(write_csv(tmp_path / "r.csv", ROWS), level, n_bootstrap=200)
    data = matrix(ROWS)
    alpha = krippendorff.alpha(data, level_of_measurement=level)  # type: ignore[arg-type]
    assert report["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-9)
    weights = {"nominal": None, "ordinal": "linear", "interval": "quadratic"}[level]
    ann, bob = data[0], data[1]
    both = ~np.isnan(ann) & ~np.isnan(bob)
    kappa = cohen_kappa_score(ann[both], bob[both], labels=[1, 2, 3, 4, 5], weights=weights)
    pair = report["cohen_kappa_pairwise"]["ann|bob"]
    assert pair["value"] == pytest.approx(kappa, abs=1e-9)
    assert pair["n"] == 6
    assert set(report["cohen_kappa_pairwise"]) == {"ann|bob", "ann|cat", "bob|cat"}
    assert report["n_items"] == 8 and report["n_raters"] == 3 and report["level"] == level
    assert report["percent_agreement"]["n"] == 7
    low, high = report["gwet_ac1"]["ci95"]
    assert low <= report["gwet_ac1"]["value"] <= high


def test_bom_and_row_order_do_not_change_the_report(tmp_path: Path) -> None:
    """A BOM and a shuffled row order give the identical report (same seed)."""
    shuffled = ROWS.copy()
    random.Random(4).shuffle(shuffled)
    plain = agreement_report(write_csv(tmp_path / "a.csv", ROWS), n_bootstrap=300, seed=9)
    other = agreement_report(
        write_csv(tmp_path / "b.csv", shuffled, bom=True), n_bootstrap=300, seed=9
    )
    assert plain == other


def test_undefined_values_are_null_and_json_safe(tmp_path: Path) -> None:
    """With one category only, chance-corrected figures are null, never NaN, in JSON."""
    rows = [("a", "x", "yes"), ("a", "y", "yes"), ("b", "x", "yes"), ("b", "y", "yes")]
    report = agreement_report(write_csv(tmp_path / "one.csv", rows), n_bootstrap=50)
    text = json.dumps(report, allow_nan=False)
    assert report["krippendorff_alpha"] == {"value": None, "ci95": [None, None], "n": 2}
    assert report["cohen_kappa_pairwise"]["x|y"]["value"] is None
    assert report["percent_agreement"]["value"] == 1.0
    assert "NaN" not in text


def test_no_bootstrap_gives_null_intervals(tmp_path: Path) -> None:
    """With zero replicates the point estimates are reported and intervals are null."""
    report = agreement_report(write_csv(tmp_path / "r.csv", ROWS), n_bootstrap=0)
    assert report["fleiss_kappa"]["ci95"] == [None, None]
    assert report["fleiss_kappa"]["value"] is not None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("item,judge,label\na,x,1\n", "line 1: expected the header"),
        ("item,rater,label\na,x,1\nb,y\n", "line 3: expected 3 fields"),
        ("item,rater,label\na,x,1\n,y,2\n", "line 3: item and rater must not be empty"),
        ("item,rater,label\na,x,1\nb,x,2\na,x,2\n", "line 4: rater 'x' already rated item 'a' on line 2"),  # noqa: E501
        ("", "empty file"),
        ("item,rater,label\n", "no ratings"),
    ],
)  # fmt: skip
def test_bad_files_raise_readable_errors(tmp_path: Path, content: str, message: str) -> None:
    """A bad header or row raises ValueError naming the line and the problem."""
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        agreement_report(path, n_bootstrap=0)


def test_non_utf8_and_bad_levels_are_rejected(tmp_path: Path) -> None:
    """Non-UTF-8 bytes, unknown levels and text labels at the ordinal level are errors."""
    latin = tmp_path / "latin.csv"
    latin.write_bytes("item,rater,label\né,x,1\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        agreement_report(latin)
    text = write_csv(tmp_path / "t.csv", [("a", "x", "safe"), ("a", "y", "unsafe")])
    with pytest.raises(ValueError, match="needs numeric labels"):
        agreement_report(text, level="ordinal")
    with pytest.raises(ValueError, match="level must be one of"):
        agreement_report(text, level="ratio")


def test_reader_sorts_items_and_raters(tmp_path: Path) -> None:
    """Items and raters come out sorted by name with empty labels as missing."""
    ratings = ratings_from_csv(write_csv(tmp_path / "r.csv", ROWS))
    assert ratings.raters == ("ann", "bob", "cat")
    assert ratings.items[0] == "u1"
    assert np.isnan(ratings.codes[ratings.items.index("u3"), 1])
