#!/usr/bin/env python3
"""Would a columnar copy meet Explore's and the funnel's targets (design §17)?

Copies a seeded SQLite database's visits and events (the read bench's seed,
kept with BENCH_REUSE_DATABASE) into an in-memory DuckDB, optionally scaled
up by copying every row `--scale` times under fresh visit, visitor and event
ids (the same 30 days, so the window holds `scale` times the traffic), and
times, in the same run, the statements a columnar Explore would run for the
read bench's filtered queries, the explorer page with a filter and the
4-step funnel's step events. Each is timed beside the same run's plain count
of the window's visits (the baseline) and printed as p50 / p95 ms and the
ratio to it. This measures the engine, not a finished feature: the SQL is
close to what Explore counts (visits reaching the range, their rows'
pageviews) without the edge corrections, which touch a day's rows.

    pip install duckdb numpy
    python3 bench/columnar_probe.py /tmp/r1m.db             # as seeded
    python3 bench/columnar_probe.py /tmp/r1m.db --scale 10  # ten times the rows

It only reads the SQLite file (through the sqlite3 command, as CSV).
"""

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import tempfile
import time

import duckdb

VISIT_COLUMNS = (
    "id, site_id, visitor_id, started_at, ended_at, duration_seconds, human_event_count, "
    "human_pageview_count, event_count, entry_page, exit_page, referrer, channel, source, "
    "utm_source, utm_medium, utm_campaign, country, region, city, device_type, browser, os, "
    "link_id, CAST(is_bot AS INTEGER) AS is_bot"
)
EVENT_COLUMNS = (
    "id, site_id, visitor_id, session_id, event_type, event_name, page, "
    "CAST(is_bot AS INTEGER) AS is_bot, timestamp"
)
ID_STEP = 1 << 40  # added to every id per copy: no copy's ids meet another's


def export(db_path, table, columns, out):
    """One table's columns as CSV with a header, by the sqlite3 command."""
    with open(out, "w") as file:
        subprocess.run(
            ["sqlite3", "-readonly", "-header", "-csv", db_path, f"SELECT {columns} FROM {table}"],
            stdout=file,
            check=True,
        )


def timed(con, sql, runs):
    """p50 and p95 in ms over `runs` calls after one warm-up, and the rows."""
    rows = con.execute(sql).fetchall()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        con.execute(sql).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    return statistics.median(times), p95, rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("database")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    lite = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True)
    site, first, last = lite.execute(
        "SELECT site_id, MIN(timestamp), MAX(timestamp) FROM events GROUP BY site_id ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()
    lite.close()
    day = 86_400_000
    # The read bench's range: 29 days back from the last day, from the data's second day.
    to = (last // day + 1) * day
    start = max(to - 29 * day, (first // day + 1) * day)

    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    loaded = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        visits_csv, events_csv = os.path.join(tmp, "visits.csv"), os.path.join(tmp, "events.csv")
        export(args.database, "tracked_sessions", VISIT_COLUMNS, visits_csv)
        export(args.database, "events", EVENT_COLUMNS, events_csv)
        con.execute(f"CREATE TEMP TABLE v0 AS SELECT * FROM read_csv('{visits_csv}', header = true)")
        con.execute(f"CREATE TEMP TABLE e0 AS SELECT * FROM read_csv('{events_csv}', header = true)")
    copies = f"range({args.scale})"
    # Sorted by site and time, as a writer appending in time order keeps them:
    # DuckDB skips row groups by their min/max.
    con.execute(
        f"""CREATE TABLE visits AS SELECT * REPLACE (id + k * {ID_STEP} AS id,
                visitor_id + k * {ID_STEP} AS visitor_id)
            FROM v0, (SELECT range AS k FROM {copies}) ORDER BY site_id, started_at"""
    )
    con.execute(
        f"""CREATE TABLE events AS SELECT * REPLACE (id + k * {ID_STEP} AS id,
                visitor_id + k * {ID_STEP} AS visitor_id, session_id + k * {ID_STEP} AS session_id)
            FROM e0, (SELECT range AS k FROM {copies}) ORDER BY site_id, timestamp"""
    )
    # The events with their visit's dimensions on each row (a columnar copy
    # stores them compressed): a filter on a visit dimension needs no join.
    con.execute(
        """CREATE TABLE events_wide AS SELECT e.*, v.channel, v.source, v.country, v.device_type
           FROM events e JOIN visits v ON v.id = e.session_id ORDER BY e.site_id, e.timestamp"""
    )
    con.execute("DROP TABLE v0")
    con.execute("DROP TABLE e0")
    load_seconds = time.perf_counter() - loaded
    n_visits = con.execute("SELECT COUNT(*) FROM visits").fetchone()[0]
    n_events = con.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    print(f"DuckDB {duckdb.__version__}, threads {args.threads}, scale {args.scale}: "
          f"{n_events:,} events, {n_visits:,} visits, loaded in {load_seconds:.1f} s")

    window = (
        f"v.site_id = {site} AND v.is_bot = 0 AND v.started_at >= {start - day} "
        f"AND v.started_at < {to} AND v.ended_at >= {start}"
    )
    one = "v.channel = 'Organic Search'"
    three = (
        "v.channel IN ('Organic Search', 'Direct', 'Email') AND v.device_type IS DISTINCT FROM 'tablet' "
        f"AND EXISTS (SELECT 1 FROM events x WHERE x.session_id = v.id AND x.site_id = {site} "
        f"AND x.timestamp >= {start} AND x.timestamp < {to} AND x.is_bot = 0 AND x.page LIKE '%/%')"
    )
    event_window = f"e.site_id = {site} AND e.is_bot = 0 AND e.timestamp >= {start} AND e.timestamp < {to}"
    day_of = f"(v.started_at // {day})"

    def by_visit(dimension, condition):
        return (f"SELECT {dimension} AS d, COUNT(DISTINCT v.visitor_id), SUM(v.human_pageview_count) "
                f"FROM visits v WHERE {window} AND {condition} GROUP BY 1 ORDER BY 2 DESC LIMIT 9")

    def by_page(condition, extra=""):
        return (f"SELECT e.page, COUNT(DISTINCT e.visitor_id), COUNT(*) FILTER (e.event_type = 'pageview') "
                f"FROM events e JOIN visits v ON v.id = e.session_id "
                f"WHERE {event_window} AND {condition} {extra} GROUP BY 1 ORDER BY 2 DESC LIMIT 9")

    def by_page_wide(condition, extra=""):
        return (f"SELECT e.page, COUNT(DISTINCT e.visitor_id), COUNT(*) FILTER (e.event_type = 'pageview') "
                f"FROM events_wide e WHERE {event_window} AND {condition.replace('v.', 'e.')} {extra} "
                "GROUP BY 1 ORDER BY 2 DESC LIMIT 9")

    panels = ["channel", "source", "utm_source", "utm_medium", "utm_campaign", "entry_page", "exit_page",
              "country", "region", "city", "device_type", "browser", "os"]
    # The explorer's shared pass: every visit panel of the page in one statement.
    shared_pass = (
        "SELECT GROUPING(" + ", ".join(panels) + ") AS grouping_set, " + ", ".join(panels) + ", COUNT(DISTINCT v.visitor_id), COUNT(*), SUM(v.human_pageview_count), "
        "SUM(CASE WHEN v.event_count <= 1 THEN 1 ELSE 0 END), SUM(v.duration_seconds) "
        f"FROM visits v WHERE {window} AND {one} GROUP BY GROUPING SETS ("
        + ", ".join(f"({p})" for p in panels) + ", ())"
    )
    steps = [
        "e.event_type = 'pageview' AND e.page LIKE '/docs%'",
        "e.event_type = 'pageview' AND e.page = '/pricing'",
        "e.event_type = 'pageview' AND e.page = '/demo'",
        "e.event_type = 'custom_event' AND e.event_name = 'form_submit'",
    ]
    bits = " + ".join(f"(CASE WHEN {step} THEN {1 << at} ELSE 0 END)" for at, step in enumerate(steps))
    funnel_rows = (
        f"SELECT e.visitor_id, e.session_id, e.timestamp, {bits} AS steps FROM events e "
        f"WHERE {event_window} AND (" + " OR ".join(f"({s})" for s in steps) + ") "
        "ORDER BY e.visitor_id, e.timestamp, e.id"
    )
    cases = [
        ("visits in the window (baseline)", f"SELECT COUNT(*) FROM visits v WHERE {window}", None),
        ("visit:source, 1 filter", by_visit("v.source", one), 500),
        ("visit:country, 1 filter", by_visit("v.country", one), 500),
        ("time:day, 1 filter", by_visit(day_of, one), 500),
        ("event:page, 1 filter", by_page(one), 500),
        ("visit:source, 3 filters", by_visit("v.source", three), 500),
        ("visit:country, 3 filters", by_visit("v.country", three), 500),
        ("time:day, 3 filters", by_visit(day_of, three), 500),
        ("event:page, 3 filters",
         by_page("v.channel IN ('Organic Search', 'Direct', 'Email') AND v.device_type IS DISTINCT FROM 'tablet'",
                 "AND e.page LIKE '%/%'"), 500),
        ("event:page, 1 filter, visit columns on events", by_page_wide(one), 500),
        ("event:page, 3 filters, visit columns on events",
         by_page_wide("v.channel IN ('Organic Search', 'Direct', 'Email') AND v.device_type IS DISTINCT FROM 'tablet'",
                      "AND e.page LIKE '%/%'"), 500),
        ("explorer shared pass (13 panels), 1 filter", shared_pass, None),
        ("explorer top pages, 1 filter", by_page(one), None),
        ("explorer chart by day, 1 filter", by_visit(day_of, one), None),
    ]
    print(f"\n{'statement':<46} {'p50/p95 ms':>17} {'/ base':>8} {'target':>7}")
    base = None
    for name, sql, target in cases:
        p50, p95, _ = timed(con, sql, args.runs)
        base = base or p50
        verdict = "" if target is None else ("met" if p95 < target else "MISSED")
        print(f"{name:<46} {p50:>8.1f}/{p95:>8.1f} {p50 / base:>8.1f} {target or '':>7} {verdict}")

    # The funnel's step events, sorted per visitor and handed over as columns
    # (numpy arrays): what a Rust walk would read through Arrow.
    times = []
    for _ in range(args.runs + 1):
        started = time.perf_counter()
        columns = con.execute(funnel_rows).fetchnumpy()
        times.append((time.perf_counter() - started) * 1000)
    times = sorted(times[1:])
    rows = len(columns["steps"])
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(f"{'funnel step events, sorted, as columns':<46} {statistics.median(times):>8.1f}/{p95:>8.1f} "
          f"{statistics.median(times) / base:>8.1f} {500:>7} ({rows:,} rows)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process {peak:,.0f} MB")


if __name__ == "__main__":
    main()
