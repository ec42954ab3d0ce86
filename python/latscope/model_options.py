"""The model parameters as command-line options, shared by ``latscope model`` and ``latscope
predict`` (one declaration, one parser, as latscope.loop_options is for the loop simulation):
``--params FILE`` and explicit LogP/LogGP/Hockney (and network) values that override the file's,
the unit parsers that report bad values as ModelError, and the tables' time format."""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from latscope import units
from latscope.commands import parse_alone
from latscope.models import ModelError

if TYPE_CHECKING:   # the models are imported where parameters are built, not to declare the options
    from latscope.models import ModelParams, NetworkParams, ParamSet

__all__ = ["parse_time", "parse_size", "parse_per_byte", "format_time", "arg_type", "add_model_value_args",
           "params_from_args", "network_from_args", "run_guarded", "command_main"]


def _model_error(fn: Callable[[str], float]) -> Callable[[str], float]:
    """The shared unit parsers (latscope.units) raise ValueError; the model CLI reports ModelError."""

    def wrapped(text: str) -> float:
        try:
            return float(fn(text))
        except ModelError:
            raise
        except ValueError as e:
            raise ModelError(str(e)) from None

    wrapped.__doc__ = fn.__doc__
    return wrapped


parse_time = _model_error(units.parse_duration)
parse_per_byte = _model_error(units.parse_per_byte)
parse_size = _model_error(units.parse_size)


def format_time(t: float) -> str:
    """The model tables' times: units.fmt_time with 4 significant digits."""
    return units.fmt_time(t, 4)


def arg_type(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """Wrap a parser so argparse reports its ModelError text and exits 2."""

    def conv(text: str) -> Any:
        try:
            return fn(text)
        except ModelError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    conv.__name__ = fn.__name__.replace("parse_", "")
    return conv


def add_model_value_args(p: argparse.ArgumentParser, *, network: bool = False) -> None:
    """``--params FILE`` plus explicit LogP/LogGP/Hockney values (and network values)."""
    g = p.add_argument_group("model parameters (override --params)")
    g.add_argument("--params", metavar="FILE.json", help="latscope.params/1 file (docs/params-format.md)")
    g.add_argument("--L", dest="L_s", type=arg_type(parse_time), help="latency L, e.g. 5us")
    g.add_argument("--o", dest="o_s", type=arg_type(parse_time), help="overhead o (sets both o_s and o_r)")
    g.add_argument("--os", dest="o_s_s", type=arg_type(parse_time), help="send overhead o_s")
    g.add_argument("--or", dest="o_r_s", type=arg_type(parse_time), help="receive overhead o_r")
    g.add_argument("--g", dest="g_s", type=arg_type(parse_time), help="gap g")
    g.add_argument("--G", dest="G_s_per_byte", type=arg_type(parse_per_byte), help="gap per byte G, e.g. 1ns (per byte)")
    g.add_argument("--osl", dest="o_sl_s", type=arg_type(parse_time), help="long-message send overhead o_sl")
    g.add_argument("--orl", dest="o_rl_s", type=arg_type(parse_time), help="long-message receive overhead o_rl")
    g.add_argument("--Gm", dest="G_m_s_per_byte", type=arg_type(parse_per_byte), help="memory DMA gap per byte G_m")
    g.add_argument("--a", dest="a_bytes", type=int, help="bytes before the receive interrupt (a)")
    g.add_argument("--alpha", dest="alpha_s", type=arg_type(parse_time), help="Hockney alpha")
    g.add_argument("--beta", dest="beta_s_per_byte", type=arg_type(parse_per_byte), help="Hockney beta (per byte)")
    if network:
        n = p.add_argument_group("network (k-ary n-cube; overrides the file's 'network')")
        n.add_argument("--dims", type=str, help="mesh radices, lowest dimension first, e.g. 8x4")
        n.add_argument("--torus", action="store_true", default=None, help="end-around links")
        n.add_argument("--unidirectional", action="store_true", default=None, help="unidirectional channels")
        n.add_argument("--ndim", dest="n", type=int, help="network dimensions n")
        n.add_argument("--kd", dest="k_d", type=float, help="average distance per dimension k_d (hops)")
        n.add_argument("--channel", dest="channel_s_per_byte", type=arg_type(parse_per_byte), help="channel time per byte")


_LOGP_KEYS = ("L_s", "o_s_s", "o_r_s", "g_s")
_LOGGP_KEYS = ("G_s_per_byte", "o_sl_s", "o_rl_s", "G_m_s_per_byte", "a_bytes")
_HOCKNEY_KEYS = ("alpha_s", "beta_s_per_byte")


def params_from_args(args: argparse.Namespace) -> tuple[ModelParams, ParamSet | None]:
    """The model parameters: the file's, with explicit values replacing its fields."""
    from latscope.models import HockneyParams, LogGPParams, LogPParams, PLogPParams, load_params
    ps = load_params(args.params) if getattr(args, "params", None) else None
    given: dict[str, Any] = {}
    for k in _LOGP_KEYS + _LOGGP_KEYS + _HOCKNEY_KEYS:
        v = getattr(args, k, None)
        if v is not None:
            given[k] = v
    o = getattr(args, "o_s", None)
    if o is not None:
        given.setdefault("o_s_s", o)
        given.setdefault("o_r_s", o)
    hockney = any(k in given for k in _HOCKNEY_KEYS)
    logp = any(k in given for k in _LOGP_KEYS + _LOGGP_KEYS)
    if hockney and logp:
        raise ModelError("--alpha/--beta (Hockney) mixed with LogP values: give one model")
    if ps is not None:
        base = ps.model
        if isinstance(base, HockneyParams) and logp or not isinstance(base, HockneyParams) and hockney:
            raise ModelError(f"explicit values do not fit the file's model {base.kind!r}")
        if isinstance(base, PLogPParams) and logp:
            extra = set(given) - {"L_s"}
            if extra:
                raise ModelError(f"{sorted(extra)}: cannot override a PLogP table from the command line (only --L)")
        if isinstance(base, LogPParams) and any(k in given for k in _LOGGP_KEYS):
            return LogGPParams(**{**dataclasses.asdict(base), "G_s_per_byte": 0.0, **given}), ps
        return (dataclasses.replace(base, **given) if given else base), ps
    if hockney:
        missing = [k for k in _HOCKNEY_KEYS if k not in given]
        if missing:
            raise ModelError(f"Hockney values: missing {', '.join('--' + m.split('_')[0] for m in missing)}")
        return HockneyParams(**given), None
    if logp:
        missing = [k for k in ("L_s", "o_s_s", "o_r_s") if k not in given]
        if missing:
            raise ModelError(f"LogP values: missing {', '.join(missing)} (use --L, --os/--or or --o)")
        if any(k in given for k in _LOGGP_KEYS):
            given.setdefault("g_s", 0.0)
            given.setdefault("G_s_per_byte", 0.0)
            return LogGPParams(**given), None
        return LogPParams(**given), None
    raise ModelError("no model parameters: give --params FILE.json or values such as --L 5us --o 1us")


def network_from_args(args: argparse.Namespace, ps: ParamSet | None) -> NetworkParams:
    """The network: the file's, with explicit values replacing its fields."""
    from latscope.models import NetworkParams
    base: dict[str, Any] = {}
    if ps is not None and ps.network is not None:
        base = dataclasses.asdict(ps.network)
    given: dict[str, Any] = {}
    if getattr(args, "dims", None):
        try:
            dims = tuple(int(x) for x in re.split(r"[x,]", args.dims))
        except ValueError:
            raise ModelError(f"--dims {args.dims!r}: must look like 8x4") from None
        given["dims"] = dims
        given["n"] = len(dims)
    if getattr(args, "torus", None):
        given["torus"] = True
    if getattr(args, "unidirectional", None):
        given["bidirectional"] = False
    if given:  # topology changed: recompute k_d from dims unless --kd is given
        given["k_d"] = None
    for k in ("n", "k_d", "channel_s_per_byte"):
        v = getattr(args, k, None)
        if v is not None:
            given[k] = v
    merged = {**base, **given}
    for req, flag in (("n", "--ndim or --dims"), ("channel_s_per_byte", "--channel")):
        if merged.get(req) is None:
            raise ModelError(f"network: missing {req} (give {flag}, or a 'network' in the params file)")
    if merged.get("k_d") is None and merged.get("dims") is None:
        raise ModelError("network: missing k_d (give --kd or --dims, or a 'network' in the params file)")
    return NetworkParams(**merged)


def run_guarded(fn: Callable[[argparse.Namespace], int], args: argparse.Namespace, prog: str) -> int:
    """Run a command; :class:`ModelError` -> message on stderr and status 2."""
    try:
        return int(fn(args))
    except ModelError as e:
        sys.stderr.write(f"{prog}: error: {e}\n")
        return 2


def command_main(args: argparse.Namespace | Sequence[str] | None, name: str, add_parser: Callable[[Any], object],
                 func: str, prog: str) -> int:
    """main() of a model command (`latscope model`, `latscope predict`): an argv list is parsed
    by the command's parser alone (latscope.commands.parse_alone); the subcommand's function (its
    parser's default `func`) runs guarded (run_guarded)."""
    ns = parse_alone(args, name, add_parser)
    if isinstance(ns, int):
        return ns
    return run_guarded(getattr(ns, func), ns, prog)
