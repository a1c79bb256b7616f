"""The figures of load runs as lines and tables, each row beside the baseline of its run.

The baseline of a row is the run of the base target (``baseline_gc`` when
the suite has it, else ``baseline``) at the same pace and player count:
ratios of accepted actions/s and of CPU per accepted action are to it.
"""

from __future__ import annotations

from typing import Any

BASES = ("baseline_gc", "baseline")


def cpu_per_action(r: dict[str, Any]) -> float | None:
    """Milliseconds of the servers' CPU per accepted action."""
    if not r.get("accepted_per_s") or not r.get("server_cpu_pct"):
        return None
    return float(sum(r["server_cpu_pct"]) * 10 / r["accepted_per_s"])


def writes_per_action(r: dict[str, Any]) -> float | None:
    """The servers' write system calls per accepted action (perf), if counted."""
    writes, accepted = r.get("server_writes"), r.get("accepted_per_s")
    if writes is None or not accepted or not r.get("duration_s"):
        return None
    return float(writes / (accepted * r["duration_s"]))


def base_for(results: list[dict[str, Any]], r: dict[str, Any]) -> dict[str, Any] | None:
    """The baseline run of ``r``'s pace and players (``baseline_gc`` first)."""
    for kind in BASES:
        for x in results:
            same = x.get("pace") == r.get("pace") and x.get("players") == r.get("players")
            if x.get("target") == kind and same and "failed" not in x:
                return x
    return None


def show(result: dict[str, Any]) -> None:
    keys = [
        "target", "pace", "players", "joined", "accepted_per_s", "deliveries_per_s",
        "ack_p50_ms", "ack_p95_ms", "ack_p99_ms", "rival_p50_ms", "rival_p99_ms",
        "stale_p50_ms", "stale_p99_ms", "stale_max_ms", "rival_told_per_action",
        "unchanged_deliveries", "order_only_deliveries", "server_writes", "server_reads",
        "server_cpu_pct", "server_sys_pct", "redis_cpu_pct", "loadgen_cpu_pct", "others_pct", "loadavg", "server_rss_kb",
        "kb_per_idle_player", "rss_start_kb", "rss_idle_kb", "errors", "disconnects",
        "close_codes", "retries", "lost_events", "disordered_events", "missing_at_end",
        "db_bytes", "sqlite_appends_per_transaction", "sqlite_largest_transaction",
    ]  # fmt: skip
    print("  " + ", ".join(f"{k}={result[k]}" for k in keys if k in result), flush=True)


def report(results: list[dict[str, Any]]) -> None:
    """One line per run, with its ratios to the baseline of the same run."""
    for pace in ("human", "flat", "idle"):
        rows = [r for r in results if r.get("pace") == pace]
        if not rows:
            continue
        print(f"\n{pace}")
        for r in rows:
            if "failed" in r:
                print(f"  {r['target']}: failed {r['failed']}")
                continue
            if pace == "idle":
                print(
                    f"  {r['target']:9} joined={r.get('joined')} KB/player={r.get('kb_per_idle_player')}"
                    f" rss {r.get('rss_start_kb')} -> {r.get('rss_idle_kb')}"
                )
                continue
            line = (
                f"  {r['target']:9} {r['players']:5} acc/s={r['accepted_per_s']} ack p50/p95/p99="
                f"{r['ack_p50_ms']}/{r['ack_p95_ms']}/{r['ack_p99_ms']} rival p50/p99="
                f"{r['rival_p50_ms']}/{r['rival_p99_ms']} stale p50/p99/max="
                f"{r.get('stale_p50_ms')}/{r.get('stale_p99_ms')}/{r.get('stale_max_ms')}"
                f" told/action={r.get('rival_told_per_action')}"
                f" cpu={r['server_cpu_pct']} sys={r.get('server_sys_pct')}"
                f" redis={r.get('redis_cpu_pct')} load={r['loadgen_cpu_pct']}"
                f" others={r.get('others_pct')} loadavg={r.get('loadavg')}"
                f" errors={sum(r['errors'].values())} disc={r['disconnects']}"
                f" lost={r['lost_events']}+{r['missing_at_end']}"
                f" retries={sum(r.get('retries', {}).values())}"
            )
            if r.get("sqlite_transactions"):
                line += (
                    f" appends/txn={r['sqlite_appends_per_transaction']}"
                    f" (largest {r['sqlite_largest_transaction']}) db={r.get('db_bytes')}"
                )
            cost = cpu_per_action(r)
            if cost is not None:
                line += f" cpu_ms/action={cost:.3f}"
            writes = writes_per_action(r)
            if writes is not None:
                line += f" writes/action={writes:.2f}"
            b = base_for(results, r)
            if b and r is not b and b.get("accepted_per_s"):
                line += f" | x {b['target']}: acc/s {r['accepted_per_s'] / b['accepted_per_s']:.2f}"
                if b.get("ack_p99_ms") and r.get("ack_p99_ms"):
                    line += f", ack p99 {r['ack_p99_ms'] / b['ack_p99_ms']:.1f}"
                base_cost = cpu_per_action(b)
                if cost is not None and base_cost:
                    line += f", cpu/action {cost / base_cost:.2f}"
            print(line)


def markdown(data: list[dict[str, Any]]) -> None:
    """The tables of docs/performance.md, from a suite's results."""

    def f(v: Any, nd: int = 1) -> str:
        if v is None:
            return "-"
        return f"{v:.{nd}f}" if isinstance(v, float) else str(v)

    for pace in ("human", "flat"):
        rows = [r for r in data if r.get("pace") == pace]
        if not rows:
            continue
        print(f"\n#### {pace}\n")
        print(
            "| config | players | accepted actions/s | x base | ack p50 / p99 ms"
            " | staleness p50 / p99 / max ms | rival told per action | server CPU % of a core"
            " | CPU ms per action | x base | writes per action | redis CPU %"
            " | others on core 0 / 1 % | load avg | errors | lost events |"
        )
        print("|---" * 16 + "|")
        for r in rows:
            if "failed" in r:
                print(f"| {r['target']} | {r['players']} | failed: {r['failed']} |")
                continue
            b = base_for(data, r)
            ratio = cpu_ratio = "-"
            cost = cpu_per_action(r)
            if b and b is not r and b.get("accepted_per_s"):
                ratio = f"{r['accepted_per_s'] / b['accepted_per_s']:.2f}"
                base_cost = cpu_per_action(b)
                if cost is not None and base_cost:
                    cpu_ratio = f"{cost / base_cost:.2f}"
            lost = r["lost_events"] + r["missing_at_end"] + r["disordered_events"]
            others = " / ".join(f(x) for x in r.get("others_pct", []))
            print(
                f"| {r['target']} | {r['players']} | {f(r['accepted_per_s'], 0)} | {ratio}"
                f" | {f(r['ack_p50_ms'])} / {f(r['ack_p99_ms'])}"
                f" | {f(r.get('stale_p50_ms'))} / {f(r.get('stale_p99_ms'))}"
                f" / {f(r.get('stale_max_ms'))} | {f(r.get('rival_told_per_action'), 2)}"
                f" | {' + '.join(f(c) for c in r['server_cpu_pct'])} | {f(cost, 3)} | {cpu_ratio}"
                f" | {f(writes_per_action(r), 2)} | {f(r.get('redis_cpu_pct'))}"
                f" | {others} | {r.get('loadavg', '-')} | {sum(r['errors'].values())} | {lost} |"
            )
    rows = [r for r in data if r.get("pace") == "idle"]
    if rows:
        print("\n#### idle (joined players in the lobby)\n")
        print(
            "| config | joined | server RSS at start MB | with the players MB | KB per idle player"
            " | redis RSS before / after MB |"
        )
        print("|---" * 6 + "|")
        for r in rows:
            if "failed" in r:
                print(f"| {r['target']} | failed |")
                continue
            rr = r.get("redis_rss_kb")
            redis = f"{f(rr[0] / 1024)} / {f(rr[1] / 1024)}" if rr else "-"
            print(
                f"| {r['target']} | {r['joined']}"
                f" | {' + '.join(f(x / 1024) for x in r['rss_start_kb'])}"
                f" | {' + '.join(f(x / 1024) for x in r['rss_idle_kb'])}"
                f" | {r['kb_per_idle_player']} | {redis} |"
            )
