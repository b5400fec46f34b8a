"""The example workspace (a copy of shared/examples/rank-desk) checks clean."""

from pathlib import Path

from foldrun.contract import check_folder, format_findings

RANK_DESK = Path(__file__).resolve().parent / "fixtures" / "rank-desk"


def test_the_rank_desk_has_no_findings_at_all():
    assert format_findings(check_folder(RANK_DESK)) == "no problems found."


def test_the_rank_desk_deploys_without_findings_either():
    assert check_folder(RANK_DESK, mode="deploy") == []
