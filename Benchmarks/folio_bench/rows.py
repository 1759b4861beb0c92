"""Rows and their reporting: the figures of one benchmark, its verdict, the markdown table, the JSON of a run and the
before/after comparison of two runs.

A row has a name, a unit, a kind and a target. Kinds: "rate" (higher is better, ratio = folio/native, the target is
a minimum), "time" (lower is better, ratio = folio/native, the target is a maximum), "limit" (an absolute target for
Folio alone: folio ≤ target), "info" (a figure without a target). The passthrough figure (the reference side) and its
ratio to native are shown for comparison; the verdict does not look at them. A row that could not be measured here
(a missing option or tool) says why in `skipped` and prints "not measured: WHY" instead of a verdict."""

import json
import os

MiB = 1 << 20


def log(message):
    print(message, flush=True)


def fmt(value, unit):
    if value is None:
        return "-"
    if unit == "ms":
        return f"{value * 1e3:.1f} ms" if value * 1e3 < 1000 else f"{value:.2f} s"
    if unit == "us":
        return f"{value * 1e6:.1f} µs"
    if unit == "MiB/s":
        return f"{value:.0f} MiB/s"
    if unit == "IOPS":
        return f"{value:,.0f} IOPS"
    return f"{value:g} {unit}"


def ratio_text(ratio):
    return "-" if ratio is None else f"{ratio:.2f}"


class Row:
    def __init__(self, key, label, unit, kind, target):
        self.key, self.label, self.unit, self.kind, self.target = key, label, unit, kind, target
        self.native = self.folio = self.passthrough = None
        self.error = None
        self.reference_error = None  # the passthrough side failed, the folio/native verdict stands
        self.skipped = None  # why this row is not measured here (printed as "not measured: …")
        self.note = ""

    @property
    def ratio(self):
        if self.native is None or self.folio is None or self.native == 0:
            return None
        return self.folio / self.native

    @property
    def reference_ratio(self):
        if self.native is None or self.passthrough is None or self.native == 0:
            return None
        return self.passthrough / self.native

    @property
    def reference_text(self):
        return "ERROR" if self.reference_error else fmt(self.passthrough, self.unit)

    @property
    def verdict(self):
        if self.error:
            return "ERROR"
        if self.skipped:
            return f"not measured: {self.skipped}"
        if self.kind == "info":  # a figure printed for the README, no target
            return "-"
        if self.kind == "limit":  # an absolute target for Folio alone (no native side)
            return "-" if self.folio is None or self.target is None else ("PASS" if self.folio <= self.target
                                                                          else "MISS")
        if self.ratio is None:
            return "-"
        ok = self.ratio >= self.target if self.kind == "rate" else self.ratio <= self.target
        return "PASS" if ok else "MISS"

    @property
    def target_text(self):
        if self.kind == "info":
            return "-"
        if self.kind == "limit":
            return f"≤ {fmt(self.target, self.unit)}"
        return f"≥ {self.target:g}" if self.kind == "rate" else f"≤ {self.target:g}×"

    def as_json(self):
        return {"key": self.key, "label": self.label, "unit": self.unit, "kind": self.kind, "target": self.target,
                "native": self.native, "folio": self.folio, "passthrough": self.passthrough, "ratio": self.ratio,
                "reference_ratio": self.reference_ratio, "verdict": self.verdict, "error": self.error,
                "reference_error": self.reference_error, "skipped": self.skipped, "note": self.note.strip()}


def markdown(rows):
    lines = ["| Benchmark | Native | Folio | Passthrough | Folio/native | Passthrough/native | Target | Result |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in rows:
        figures = f"| {row.label} | {fmt(row.native, row.unit)} | {fmt(row.folio, row.unit)} | {row.reference_text}"
        if row.error:
            lines.append(f"{figures} | - | - | {row.target_text} | ERROR: {row.error} |")
            continue
        result = row.verdict + (f" (passthrough ERROR: {row.reference_error})" if row.reference_error else "")
        lines.append(f"{figures} | {ratio_text(row.ratio)} | {ratio_text(row.reference_ratio)} "
                     f"| {row.target_text} | {result} |")
    return "\n".join(lines)


# -- a run's JSON, and two runs side by side -------------------------------------------------------------------------


def write_json(path, rows, summary, args):
    """Every row (and the issue-36 summary) of this run, for a later `--compare`."""
    document = {"format": 1, "host": os.uname().nodename, "cpus": os.cpu_count(),
                "mode": "quick" if args.quick else "full", "only": args.only,
                "rows": [row.as_json() for row in rows], "targets": summary}
    with open(path, "w") as f:
        json.dump(document, f, indent=1)
    log(f"\nrows written to {path}")


def load_rows(path):
    """The rows of a JSON written by --json-out, by key, in their order."""
    with open(path) as f:
        document = json.load(f)
    return {row["key"]: row for row in document.get("rows", [])}


def _figure(row):
    """The figure a comparison looks at: the ratio to native where there is one, else Folio's own."""
    if row is None:
        return None, ""
    if row.get("ratio") is not None:
        return row["ratio"], "×native"
    return row.get("folio"), row.get("unit") or ""


def _cell(row):
    if row is None:
        return "-"
    if row.get("error"):
        return "ERROR"
    if row.get("skipped"):
        return "not measured"
    value, unit = _figure(row)
    if value is None:
        return "-"
    return f"{value:.2f}×" if unit == "×native" else fmt(value, unit)


def compare(before, after):
    """A markdown table of every row in either run: its figure before and after (Folio/native where the row has a
    native side, else Folio's figure), the change, and both verdicts. Lower is better except for "rate" rows."""
    keys = list(after) + [key for key in before if key not in after]
    lines = ["| Benchmark | Before | After | Change | Before result | After result |",
             "| --- | ---: | ---: | ---: | --- | --- |"]
    for key in keys:
        old, new = before.get(key), after.get(key)
        label = (new or old)["label"]
        change = "-"
        (a, _), (b, _) = _figure(old), _figure(new)
        if a and b and not (old.get("error") or new.get("error")):
            percent = (b / a - 1) * 100
            better = percent > 0 if (new or old)["kind"] == "rate" else percent < 0
            change = f"{percent:+.0f}%" + (" better" if better and abs(percent) >= 1 else
                                           " worse" if abs(percent) >= 1 else "")
        verdicts = [("-" if row is None else row.get("verdict", "-")) for row in (old, new)]
        lines.append(f"| {label} | {_cell(old)} | {_cell(new)} | {change} | {verdicts[0]} | {verdicts[1]} |")
    return "\n".join(lines)
