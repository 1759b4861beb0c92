"""Issue 36's "first walk at the floor": every target of the issue, each with its figure and PASS/MISS, gathered from
the rows of this run (the rows themselves are measured in their groups: `scale` for the walk, the memory and the
stalls; `untar`, `seq` and `files` for the rest). A target whose group did not run says which group measures it;
one that cannot be measured here says why ("not measured: …")."""

from .rows import fmt

# (target, the row that measures it, the group that has the row, how to read the row's figure)
TARGETS = [
    ("first cold find of 1,000,000 adopted items ≤ 2× the fuse_floor listing floor, same run (stretch 1.5×)",
     "scale-find-floor", "scale", "limit"),
    ("the same find ≤ 1/3 of rclone's (rclone mount of the same folder, same run)", "scale-find-rclone", "scale",
     "limit"),
    ("a walk after --prefetch-listing ≤ 1.2× a warm walk", "scale-prefetch-walk", "scale", "limit"),
    ("stat+open p99 while 1 GiB is written with fsync and a remote merge of 10,000 items runs ≤ 3× idle",
     "scale-stat-loaded", "scale", "limit"),
    ("  and no stall over 50 ms meanwhile", "scale-stat-loaded-max", "scale", "limit"),
    ("daemon RSS after a full walk of 1,000,000 items ≤ 700 MB", "scale-rss-walk", "scale", "limit"),
    ("untar ≤ 1.3× libfuse passthrough_ll with extended attributes on (-o xattr), same run", "untar-xattr", "untar",
     "limit"),
    ("warm sequential read ≤ 1.2× native (time)", "seq-read-warm", "seq", "inverse-rate"),
    ("unlink of 5,000 fresh files ≤ 10× native", "unlink-fresh", "files", "time"),
]


def _entry(target, row, group, reading, scale_items):
    if row is None:
        return {"target": target, "key": None, "figure": "-", "result": f"not run (in the `{group}` group)"}
    entry = {"target": target, "key": row.key, "figure": "-", "result": row.verdict}
    if row.error:
        entry["result"] = f"ERROR: {row.error}"
        return entry
    if row.skipped:
        return entry
    if reading == "limit" and row.folio is not None:
        entry["figure"] = fmt(row.folio, row.unit)
    elif reading == "time" and row.ratio is not None:
        entry["figure"] = f"{row.ratio:.2f}× native"
    elif reading == "inverse-rate" and row.ratio:
        # A rate row (MiB/s, Folio/native): as a time, native/Folio, against 1.2×.
        entry["figure"] = f"{1 / row.ratio:.2f}× native"
        entry["result"] = "PASS" if 1 / row.ratio <= 1.2 else "MISS"
    if group == "scale" and scale_items != 1_000_000:
        entry["figure"] += f" (at {scale_items:,} items)"
    return entry


def summary(rows, scale_items):
    """The issue's targets as entries (target, row key, figure, result), in the issue's order."""
    by_key = {row.key: row for row in rows}
    return [_entry(target, by_key.get(key), group, reading, scale_items)
            for target, key, group, reading in TARGETS]


def markdown(entries):
    lines = ["| Issue 36 target | Figure | Result |", "| --- | ---: | --- |"]
    lines += [f"| {entry['target']} | {entry['figure']} | {entry['result']} |" for entry in entries]
    lines.append("| every other row within noise of before | `--compare BEFORE.json` prints before/after | - |")
    return "\n".join(lines)
