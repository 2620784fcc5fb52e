#!/usr/bin/env python3
"""Background-agent figures for contrib/bench/scale.sh, against a gallery already being served (nginx on a static
export): idle CPU per minute between polls, CPU of a poll whose feed did not change (a 304), was sent again with
the same items (a new ETag) and changed (one item's checksum differs), resident memory (VmRSS, and the peak VmHWM) idle after the first pass and after each polling run, and
repair latency (delete one of the agent's files, time until it is back byte-identical).

CPU comes from /proc/PID/stat (utime + stime, in clock ticks), so figures are in milliseconds of CPU with a
resolution of one tick (10 ms); per-poll figures are averaged over several polls to get below that. Idle CPU
comes from the threads' schedstat (nanoseconds): a tick is more than the whole minute's budget.

Usage: scale-agent.py --agent BIN --server URL --feed FILE --export DIR [--runs 5] [--deletes 50] [--label small]
Prints one line per figure: label, median, min-max over the runs.
"""
import argparse, os, random, re, signal, statistics, subprocess, sys, tempfile, threading, time, shutil

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_MS  # utime, stime (fields 14 and 15 of stat(5))


def thread_cpu_ns(pid):
    """CPU of each live thread of PID in ns, from /proc/PID/task/*/schedstat (not clock ticks: an idle agent
    spends a few ms a minute, below what 10 ms ticks resolve)."""
    times = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                times[task] = int(f.read().split()[0])
        except OSError:
            pass
    return times


def cpu_ms_between(before, after):
    """CPU spent between two `thread_cpu_ns` readings: threads that ended meanwhile count up to `before`, not at
    all after it (their last moments are lost), and a thread that started meanwhile counts whole."""
    return sum(ns - before.get(task, 0) for task, ns in after.items()) / 1e6


def memory_kib(pid, field):
    """VmRSS (resident now) or VmHWM (the peak) of PID, in KiB, from /proc/PID/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def wait_until(predicate, timeout, step=0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def poll_lines(log):
    try:
        with open(log) as f:
            return sum(1 for line in f if "event=poll" in line and "result=" in line)
    except OSError:
        return 0


def full_passes(log):
    """Full passes begun: SIGHUP lines the agent logged (each asks for one; requests coalesce)."""
    try:
        with open(log, errors="replace") as f:
            return sum(1 for line in f if "event=signal" in line and "SIGHUP" in line)
    except OSError:
        return 0


def repair_latencies(agent, names, rng, count):
    """Deletes `count` random files of the mirror one at a time; ms until each is back byte-identical."""
    latencies = []
    for _ in range(min(count, len(names)) if names else 0):
        name = rng.choice(names)
        path = os.path.join(agent.dir, name)
        expected = open(path, "rb").read()
        start = time.monotonic()
        os.unlink(path)
        def back():
            try:
                with open(path, "rb") as f:
                    return f.read() == expected
            except OSError:
                return False
        if not wait_until(back, 30, 0.0005):
            raise SystemExit(f"{path} did not come back within 30 s")
        latencies.append((time.monotonic() - start) * 1000)
        time.sleep(0.01)
    return latencies


def print_repairs(label, latencies, extra=""):
    if not latencies:
        return
    s = sorted(latencies)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]
    print(f"{label:<58} p50={pick(0.5):.2f} ms p99={pick(0.99):.2f} ms max={s[-1]:.2f} ms (n={len(s)}){extra}", flush=True)


def fmt(label, values, unit):
    if not values:
        return f"{label:<58} (not measured)"
    return f"{label:<58} {statistics.median(values):10.2f} {unit:<6} ({min(values):.2f}-{max(values):.2f}, n={len(values)})"


class Agent:
    def __init__(self, binary, server, interval, work, log_level="info", reuse=None):
        self.dir = reuse or tempfile.mkdtemp(prefix="agent-", dir=work)
        self.log = os.path.join(self.dir, ".emojiart-sync", "sync.log")
        if reuse and os.path.exists(self.log):
            os.unlink(self.log)  # its lines are counted: only this run's
        self.proc = subprocess.Popen([binary, "--dir", self.dir, "--server", server, "--interval", str(interval), "-q",
                                      "--log-level", log_level],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agent", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--feed", required=True, help="the exported feed file (touched to make the feed change)")
    p.add_argument("--export", required=True, help="the export directory (reference bytes for repairs)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--deletes", type=int, default=50)
    p.add_argument("--window", type=float, default=10.0, help="seconds per idle and per poll measurement")
    p.add_argument("--idle-window", type=float, default=None,
                   help="seconds per idle measurement (default: --window; 60 resolves 10 ms/min)")
    p.add_argument("--work", default=None, help="where the mirrors go (default: the system's temporary directory)")
    p.add_argument("--reuse", default=None,
                   help="a directory the agent already mirrors this gallery into: the agents start warm from it")
    p.add_argument("--only", default="idle,repair,poll",
                   help="comma-separated phases to run: idle (CPU and RSS), repair, poll")
    p.add_argument("--label", default="")
    a = p.parse_args()
    phases = set(a.only.split(","))
    work = tempfile.mkdtemp(prefix="emojiart-scale-agent-", dir=a.work)
    images = os.path.join(a.export, "gallery", "image")
    try:
        # 1. Idle CPU: one agent, polls an hour apart; after its first sync nothing should wake it.
        agent = Agent(a.agent, a.server, 3600, work, reuse=a.reuse)
        if not wait_until(lambda: poll_lines(agent.log) >= 1, 1800, 0.1):
            raise SystemExit("the agent did not finish its first poll within 30 min")
        # The end of the first pass (index checkpoint, status) may still be running: idle starts when two
        # seconds pass with less than two clock ticks of CPU (at most two minutes of waiting).
        settle_deadline = time.monotonic() + 120
        while time.monotonic() < settle_deadline:
            before = cpu_ms(agent.proc.pid)
            time.sleep(2)
            if cpu_ms(agent.proc.pid) - before < 2 * TICK_MS:
                break
        idle = []
        idle_window = a.idle_window or a.window
        for _ in range(a.runs if "idle" in phases else 0):
            before = thread_cpu_ns(agent.proc.pid)
            time.sleep(idle_window)
            idle.append(cpu_ms_between(before, thread_cpu_ns(agent.proc.pid)) * 60.0 / idle_window)
        if "idle" in phases:
            print(fmt(f"{a.label} agent idle CPU (ms per minute, {idle_window:.0f} s windows)", idle, "ms"), flush=True)
            print(f"{a.label + ' agent RSS, idle after the first pass':<58} {memory_kib(agent.proc.pid, 'VmRSS') / 1024:10.1f} MiB   "
                  f"(peak so far {memory_kib(agent.proc.pid, 'VmHWM') / 1024:.1f} MiB)", flush=True)

        # 2. Repair latency on the same agent: idle, then while full passes run (SIGHUP every 0.5 s).
        names = sorted(n for n in os.listdir(agent.dir) if n.endswith(".png"))
        rng = random.Random(42)
        if "repair" not in phases:
            names = []
        print_repairs(a.label + " agent repair latency (idle)", repair_latencies(agent, names, rng, a.deletes))
        stop_hup = threading.Event()
        def hup():
            while not stop_hup.wait(0.5):
                os.kill(agent.proc.pid, signal.SIGHUP)
        sender = threading.Thread(target=hup, daemon=True)
        passes0 = full_passes(agent.log)
        if names:
            sender.start()
        try:
            if names:
                wait_until(lambda: full_passes(agent.log) > passes0, 600, 0.05)  # a full pass has begun to run
            busy = repair_latencies(agent, names, rng, max(30, a.deletes))
        finally:
            stop_hup.set()
            if names:
                sender.join()
        print_repairs(a.label + " agent repair latency, full passes running (SIGHUP/0.5 s)", busy,
                      f"; {full_passes(agent.log) - passes0} passes done meanwhile")
        agent.stop()
        mirror = agent.dir  # the polling agents below start from it, warm, rather than fetching everything again

        # 3. Poll CPU: an agent polling every second; CPU over a window minus the idle rate, per poll seen.
        idle_per_s = statistics.median(idle) / 60.0 if idle else 0.0
        rss = {}
        # A real change for "edit" polls: the first item's checksum differs in a second copy of the feed, and each
        # poll finds the other copy in place (hard links renamed over the feed: atomic, nothing copied).
        versions = [a.feed + ".bench-a", a.feed + ".bench-b"]

        def write_versions():
            with open(a.feed, "rb") as f:
                original = f.read()
            at = original.index(b'"checksum":"') + len(b'"checksum":"')
            edited = original[:at] + (b"0" if original[at:at + 1] != b"0" else b"1") + original[at + 1:]
            now = time.time()
            for offset, (path, body) in enumerate(zip(versions, (original, edited))):
                with open(path, "wb") as f:
                    f.write(body)
                # nginx's ETag and Last-Modified are the mtime in seconds and the size, the same for both copies
                # written in one second: their mtimes are set apart, or a swap would be answered 304.
                os.utime(path, (now - 10 * offset, now - 10 * offset))

        def swap_feed(turn):
            if os.path.samefile(versions[turn % 2], a.feed):
                return  # rename(2) of a link onto another link of the same file does nothing
            link = a.feed + ".bench-link"
            if os.path.exists(link):
                os.unlink(link)
            os.link(versions[turn % 2], link)
            os.replace(link, a.feed)

        def poll_cpu(change_feed):
            # At debug level: an unchanged (304) poll logs its line only there, and the polls are counted by it.
            agent = Agent(a.agent, a.server, 1, work, "debug", reuse=mirror)
            try:
                if not wait_until(lambda: poll_lines(agent.log) >= 2, 1800, 0.1):
                    raise SystemExit("the polling agent did not finish two polls")
                values = []
                turn, seen = 0, poll_lines(agent.log)
                for _ in range(a.runs):
                    polls0, cpu0, t0 = poll_lines(agent.log), cpu_ms(agent.proc.pid), time.monotonic()
                    while time.monotonic() - t0 < a.window:
                        if change_feed == "touch":
                            os.utime(a.feed)  # new mtime: nginx sends a new ETag and Last-Modified
                        elif change_feed == "edit" and poll_lines(agent.log) > seen:
                            seen, turn = poll_lines(agent.log), turn + 1
                            swap_feed(turn)  # the poll that follows sees one checksum changed
                        time.sleep(0.2)
                    polls = poll_lines(agent.log) - polls0
                    spent = cpu_ms(agent.proc.pid) - cpu0 - idle_per_s * (time.monotonic() - t0)
                    if polls > 0:
                        values.append(max(0.0, spent) / polls)
                rss[change_feed] = (memory_kib(agent.proc.pid, "VmRSS"), memory_kib(agent.proc.pid, "VmHWM"))
                return values
            finally:
                agent.stop()
        if "poll" in phases:
            write_versions()
            try:
                print(fmt(f"{a.label} agent CPU per poll, feed unchanged (304 if conditional)", poll_cpu("none"), "ms"),
                      flush=True)
                print(fmt(f"{a.label} agent CPU per poll, feed re-sent (new ETag, same items)", poll_cpu("touch"), "ms"),
                      flush=True)
                print(fmt(f"{a.label} agent CPU per poll, feed changed (one checksum differs)", poll_cpu("edit"), "ms"),
                      flush=True)
            finally:
                swap_feed(0)  # the export as it was
                for path in versions:
                    os.unlink(path)
        for changed, what in (("none", "unchanged"), ("touch", "re-sent"), ("edit", "changed")):
            if changed in rss:
                now, peak = rss[changed]
                print(f"{a.label + ' agent RSS after polling every second, feed ' + what:<58} {now / 1024:10.1f} MiB   "
                      f"(peak {peak / 1024:.1f} MiB)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # a --reuse directory is the caller's and stays


if __name__ == "__main__":
    main()
