"""The audit's figures (as :func:`judging.audit.report` shapes them) flattened to CSV rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def statistics_rows(stats: Mapping[str, Any]) -> list[list[Any]]:
    """The figures as CSV rows: section, target, level, rater, attribute, group, figure, …"""
    # Here rather than at the top: the report module loads numpy and scipy, which a process
    # importing this module (through judging.audit.statistics) may never need.
    from judging.audit.report import COMPARISON_FIGURES

    header = [
        "section",
        "target",
        "level",
        "rater",
        "attribute",
        "group",
        "figure",
        "value",
        "ci_low",
        "ci_high",
        "n",
        "too_small",
    ]
    rows: list[list[Any]] = [header]

    def add(
        section: str,
        target: str,
        level: str,
        rater: str,
        attribute: str,
        group: str,
        name: str,
        fig: Mapping[str, Any] | None,
    ) -> None:
        if fig is None:
            return
        rows.append(
            [
                section,
                target,
                level,
                rater,
                attribute,
                group,
                name,
                fig["value"],
                fig["ci_low"],
                fig["ci_high"],
                fig["n"],
                fig["too_small"],
            ]
        )

    def comparison(
        section: str,
        target: str,
        level: str,
        attribute: str,
        group: str,
        comp: Mapping[str, Any] | None,
    ) -> None:
        if comp is None:
            return
        for name in COMPARISON_FIGURES:
            add(section, target, level, comp["rater"], attribute, group, name, comp[name])

    for block in stats["inter_judge"]:
        for name in ("percent_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
            add("inter_judge", block["target"], block["level"], "judges", "", "", name, block[name])
        for pair in block["cohen_pairwise"]:
            add(
                "inter_judge",
                block["target"],
                block["level"],
                f"{pair['a']}|{pair['b']}",
                "",
                "",
                "cohen_kappa",
                pair,
            )
    for block in stats["human_judge"]:
        level = block["scale"]
        for comp in block["overall"]:
            comparison("human_judge", block["target"], level, "overall", "", comp)
        comparison("human_human", block["target"], level, "overall", "", block["human_human"])
        for attribute, groups in block["breakdowns"].items():
            for group, raters in groups.items():
                for comp in raters.values():
                    comparison("human_judge", block["target"], level, attribute, group, comp)
        for _judge, sides in block["same_family"].items():
            for side, comp in sides.items():
                comparison("human_judge", block["target"], level, "same_family", side, comp)
    if stats["calibration"]:
        for judge in stats["calibration"]["judges"]:
            add(
                "calibration",
                stats["calibration"]["target"],
                "",
                judge["judge"],
                "",
                "",
                "ece",
                judge["ece"],
            )
    for score in stats["corrected"]:
        for name in ("uncorrected", "corrected"):
            value = score[name]
            if value is None:
                continue
            rows.append(
                [
                    "corrected_score",
                    "score",
                    "",
                    score["model"],
                    "",
                    "",
                    name,
                    value["estimate"],
                    value["ci_low"],
                    value["ci_high"],
                    value["n"],
                    score["too_small"],
                ]
            )
    return rows
