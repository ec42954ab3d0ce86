"""latscope.models — analytic communication cost models (pure Python).

Hockney, LogP, LogGP and PLogP parameter sets (:mod:`.params`, JSON ``latscope.params/1``),
point-to-point costs including LoGPC's DMA pipelining (:mod:`.p2p`), barrier algorithms
(:mod:`.barrier`, seed 002 §5.1.2), simple collectives (:mod:`.collectives`), LoGPC network
contention and locality (:mod:`.contention`, :mod:`.topology`) and the LoGPC application
models (:mod:`.apps`).  All times are seconds (floats), all sizes bytes.  Bad input raises
:class:`ModelError` (a ``ValueError``).  See docs/models.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .apps import (
        DagTerms,
        DiamondDAG,
        EM3DIteration,
        RemapLong,
        RemapSync,
        em3d_iteration,
        remap_async_injection_rate,
        remap_async_s,
        remap_long,
        remap_sync,
    )
    from .barrier import (
        BARRIER_ALGORITHMS,
        BarrierAlgorithm,
        BarrierPrediction,
        Crossover,
        barrier_names,
        barrier_time_s,
        ceil_log,
        kary_vs_dissemination,
        predict_barrier,
        select_algorithms,
    )
    from .collectives import COLLECTIVE_ALGORITHMS, COLLECTIVE_OPS, SCHEDULES, binomial_blocks, collective_time_s, schedule_time_s
    from .contention import (
        ClosedContention,
        UpperBound,
        channel_load,
        contention_delay_s,
        long_message_time_s,
        saturation_rate,
        short_message_time_s,
        solve_injection_rate,
        switch_wait_s,
        upper_bound,
    )
    from .errors import ModelError
    from .p2p import (
        hockney_time_s,
        logp_time_s,
        loggp_time_s,
        logpc_end_to_end_s,
        logpc_long_time_s,
        p2p_time_s,
        plogp_time_s,
    )
    from .params import (
        SCHEMA,
        HockneyParams,
        LogGPParams,
        LogPParams,
        MessagePoint,
        ModelParams,
        NetworkParams,
        ParamSet,
        PLogPParams,
        from_dict,
        from_json,
        load_params,
        message_point,
        save_params,
        to_json,
    )
    from .topology import (
        NUMBERINGS,
        alewife_2kd,
        dimension_avg_distance,
        hops,
        mapping_avg_distance,
        mesh_avg_distance,
        neighbour_ring_avg_distance,
        rank_coords,
    )


# the public names, listed (not computed) so that type checkers see what is exported
__all__ = [
    "BARRIER_ALGORITHMS", "BarrierAlgorithm", "BarrierPrediction", "COLLECTIVE_ALGORITHMS",
    "COLLECTIVE_OPS", "ClosedContention", "Crossover", "DagTerms", "DiamondDAG", "EM3DIteration",
    "HockneyParams", "LogGPParams", "LogPParams", "MessagePoint", "ModelError", "ModelParams",
    "NUMBERINGS", "NetworkParams", "PLogPParams", "ParamSet", "RemapLong", "RemapSync", "SCHEMA",
    "UpperBound", "alewife_2kd", "barrier_names", "barrier_time_s", "binomial_blocks", "ceil_log",
    "SCHEDULES", "channel_load", "collective_time_s", "schedule_time_s", "contention_delay_s", "dimension_avg_distance",
    "em3d_iteration", "from_dict", "from_json", "hockney_time_s", "hops", "kary_vs_dissemination",
    "load_params", "loggp_time_s", "logp_time_s", "logpc_end_to_end_s", "logpc_long_time_s",
    "long_message_time_s", "mapping_avg_distance", "mesh_avg_distance", "message_point",
    "neighbour_ring_avg_distance", "p2p_time_s", "plogp_time_s", "predict_barrier", "rank_coords",
    "remap_async_injection_rate", "remap_async_s", "remap_long", "remap_sync", "saturation_rate",
    "save_params", "select_algorithms", "short_message_time_s", "solve_injection_rate",
    "switch_wait_s", "to_json", "upper_bound",
]

# The names are looked up on first use (PEP 562), each in the first submodule that has it (a name
# another submodule imports is the same object there): importing the package, or one submodule,
# loads only what is needed, so the CLI's parser is built without the whole model library
# (latscope/commands.py). The cheap modules come first.
_SUBMODULES = ("errors", "p2p", "params", "topology", "collectives", "barrier", "contention", "apps")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for sub in _SUBMODULES:
            mod = importlib.import_module(f"{__name__}.{sub}")
            if hasattr(mod, name):
                v = getattr(mod, name)
                globals()[name] = v
                return v
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
