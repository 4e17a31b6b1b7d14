"""PNG plots of a ``bench scale`` result: latency percentiles, memory and disk, build time,
each against the number of turns on a log axis.

matplotlib (extra ``memstrata[bench]``) is imported only here, when a plot is asked for, and
drawn without pyplot (a :class:`~matplotlib.figure.Figure` saved directly), so no global
backend state and no display are involved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import ConfigError, InvalidInputError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: the two ways a scope is searched, as drawn: exact (solid) and approximate (dashed)
_VARIANTS = (("exact", "-"), ("approximate", "--"))
_LATENCIES = (
    ("search_ms_excl_embedding_p50", "p50"),
    ("search_ms_excl_embedding_p95", "p95"),
    ("search_ms_excl_embedding_p99", "p99"),
    ("search_ms_p95", "p95 with query embedding"),
    ("search_cpu_ms_excl_embedding_p95", "p95 CPU time"),
)


def _series(result: Mapping[str, Any], variant: str, field: str) -> tuple[list[int], list[float]]:
    """The (turns, value) points of one field of one variant, in order of size."""
    points = []
    for size, row in result["sizes"].items():
        value = row.get(variant, {}).get(field)
        if isinstance(value, int | float):
            points.append((int(size), float(value)))
    points.sort()
    return [p[0] for p in points], [p[1] for p in points]


def _figure(
    path: Path, title: str, ylabel: str, draw: Callable[[Axes], bool], *, log_y: bool = True
) -> Path | None:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5), dpi=110)
    axes = figure.add_subplot()
    if not draw(axes):
        return None
    axes.set_xscale("log")
    if log_y:
        axes.set_yscale("log")
    axes.set_xlabel("turns in one scope")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="png")
    return path


def plot_scale(result: Mapping[str, Any], directory: Path) -> list[Path]:
    """Write ``scale_latency.png``, ``scale_memory.png`` and ``scale_build.png`` (those with
    something to draw) into ``directory``; return their paths."""
    if result.get("benchmark") != "scale" or not isinstance(result.get("sizes"), Mapping):
        raise InvalidInputError("not a bench scale result (no benchmark 'scale' with sizes)")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConfigError("plots need matplotlib: install memstrata[bench]") from None
    directory.mkdir(parents=True, exist_ok=True)

    def lines(axes: Axes, fields: tuple[tuple[str, str], ...]) -> bool:
        drawn = False
        for variant, style in _VARIANTS:
            for field, label in fields:
                x, y = _series(result, variant, field)
                if x:
                    axes.plot(x, y, style, marker="o", label=f"{label} ({variant})")
                    drawn = True
        return drawn

    def latency(axes: Axes) -> bool:
        return lines(axes, _LATENCIES)

    def memory(axes: Axes) -> bool:
        return lines(axes, (("index_mb", "index memory"), ("disk_mb", "on disk")))

    def build(axes: Axes) -> bool:
        return lines(axes, (("index_build_s", "build"), ("cold_open_s", "cold open")))

    embedder = result.get("query_embedder", "")
    written = [
        _figure(
            directory / "scale_latency.png",
            f"Search latency (queries: {embedder})",
            "milliseconds per search",
            latency,
        ),
        _figure(directory / "scale_memory.png", "Index memory and disk", "MiB", memory),
        _figure(directory / "scale_build.png", "Index build and cold open", "seconds", build),
    ]
    return [path for path in written if path is not None]
