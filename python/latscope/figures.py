"""The report's drawing helpers, a leaf module (it imports nothing of latscope): matplotlib with
the non-interactive Agg backend, a figure as an inline PNG, a frame as an HTML table. Report
sections (latscope.report, latscope.parts.*) draw through these, so none reaches into another's
private helpers (docs/architecture.md, "Python: CLI, analysis, report")."""
from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

__all__ = ["Figure", "Rectangle", "plt", "png", "table"]


def png(fig: Figure) -> str:
    """The figure as an <img> with its PNG inline (the report is one self-contained file); closes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return '<img alt="plot" src="data:image/png;base64,' + base64.b64encode(buf.getvalue()).decode() + '">'


def table(df: pd.DataFrame) -> str:
    """The frame as an HTML table (values escaped, no index)."""
    return str(df.to_html(index=False, border=0, classes="t", escape=True))
