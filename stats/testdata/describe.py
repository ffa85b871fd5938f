"""Describe CSV columns with pandas: the oracle of package stats' tests and benchmark.

Usage: describe.py MANIFEST.json [REPEAT]

The manifest lists cases: {"cases": [{"name", "csv", "columns": [{"name", "dtype", "kind"}]}]}.
Every CSV has a header row, a first column "_row" and one column per entry; `\\N` is null.
dtype is the pandas dtype the column is read as (no guessing); kind is number, string, date
or instant (dates and instants are converted to datetime64 after reading).

Prints {case: {"describe_seconds": best time of describe() over REPEAT runs,
"columns": {column: {statistic: value}}}} as JSON. Float statistics are repr strings (exact,
and "nan"/"inf" survive), counts are integers, top is a string: YYYY-MM-DD for dates,
nanoseconds since the epoch for instants.
"""
import json
import sys
import time
import warnings

import pandas as pd

pd.set_option("compute.use_bottleneck", False)
warnings.simplefilter("ignore", FutureWarning)  # pandas 1.5 on datetime describe

NUMERIC = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]


def read(case):
    cols = case["columns"]
    df = pd.read_csv(
        case["csv"],
        dtype={"_row": "int64", **{c["name"]: c["dtype"] for c in cols}},
        keep_default_na=False,
        na_values=["\\N"],
        float_precision="round_trip",
    )
    for c in cols:
        if c["kind"] == "date":
            df[c["name"]] = pd.to_datetime(df[c["name"]], format="%Y-%m-%d")
        elif c["kind"] == "instant":
            df[c["name"]] = pd.to_datetime(df[c["name"]], utc=True)
    return df.drop(columns="_row")


def describe(df):
    # pandas 2 describes datetimes as numbers; the API (and pandas 1.5) as categories.
    if int(pd.__version__.split(".")[0]) >= 2:
        df = df.apply(lambda s: s.astype(object) if s.dtype.kind == "M" else s)
    return df.describe(include="all")


def top(value, kind):
    if kind == "date":
        return value.strftime("%Y-%m-%d")
    if kind == "instant":
        return str(pd.Timestamp(value).value)
    return value


def main():
    with open(sys.argv[1]) as f:
        manifest = json.load(f)
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    out = {}
    for case in manifest["cases"]:
        df = read(case)
        best = None
        for _ in range(repeat):
            start = time.perf_counter()
            d = describe(df)
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        columns = {}
        for c in case["columns"]:
            s = d[c["name"]]
            if c["kind"] == "number":
                columns[c["name"]] = {k: repr(float(s[k])) for k in NUMERIC}
            else:
                n = int(s["count"])
                columns[c["name"]] = {
                    "count": n,
                    "unique": int(s["unique"]),
                    "top": top(s["top"], c["kind"]) if n else None,
                    "freq": int(s["freq"]) if n else None,
                }
        out[case["name"]] = {"describe_seconds": best, "columns": columns}
    json.dump(out, sys.stdout)


main()
