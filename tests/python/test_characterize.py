"""The main job end to end (quick variant): JSONL files, parameters and a report with its sections."""
from __future__ import annotations

import json
from pathlib import Path

from latscope.results import load


def test_characterize_quick(characterized: tuple[Path, str]) -> None:
    """`latscope characterize --quick --np 2` in process (conftest.py's session fixture, whose
    output test_json_outputs.py also reads)."""
    out, text = characterized
    assert "Hockney fits" in text and "two-roundtrip" in text
    for name in ("p2p_pingpong", "p2p_roundtrip0", "p2p_bandwidth"):
        res = load(out / f"{name}.jsonl")
        assert len(res.points) > 0 and (res.points["n"] > 0).all()
    params = json.loads((out / "params.json").read_text())
    reg = params["source"]["fits"][0]
    assert reg["method"] == "regression" and reg["alpha_s"] > 0 and reg["beta_s_per_byte"] > 0
    html = (out / "report.html").read_text()
    for section in ("Point-to-point latency", "Per-pair small-message latency", "Bandwidth", "Fitted parameters",
                    "Provenance"):
        assert f"<h2>{section}</h2>" in html
    assert html.count("data:image/png;base64,") >= 3
    # the latency budget (parts/budget.py): every launch class as root, shorter otherwise
    assert "<h2>Latency budget (where the time goes)</h2>" in html and (out / "budget.jsonl").exists()
