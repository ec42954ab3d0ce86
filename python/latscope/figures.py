"""The report's drawing helpers, a leaf module (it imports nothing of latscope): matplotlib with
the non-interactive Agg backend, a figure as an inline PNG, a frame as an HTML table. Report
sections (latscope.report, latscope.parts.*) draw through these, so none reaches into another's
private helpers (docs/architecture.md, "Python: CLI, analysis, report")."""
from __future__ import annotations

import base64
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

__all__ = ["Figure", "Rectangle", "frame", "plt", "png", "table"]


def frame(ax: Any, x: str | None = None, y: str | None = None, title: str | None = None, *,
          title_size: float | None = None, grid: str | None = None, grid_axis: str = "both",
          legend: float | None = None, legend_at: dict[str, Any] | None = None) -> None:
    """The report figures' frame, each piece drawn only when given: axis labels, a title
    (title_size: its font size, else matplotlib's), a light grid on grid's ticks ("major" or
    "both") along grid_axis, a legend in font size `legend` (legend_at: where, e.g. loc and
    bbox_to_anchor)."""
    if title is not None:
        ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
    if x is not None:
        ax.set_xlabel(x)
    if y is not None:
        ax.set_ylabel(y)
    if grid is not None:
        ax.grid(True, which=grid, axis=grid_axis, alpha=0.3)
    if legend is not None:
        ax.legend(fontsize=legend, **(legend_at or {}))


def png(fig: Figure) -> str:
    """The figure as an <img> with its PNG inline (the report is one self-contained file); closes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return '<img alt="plot" src="data:image/png;base64,' + base64.b64encode(buf.getvalue()).decode() + '">'


def table(df: pd.DataFrame) -> str:
    """The frame as an HTML table (values escaped, no index)."""
    return str(df.to_html(index=False, border=0, classes="t", escape=True))
