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

__all__ = ["Figure", "Rectangle", "frame", "plt", "png", "readable_log_ticks", "table"]


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


def _plain(v: float, _pos: int = 0) -> str:
    """A log-axis tick as a plain number: 0.5, 2, 300, 4000, 1e+06 (never 2×10⁰)."""
    if v <= 0:
        return ""
    return f"{v:.6g}" if 1e-3 <= v < 1e5 else f"{v:.0e}"


def readable_log_ticks(fig: Figure) -> None:
    """Every log axis of the figure labelled with plain numbers, major and minor ticks alike
    (matplotlib's default writes minor ticks as 2×10⁰ … 6×10⁰ on a short axis). A base-2 axis
    (message sizes) keeps its powers of two; its minor ticks stay unlabelled."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for ax in fig.axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale != "log":
                continue
            base = getattr(axis.get_transform(), "base", 10)
            if base != 10:
                axis.set_minor_formatter(NullFormatter())
                continue
            lo, hi = sorted(axis.get_view_interval())
            axis.set_major_formatter(FuncFormatter(_plain))
            # few decades: label minor ticks too (else such an axis shows one label or none)
            span = hi / lo if lo > 0 else float("inf")
            axis.set_minor_formatter(FuncFormatter(_plain) if span < 30 else NullFormatter())


def png(fig: Figure) -> str:
    """The figure as an <img> with its PNG inline (the report is one self-contained file); closes it."""
    readable_log_ticks(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return '<img alt="plot" src="data:image/png;base64,' + base64.b64encode(buf.getvalue()).decode() + '">'


def table(df: pd.DataFrame) -> str:
    """The frame as an HTML table (values escaped, no index)."""
    return str(df.to_html(index=False, border=0, classes="t", escape=True))
