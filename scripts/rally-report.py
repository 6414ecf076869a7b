"""Reports of scripts/rally.sh, from Rally's CSV reports and freshbench's
results files in the work directory:

    rally-report.py race WORK CLIENTS VERSION "IDS" "RUNS"
    rally-report.py rate CSV
    rally-report.py driver WORK VERSION WARMUP DURATION "RUNS"

race and driver print a Markdown table; rate prints Rally's mean bulk
throughput in one report.
"""
import csv
import json
import math
import os
import sys


def bulk(path):
    """Rally's figures of the bulk task in the CSV report at path."""
    m = {}
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) >= 3 and row[1] == "bulk":
                try:
                    m[row[0]] = float(row[2])
                except ValueError:
                    pass
    return m


def results(path):
    with open(path) as f:
        return json.load(f)


def num(v):
    return "–" if math.isnan(v) else f"{v:,.0f}"


def ms(a, b):
    return f"{num(a)} / {num(b)}"


def race(work, clients, version, ids, runs):
    print("| tool | setting | throughput, docs/s | latency p50 / p99, ms | service time p50 / p99, ms | also |")
    print("|---|---|---|---|---|---|")
    for i in ids.split():
        m = bulk(os.path.join(work, f"rally-{i}.csv"))
        get = lambda k: m.get(k, float("nan"))
        print(f"| esrally {version} | unthrottled bulk, {clients} clients, {'auto-generated' if i == 'auto' else 'client-supplied'} ids"
              f" | median {num(get('Median Throughput'))} (min {num(get('Min Throughput'))}, max {num(get('Max Throughput'))})"
              f" | {ms(get('50th percentile latency'), get('99th percentile latency'))}"
              f" | {ms(get('50th percentile service time'), get('99th percentile service time'))}"
              f" | error rate {get('error rate'):.2f} % |")
    for r in runs.split():
        rate, n = r.split("/")
        s = results(os.path.join(work, f"freshbench-{rate}-{n}.json"))["summary"]
        w, st, lag = s["write_latency"], s["service_time"], s["freshness_lag"]
        audit = f"audit: {s['missing']:,} missing" if s.get("audited") else "not audited"
        print(f"| freshbench | {num(float(rate))}/s target, {n} in flight"
              f" | achieved {num(s['achieved_events_per_s'])}"
              f" | {ms(w['p50_ms'], w['p99_ms'])} | {ms(st['p50_ms'], st['p99_ms'])}"
              f" | {s['late_batches']:,} of {s['batches']:,} batches late; {s['events_unsent']:,} of {s['events_due']:,} events unsent,"
              f" {s['events_failed']:,} failed; {audit}; freshness lag p50 / p99 {ms(lag['p50_ms'], lag['p99_ms'])} ms |")


def driver(work, version, warmup, duration, runs):
    seconds = float(warmup) + float(duration)
    cal = {c["batch_size"]: c for c in results(os.path.join(work, "calibrate.json"))["calibration"]["points"] if c["found"]}
    print("| batch | tool | how | events/s | CPU s per 100k events | esrally's CPU ÷ this |")
    print("|---|---|---|---|---|---|")
    for r in runs.split():
        batch, clients = (int(x) for x in r.split("/"))
        rally_rate = bulk(os.path.join(work, f"rally-noop-{batch}-{clients}.csv"))["Mean Throughput"]
        with open(os.path.join(work, f"rally-noop-{batch}-{clients}.cpu")) as f:
            rally_cpu = float(f.read())
        # Rally's CPU includes its start-up and warm-up: so do its documents.
        rally = rally_cpu / (rally_rate * seconds) * 1e5
        print(f"| {batch} | esrally {version} | unthrottled, {clients} client(s), start-up included | {rally_rate:,.0f} | {rally:.2f} | 1 |")
        res = results(os.path.join(work, f"freshbench-noop-{batch}.json"))
        fb = res["driver_cpu"]["cpu_s"] / res["summary"]["events_acked"] * 1e5
        print(f"| {batch} | freshbench run | at esrally's rate, start-up and audit included | {res['summary']['achieved_events_per_s']:,.0f} | {fb:.2f} | {rally / fb:.1f} |")
        c = cal.get(batch)
        if c:
            cc, top = c["cpu_per_100k_events_s"], c["ceiling_events_per_s"]
            print(f"| {batch} | freshbench calibrate | its ceiling ({top / rally_rate:.1f}× esrally's rate) | {top:,.0f} | {cc:.2f} | {rally / cc:.1f} |")


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "race":
        race(*args)
    elif cmd == "rate":
        m = bulk(args[0])
        if "Mean Throughput" in m:
            print(round(m["Mean Throughput"]))
    elif cmd == "driver":
        driver(*args)
    else:
        sys.exit(f"rally-report.py: unknown report {cmd}")


if __name__ == "__main__":
    main(sys.argv)
