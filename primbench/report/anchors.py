"""Where each case lives on the report page: its row's id, and the words a chart point shows for it.

A case's anchor is its key written for a reader: `reduce/vector_load_sum/float32/n=2^28/block=256`,
the distribution named only when it is not the op's primary one (the one the charts use), then the
variant's own parameters. Every chart point links to it, and the op's table of all its cases has
the row with that id."""

from __future__ import annotations

import math

from primbench.runfile.frame import block_or_none, is_number

# What a chart point reads of its case: its name, where it lives, and the figures of its title.
POINT_COLUMNS = ("key", "anchor", "op", "variant", "variant_name", "dtype", "n", "block", "distribution", "bytes",
                 "median_ms", "gbps", "pct_peak", "pct_sol", "param_items", "order", "chosen_block", "series")


def point_records(frame) -> list[dict]:
    """The frame's rows as dicts of POINT_COLUMNS only: a record of all ~55 columns costs ten times more."""
    return frame[[c for c in POINT_COLUMNS if c in frame]].to_dict("records")


def size_token(n) -> str:
    """n as '2^28' when a power of two, else its digits: the form an anchor and a title use."""
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def case_anchor(op, variant_name, dtype, n, block, distribution, param_items, primary_distribution) -> str:
    block = block_or_none(block)
    text = f"{op}/{variant_name}/{dtype}/n={size_token(n)}/block={block if block is not None else 'lib'}"
    if distribution and distribution != primary_distribution:
        text += f"/{distribution}"
    return text + "".join(f"/{name}={value}" for name, value in (param_items or ()))


def with_anchors(frame, primary: dict | None = None):
    """The case frame with an `anchor` column, each op's primary distribution (`primary`: {op:
    distribution}, the op views'; else found here) left out of it."""
    from primbench.report import selection

    if frame.empty:
        return frame.assign(anchor=[])
    if primary is None:
        primary = {op: selection.primary_slice(frame, op)[1] for op in frame["op"].unique()}
    anchors = [case_anchor(op, name, dtype, n, block, distribution, items, primary.get(op))
               for op, name, dtype, n, block, distribution, items in
               zip(frame["op"], frame["variant_name"], frame["dtype"], frame["n"], frame["block"],
                   frame["distribution"], frame["param_items"])]
    return frame.assign(anchor=anchors)


def _figure(value, spec: str) -> str:
    return f"{float(value):{spec}}" if is_number(value) else "-"


def case_title(row, *, light: bool = True) -> str:
    """A point's hover text: which case, then its time, GB/s and % of its speed of light (or of peak)."""
    block = block_or_none(row.get("block"))
    name = row.get("variant") or row.get("variant_name")
    where = f"{name} · {row.get('dtype')} · n = {size_token(row['n'])} · block {block if block is not None else 'library'}"
    if row.get("distribution"):
        where += f" · {row['distribution']}"
    median_ms = row.get("median_ms")
    time = f"{float(median_ms) * 1e3:,.1f} µs" if is_number(median_ms) else "no time"
    figures = [time, f"{_figure(row.get('gbps'), ',.0f')} GB/s"]
    pct_sol = row.get("pct_sol")
    if light and is_number(pct_sol) and math.isfinite(float(pct_sol)):
        figures.append(f"{float(pct_sol):.1f} % light")
    else:
        figures.append(f"{_figure(row.get('pct_peak'), '.1f')} % peak")
    return where + "\n" + " · ".join(figures)
