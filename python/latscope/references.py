"""The papers latscope's methods come from, as a report's references list: the code and docs cite
them as "seed NNN §x"; a report turns each such citation into the paper's short title and
section, linked to its entry in the list, so a reader can look it up."""
from __future__ import annotations

import html
import re

# number -> (short name, full reference)
PAPERS: dict[str, tuple[str, str]] = {
    "000": ("Zhu & Maccabe, splintered protocol",
            "W. Zhu, A. B. Maccabe: Identifying the Sources of Latency in a Splintered Protocol. "
            "The University of New Mexico."),
    "001": ("MPIBlib",
            "A. Lastovetsky, V. Rychkov, M. O'Flynn: MPIBlib: Benchmarking MPI Communications for Parallel "
            "Computing on Homogeneous and Heterogeneous Clusters. EuroPVM/MPI 2008, LNCS 5205."),
    "002": ("Iwasaki et al., Ethernet barriers",
            "S. Iwasaki, S. Matsuoka, et al.: Evaluation of Fast Barrier Synchronization on commodity PC "
            "Cluster connected with Ethernet (PC クラスタにおける Ethernet による高速ユーザレベルバリアの性能評価). IPSJ."),
    "003": ("LoGPC",
            "C. A. Moritz, M. I. Frank: LoGPC: Modeling Network Contention in Message-Passing Programs. "
            "IEEE Transactions on Parallel and Distributed Systems 12(4), 2001."),
    "004": ("Underwood et al., latency variation",
            "R. Underwood, J. Anderson, A. Apon: Measuring Network Latency Variation Impacts to High "
            "Performance Computing Application Performance. ICPE 2018."),
}

_CITE = re.compile(r"\bseed (\d{3})\b")
_US = re.compile(r"(\d) us\b")


def name_citations(text: str, cited: set[str]) -> str:
    """Plain text (a heading) with every 'seed NNN' replaced by the paper's short name, no link."""
    def sub(m: re.Match[str]) -> str:
        n = m.group(1)
        if n not in PAPERS:
            return m.group(0)
        cited.add(n)
        return PAPERS[n][0]
    return _CITE.sub(sub, text)


def link_citations(body: str, cited: set[str]) -> str:
    """HTML with every 'seed NNN' replaced by the paper's short name linked to #ref-NNN; the
    numbers seen are added to `cited`; '3.2 us' becomes '3.2 µs'. Only text outside tags is touched (never an image's data)."""
    parts = re.split(r"(<[^>]*>)", body)
    for i, part in enumerate(parts):
        if part.startswith("<"):
            continue

        def sub(m: re.Match[str]) -> str:
            n = m.group(1)
            if n not in PAPERS:
                return m.group(0)
            cited.add(n)
            return f"<a href='#ref-{n}'>[{html.escape(PAPERS[n][0])}]</a>"

        # one spelling of the microsecond in a report (the terminal's fmt_time writes "us")
        parts[i] = _US.sub(r"\1 µs", _CITE.sub(sub, part))
    return "".join(parts)


def references_html(cited: set[str]) -> str:
    items = "".join(f"<li id='ref-{n}'>{html.escape(PAPERS[n][1])}</li>" for n in sorted(cited))
    return f"<ol class='refs'>{items}</ol>"
