"""Charts for the explainer, drawn by matplotlib: numbers in, an SVG with its alt text and caption out.

Each function draws one chart from numbers the engine already computed and writes the alt text and
caption from those same numbers (figure_words.py), so what a screen-reader user hears cannot drift from what
the picture shows. Nothing here knows about templates, pages or files; `draw(job)` is what the build calls.

Every chart is drawn on chart.py's canvas, in its style: for a phone's column first, with real SVG text in a
font it was measured in, the same bytes from build to build, and refused if any two texts collide. Colours come
from palette.py by role, and draw() makes the dark variant by mapping them (palette.dark). Colour never carries
meaning alone: each colour is paired with a hatch, a marker, a line style or a label.

Each function imports the parts of matplotlib it draws with itself: the figure registry imports this module on
every build, and a build whose figures all come from the cache never loads matplotlib.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence

from .. import decimals
from . import figure_words as words
from . import palette
from .chart import (
    DRAFT_BAR,
    FONT,
    MARKERS,
    PROPOSED_BAR,
    TARGET_BAR,
    WIDTH,
    Figure,
    FigureError,
    FigureFailed,
    bar_axes,
    bar_style,
    canvas,
    decades,
    figure,
    finish,
    grid,
    heading,
    log_log,
    log_ticks,
    panel_columns,
    short_count,
    text_width,
    token_grid,
    wrap,
)
from .figure_words import Number, count, decimal, exact
from .palette import ACCEPTED, GREY, INK, MUTED, PALETTE, RESIDUAL, TARGET


def draw(job) -> tuple[str, str, str, str, str]:
    """Draw one registry job (its name, its drawing function `draw` and the arguments `kwargs` it is called with):
    (name, light SVG, dark SVG, alt, caption), or FigureError with one line, naming the function's module if the
    function raised."""
    try:
        f = job.draw(**job.kwargs)
        return (f.name, f.svg, palette.dark(f.svg), f.alt, f.caption)
    except FigureError:
        raise
    except Exception as exc:
        where, name = job.draw.__module__.replace(".", "/") + ".py", job.draw.__name__
        raise FigureFailed(f"{where}: {job.name}: {name}() failed: {type(exc).__name__}: {exc}") from None


# --- 1. the two distributions at each position ---------------------------------------------------


@figure
def profile_bars(
    name: str,
    tokens: Sequence[str],
    target_rows: Sequence[Sequence[Number]],
    draft_rows: Sequence[Sequence[Number]],
    proposals: Sequence[int | str],
    title: str,
    accept_probabilities: Sequence[Number],
) -> Figure:
    """One small panel per position, so the reader compares two bars for the same token rather than two curves.

    accept_probabilities are min(1, p/q) of each position's proposal, as the analysis computed them. The target
    p is a solid bar, the draft q an outline beside it, the proposed token's outline hatched and marked; the
    bonus position has only the target.
    """
    from matplotlib.patches import Patch

    tokens = list(tokens)
    k = len(draft_rows)
    props = [tokens.index(p) if isinstance(p, str) else int(p) for p in proposals]
    top = max(float(p) for row in (*target_rows, *draft_rows) for p in row)
    ymax, w = top * 1.65, 0.4  # room above the tallest bar for the proposal's mark and word
    cols, upright = panel_columns(canvas(1), tokens, k + 1)
    rows = math.ceil((k + 1) / cols)
    fig = canvas(0.75 + rows * (1.45 + (0.25 if upright else 0)))
    heading(
        fig,
        title,
        [Patch(**TARGET_BAR), Patch(**DRAFT_BAR), Patch(**PROPOSED_BAR)],
        ["target p", "draft q", "draft's proposal \u25bc"],
    )
    for i, ax in enumerate(token_grid(fig, tokens, k + 1, cols, ymax, upright, "probability")):
        t = [float(p) for p in target_rows[i]]
        if i == k:
            ax.bar(range(len(tokens)), t, 2 * w, **TARGET_BAR)
            ax.set_title(f"bonus (position {k + 1})")
            continue
        d = [float(p) for p in draft_rows[i]]
        p = props[i]
        ax.bar([j - w / 2 for j in range(len(tokens))], t, w, **TARGET_BAR)
        ax.bar(
            [j + w / 2 for j in range(len(tokens)) if j != p],
            [d[j] for j in range(len(tokens)) if j != p],
            w,
            **DRAFT_BAR,
        )
        ax.bar([p + w / 2], [d[p]], w, **PROPOSED_BAR)
        near = max(max(t[j], d[j]) for j in range(len(tokens)) if abs(j - p) <= 1)
        ax.plot([p + w / 2], [near + 0.07 * ymax], marker="v", color=INK, markersize=5, linestyle="none")
        side = "left" if p < len(tokens) / 2 else "right"
        ax.annotate(
            "proposal",
            (p + w / 2, near + 0.12 * ymax),
            ha=side,
            va="bottom",
            xytext=(-4 if side == "left" else 4, 0),
            textcoords="offset points",
        )
        ax.set_title(f"position {i + 1}")
    return Figure(
        name,
        finish(fig, name),
        *words.profile_bars_words(
            props=props,
            target_rows=target_rows,
            k=k,
            accept_probabilities=accept_probabilities,
            tokens=tokens,
            draft_rows=draft_rows,
            title=title,
        ),
    )


# --- 2. the sampler's output against the target -------------------------------------------------


@figure
def convergence_histograms(
    name: str,
    tokens: Sequence[str],
    position_labels: Sequence[str],
    target_rows: Sequence[Sequence[Number]],
    frequencies: Sequence[Sequence[Number]],
    samples: Sequence[int],
    title: str,
) -> Figure:
    """The target p as solid bars, what the sampler committed as a mark: agreement is a mark on its bar's top."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    tokens = list(tokens)
    m = len(position_labels)
    counts = [int(s) for s in samples]
    top = max(float(v) for row in (*target_rows, *frequencies) for v in row)
    ymax = top * 1.15
    observed = {"marker": "_", "markersize": 12, "markeredgewidth": 2.2, "color": INK, "linestyle": "none"}
    probe = canvas(1)
    cols, upright = panel_columns(probe, tokens, m)
    heads = [f"{lab}, n = {count(c)}" for lab, c in zip(position_labels, counts)]
    room = (WIDTH * 72 - 60) / cols - 8
    if max(text_width(probe, h) for h in heads) > room:
        heads = [f"{lab}\nn = {count(c)}" for lab, c in zip(position_labels, counts)]
    rows = math.ceil(m / cols)
    fig = canvas(0.75 + rows * (1.5 + (0.2 if "\n" in heads[0] else 0) + (0.25 if upright else 0)))
    heading(fig, title, [Patch(**TARGET_BAR), Line2D([], [], **observed)], ["target p", "observed share"])
    for i, ax in enumerate(token_grid(fig, tokens, m, cols, ymax, upright, "share")):
        ax.bar(range(len(tokens)), [float(v) for v in target_rows[i]], 0.62, **TARGET_BAR)
        ax.plot(range(len(tokens)), [float(v) for v in frequencies[i]], zorder=3, **observed)
        ax.set_title(heads[i])
    return Figure(
        name,
        finish(fig, name),
        *words.convergence_histograms_words(
            m=m,
            position_labels=position_labels,
            tokens=tokens,
            title=title,
            frequencies=frequencies,
            target_rows=target_rows,
            counts=counts,
        ),
    )


# --- 3. how fast the Monte Carlo error shrinks --------------------------------------------------

MANY = 6  # more series than this are drawn as small multiples, one highlighted per panel


@figure
def error_vs_samples(
    name: str, series: Sequence[tuple[str, Sequence[tuple[int, Number]]]], title: str, slope: float | None = None
) -> Figure:
    """Log-log, so 1/sqrt(n) is a straight line the reader can hold each curve against.

    slope is the curves' mean fitted log-log slope, as the analysis computed it; None leaves it unsaid. Up to
    MANY series share one chart; more are drawn as small multiples, each panel one series over the others in grey.
    """
    from matplotlib.lines import Line2D

    clean = [(label, [(int(n), float(e)) for n, e in points if n > 0 and float(e) > 0]) for label, points in series]
    drawn = [(label, pts) for label, pts in clean if pts]
    everything = [pt for _, pts in drawn for pt in pts]
    if not everything:
        raise ValueError("error_vs_samples needs at least one positive (samples, error) point")
    scale = statistics.median([e * math.sqrt(n) for n, e in everything])
    lo, hi = min(n for n, _ in everything), max(n for n, _ in everything)
    lo_e = min(min(e for _, e in everything), scale / math.sqrt(hi))
    hi_e = max(max(e for _, e in everything), scale / math.sqrt(lo))
    guide_n = [lo * (hi / lo) ** (i / 11) for i in range(12)]
    guide_e = [scale / math.sqrt(n) for n in guide_n]
    xlim, ylim = (lo / 1.6, hi * 1.6), (lo_e / 1.6, hi_e * 1.6)
    guide = {"color": MUTED, "linewidth": 1.3, "linestyle": (0, (5, 3))}

    def frame(ax, most_x: int, most_y: int) -> None:
        log_log(ax, xlim, ylim, decades(*xlim, most_x), decades(*ylim, most_y), short_count)
        ax.plot(guide_n, guide_e, zorder=1, **guide)

    many = len(drawn) > MANY
    if not many:
        fig = canvas(3.9)
        ax = fig.add_subplot()
        frame(ax, 4, 4)
        handles = [Line2D([], [], **guide)]
        for i, (_label, pts) in enumerate(drawn):
            lap = i // len(PALETTE)
            handles += ax.plot(
                [n for n, _ in pts],
                [e for _, e in pts],
                color=PALETTE[i % len(PALETTE)],
                linewidth=1.3,
                marker=MARKERS[(i + lap) % len(MARKERS)],
                markersize=5,
                linestyle=("-", (0, (4, 2)), (0, (1, 1.5)))[lap % 3],
            )
        heading(fig, title, handles, ["1/\u221an guide"] + [label for label, _ in drawn])
        ax.set_xlabel("samples n (log scale)")
        ax.set_ylabel("total variation (log scale)")
    else:
        cols = 3
        rows = math.ceil(len(drawn) / cols)
        fig = canvas(1.0 + rows * 1.25)
        for i, (ax, (label, pts)) in enumerate(zip(grid(fig, len(drawn), cols, sharex=True), drawn)):
            frame(ax, 2, 3)
            for other, opts in drawn:
                if other != label:
                    ax.plot([n for n, _ in opts], [e for _, e in opts], color=GREY, linewidth=0.8)
            ax.plot(
                [n for n, _ in pts],
                [e for _, e in pts],
                color=TARGET,
                linewidth=1.6,
                marker="o",
                markersize=3.5,
                zorder=3,
            )
            ax.set_title(label)
            if i + cols < len(drawn):
                ax.tick_params(axis="x", labelbottom=False)
        fig.supxlabel("samples n", fontsize=FONT)
        fig.supylabel("total variation", fontsize=FONT)
        heading(
            fig,
            title,
            [
                Line2D([], [], color=TARGET, linewidth=1.6, marker="o", markersize=3.5),
                Line2D([], [], color=GREY, linewidth=0.8),
                Line2D([], [], **guide),
            ],
            ["the panel's profile", "the others", "1/\u221an"],
        )
    return Figure(
        name, finish(fig, name), *words.error_vs_samples_words(many=many, slope=slope, drawn=drawn, title=title)
    )


# --- 4. how many tokens one round commits -------------------------------------------------------


@figure
def round_length_distribution(
    name: str, series: Sequence[tuple[str, Sequence[Number]]], k: int, expected: Sequence[Number]
) -> Figure:
    """Grouped bars of P(N = n), each draft's expected N marked, since the mean is what the speedup uses.

    expected holds each series' E[N], as the analysis computed it.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    m = len(series)
    n_values = list(range(1, k + 2))
    width = 0.8 / m
    means = [float(e) for e in expected]
    top = max(float(p) for _, probs in series for p in probs)
    lane = 0.16 * top
    ymax = top * 1.08 + lane * (m + 0.4)
    fig = canvas(3.9)
    ax = fig.add_subplot()
    handles = []
    for i, (_label, probs) in enumerate(series):
        offset = (i - (m - 1) / 2) * width
        colour = PALETTE[i % len(PALETTE)]
        ax.bar([n + offset for n in n_values], [float(p) for p in probs], width * 0.95, **bar_style(i))
        y = ymax - lane * (i + 0.7)
        mu = means[i]
        ax.plot([mu, mu], [0, y], color=colour, linewidth=1.2, linestyle=(0, (2, 2)), zorder=3)
        pin = {
            "marker": MARKERS[i % len(MARKERS)],
            "markersize": 7,
            "color": colour,
            "markeredgecolor": INK,
            "linestyle": "none",
        }
        ax.plot([mu], [y], zorder=4, **pin)
        # beside its marker, on the side where no taller dashed line (an earlier draft's) and no axis edge is in the way
        span = (text_width(fig, f"E[N] = {decimal(mu)}") + 14) * (k + 1.2) / (WIDTH * 72 - 60)
        clear_right = mu + span < k + 1.6 and not any(mu < other < mu + span for other in means[:i])
        clear_left = mu - span > 0.4 and not any(mu - span < other < mu for other in means[:i])
        if clear_right or clear_left:  # else the legend alone gives this E[N]
            right = clear_right if clear_right != clear_left else mu < (0.4 + k + 1.6) / 2
            ax.annotate(
                f"E[N] = {decimal(mu)}",
                (mu, y),
                xytext=(7 if right else -7, 0),
                textcoords="offset points",
                ha="left" if right else "right",
                va="center",
            )
        handles.append((Patch(**bar_style(i)), Line2D([], [], **pin)))
    yticks = [v for v in MaxNLocator(4).tick_values(0, top) if 0 <= v <= top * 1.1]
    bar_axes(ax, (0.4, k + 1.6), ymax, n_values, yticks, decimals.pct)
    ax.set_xlabel(
        wrap(
            fig,
            f"tokens committed in one round, N (K = {k} proposals; N = {k + 1}: all accepted plus the bonus)",
            WIDTH * 72 - 60,
        )
    )
    ax.set_ylabel("probability")
    heading(fig, "", handles, [f"{label}, E[N] = {decimal(mu)}" for (label, _), mu in zip(series, means)], most=1)
    return Figure(
        name,
        finish(fig, name),
        *words.round_length_distribution_words(k=k, series=series, means=means, n_values=n_values),
    )


# --- 5. speedup against draft length ------------------------------------------------------------


@figure
def speedup_vs_k(
    name: str,
    curves: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    best: Sequence[tuple[str, int, Number]],
    cost: Number | None = None,
) -> Figure:
    """Each curve rises while another draft token is likely to be kept and falls once it mostly costs; the star is
    the turn. cost is the draft's cost per token as a fraction of a target step (c); the title names it."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ks = sorted({int(kk) for _, pts in curves for kk, _ in pts})
    values = [float(s) for _, pts in curves for _, s in pts] + [1.0]
    best_of = {label: (kk, s) for label, kk, s in best}
    title = "Speedup against draft length K" + (
        f" at draft cost c\u00a0=\u00a0{exact(cost)}" if cost is not None else ""
    )
    lo, hi = min(values), max(values)
    fig = canvas(4.0)
    ax = fig.add_subplot()
    flat = {"color": MUTED, "linewidth": 1.2, "linestyle": (0, (5, 3))}
    ax.axhline(1, zorder=1, **flat)
    handles, labels = [], []
    for i, (label, pts) in enumerate(curves):
        colour = PALETTE[i % len(PALETTE)]
        handles += ax.plot(
            [int(kk) for kk, _ in pts],
            [float(s) for _, s in pts],
            color=colour,
            linewidth=1.5,
            marker=MARKERS[i % len(MARKERS)],
            markersize=4.5,
        )
        if label in best_of:
            kk, s = best_of[label]
            ax.plot(
                [kk],
                [float(s)],
                marker="*",
                markersize=14,
                color=colour,
                markeredgecolor=INK,
                markeredgewidth=0.8,
                linestyle="none",
                zorder=4,
            )
            label = f"{label}, best K = {kk}"
        labels.append(label)
    handles += [
        Line2D([], [], marker="*", markersize=12, color=MUTED, markeredgecolor=INK, linestyle="none"),
        Line2D([], [], **flat),
    ]
    labels += ["best K", "no gain (1\u00d7)"]
    ax.set_xlim(ks[0] - 0.5, ks[-1] + 0.5)
    ax.set_ylim(min(0.8, lo - 0.1), hi + 0.12 * (hi - min(lo, 1)))
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}\u00d7"))
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.set_xlabel("draft length K")
    ax.set_ylabel("speedup \u00d7")
    heading(fig, title, handles, labels, most=2)
    return Figure(
        name, finish(fig, name), *words.speedup_vs_k_words(curves=curves, best=best, cost=cost, best_of=best_of)
    )


# --- 6. why verifying several positions costs about as much as one ------------------------------


@figure
def roofline(
    name: str,
    positions: Sequence[int],
    times_ms: Sequence[Number],
    memory_ms: Number,
    compute_ms: Number,
    model_label: str,
    knee: Number | None = None,
    draft_positions: int | None = None,
    draft_ms: Number | None = None,
) -> Figure:
    """A cost model, drawn so it cannot be mistaken for a benchmark: 'model' and 'not a measurement' are on it.

    memory_ms is the weight-reading floor, compute_ms the compute time per scored position (a straight slope). knee
    is where compute overtakes memory, as the analysis computed it; None draws no knee.
    """
    pos = [int(p) for p in positions]
    times = [float(t) for t in times_ms]
    floor = [float(memory_ms)] * len(pos)
    slope = [float(compute_ms) * p for p in pos]
    crossing = None if knee is None else float(knee)
    flat = max(i for i, t in enumerate(times) if t <= 1.1 * times[0])
    fig = canvas(4.3)
    ax = fig.add_subplot()
    memory = {"color": PALETTE[0], "linewidth": 1.4, "linestyle": (0, (5, 3))}
    compute = {"color": PALETTE[1], "linewidth": 1.8, "linestyle": (0, (1.5, 2))}
    modelled = {"color": INK, "linewidth": 1.8, "marker": "o", "markersize": 4}
    ylim = (min(times + floor) / 1.6, max(times + slope) * 1.4)
    powers = [p for p in (2**e for e in range(24)) if pos[0] <= p <= pos[-1]]
    log_log(ax, (pos[0] / 1.3, pos[-1] * 1.3), ylim, powers[:: max(1, math.ceil(len(powers) / 6))], log_ticks(*ylim))
    handles = ax.plot(pos, floor, **memory) + ax.plot(pos, slope, **compute) + ax.plot(pos, times, **modelled)
    if crossing is not None and pos[0] <= crossing <= pos[-1]:
        ax.axvline(crossing, color=MUTED, linewidth=0.9, linestyle=(0, (1, 1.65)))
        ax.annotate(
            f"knee \u2248 {decimal(crossing, 0)}",
            (crossing, ylim[1]),
            xytext=(-4, -4),
            textcoords="offset points",
            ha="right",
            va="top",
            color=MUTED,
        )
    ax.set_xlabel("positions scored in one forward pass (log scale)")
    ax.set_ylabel("time per pass, ms (log)")
    ax.set_title(wrap(fig, f"A model, not a measurement: {model_label}", WIDTH * 72 - 70), loc="left", color=MUTED)
    heading(
        fig, "Time per forward pass (a cost model)", handles, ["memory floor", "compute slope", "modelled time"], most=2
    )
    return Figure(
        name,
        finish(fig, name),
        *words.roofline_words(
            crossing=crossing,
            model_label=model_label,
            draft_positions=draft_positions,
            draft_ms=draft_ms,
            times=times,
            pos=pos,
            flat=flat,
        ),
    )


# --- 7. acceptance rate per position ------------------------------------------------------------


@figure
def acceptance_bars(name: str, labels: Sequence[str], rates: Sequence[tuple[str, Sequence[Number]]]) -> Figure:
    """Grouped bars with their exact values printed on them (where they fit), since the text quotes those fractions."""
    from matplotlib.patches import Patch

    m = len(rates)
    width = 0.8 / m
    shown = [re.sub(r"^position\s+", "", str(lab)) for lab in labels]  # the axis title says "position"
    fig = canvas(3.7)
    ax = fig.add_subplot()
    values = [exact(a) for _, alphas in rates for a in alphas]
    slot = (WIDTH * 72 - 60) / len(labels) * width
    printed = max(text_width(fig, v) for v in values) + 2 <= slot
    for i, (_profile, alphas) in enumerate(rates):
        offset = (i - (m - 1) / 2) * width
        ax.bar([j + offset for j in range(len(alphas))], [float(a) for a in alphas], width * 0.92, **bar_style(i))
        if printed:
            for j, a in enumerate(alphas):
                ax.annotate(
                    exact(a),
                    (j + offset, float(a)),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                )
    bar_axes(ax, (-0.5, len(labels) - 0.5), 1.14, range(len(labels)), [0, 0.25, 0.5, 0.75, 1])
    ax.set_xticklabels(shown)
    ax.set_xlabel("position")
    ax.set_ylabel("acceptance rate \u03b1")
    heading(fig, "", [Patch(**bar_style(i)) for i in range(m)], [profile for profile, _ in rates], most=2)
    return Figure(name, finish(fig, name), *words.acceptance_bars_words(rates=rates, labels=labels))


# --- 9. why the output is exact: what the check keeps plus what the residual adds is p ----------


@figure
def exactness(
    name: str,
    tokens: Sequence[str],
    panels: Sequence[tuple[str, int, Sequence[Number], Sequence[Number], Sequence[Number], Sequence[Number], Number]],
) -> Figure:
    """For one position of each draft, per token: a stack of the accepted mass min(p, q) and the residual's top-up
    (1 - alpha) r, which reaches the target's p exactly, with the draft's q outlined beside it.

    Each panel is (draft name, position, p, q, min(p, q), (1 - alpha) r, alpha), exact numbers from the facts.
    """
    from matplotlib.patches import Patch

    tokens = list(tokens)
    w = 0.27  # three bars a token: p, the stack that rebuilds it, q
    top = max(float(v) for _, _, p, q, *_ in panels for v in (*p, *q))
    ymax = top * 1.2
    probe = canvas(1)
    _, upright = panel_columns(probe, tokens, 1)
    fig = canvas(0.95 + len(panels) * (1.7 + (0.25 if upright else 0)))
    accepted = {"facecolor": ACCEPTED, "edgecolor": ACCEPTED, "linewidth": 0.6}
    residual = {"facecolor": RESIDUAL, "edgecolor": INK, "linewidth": 0.6, "hatch": "."}
    axes = token_grid(fig, tokens, len(panels), 1, ymax, upright, "probability")
    for ax, (label, position, p, q, kept, topped, alpha) in zip(axes, panels):
        xs = range(len(tokens))
        ax.bar([j - w for j in xs], [float(v) for v in p], w, **TARGET_BAR)
        ax.bar(xs, [float(v) for v in kept], w, **accepted)
        ax.bar(xs, [float(v) for v in topped], w, [float(v) for v in kept], **residual)
        ax.bar([j + w for j in xs], [float(v) for v in q], w, **DRAFT_BAR)
        ax.set_title(wrap(probe, f"{label}, position {position} (\u03b1 = {exact(alpha)})", WIDTH * 72 - 60))
    heading(
        fig,
        "Kept plus residual is exactly p, whatever q is",
        [Patch(**TARGET_BAR), Patch(**accepted), Patch(**residual), Patch(**DRAFT_BAR)],
        ["target p", "kept: min(p, q)", "residual: (1 \u2212 \u03b1)\u00b7r", "draft q"],
        most=2,
    )
    return Figure(name, finish(fig, name), *words.exactness_words(panels=panels, tokens=tokens))
