#!/usr/bin/env python3
"""Background-agent figures for contrib/bench/scale.sh, against a gallery already being served (nginx on a static
export): idle CPU per minute between polls, CPU of a poll whose feed did not change (a 304), was sent again with
the same items (a new ETag) and changed (one item's checksum differs), CPU of a full pass on SIGHUP (feed
unchanged and changed), resident memory (VmRSS, and the peak VmHWM) idle after the first pass and after each
polling run, and repair latency (delete one of the agent's files, time until it is back byte-identical): idle,
while full passes run, and while the agent's own first (cold) sync of the export runs.

CPU comes from /proc/PID/stat (utime + stime, in clock ticks), so figures are in milliseconds of CPU with a
resolution of one tick (10 ms); per-poll figures are averaged over several polls to get below that. Idle CPU
and the CPU of a full pass on SIGHUP come from the threads' schedstat (nanoseconds): a tick is more than the
whole minute's budget, and a small gallery's pass is a few ticks. A repair is
timed from the unlink to the first inotify event on DIR for its name (created, renamed in, or written and
closed) after which the file reads back byte-identical: the resolution is this script's wake-up, well under a
millisecond on an idle core.

Usage: scale-agent.py --agent BIN --server URL --feed FILE --export DIR [--runs 5] [--deletes 50] [--label small]
                      [--cold-after 2000]
Prints one line per figure: label, median, min-max over the runs, and the target of issue 22 where it sets one.
"""
import argparse, ctypes, datetime, os, random, select, signal, statistics, struct, subprocess, sys, tempfile, threading, time, shutil

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


def quiet_since(pid, window, ticks, limit):
    """Waits until `window` seconds pass with less than `ticks` clock ticks of CPU (at most `limit` seconds);
    returns the threads' CPU (`thread_cpu_ns`) and the monotonic time at the start of that quiet window: where
    the work before it ended."""
    deadline = time.monotonic() + limit
    while True:
        threads, before, at = thread_cpu_ns(pid), cpu_ms(pid), time.monotonic()
        time.sleep(window)
        if cpu_ms(pid) - before < ticks * TICK_MS or time.monotonic() >= deadline:
            return threads, at


def log_time(line):
    """The wall-clock time (seconds since 1970) of a log line's `ts=2026-11-22T03:04:05.123Z`, or None."""
    at = line.find(b"ts=")
    if at < 0:
        return None
    stamp = line[at + 3:at + 27].decode("ascii", "replace")
    try:
        return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        return None


def log_field(line, key):
    """The unquoted logfmt value of `key` in a log line (file names and keys are never quoted), or None."""
    at = line.find(b" " + key + b"=")
    if at < 0:
        return None
    start = at + len(key) + 2
    end = line.find(b" ", start)
    return line[start:end if end >= 0 else len(line)].decode("utf-8", "replace")


def repair_stages(repairs, tail):
    """Splits each repair's time at the agent's log lines: unlink to its `event=repair` line (the watcher, the
    rename gate, the check), that line to its `hit=network` line (fetch, flush, rename, index, DIR's fsync), and
    that line to the bench seeing the file (the log line is written just before the committed file is looked
    at by the bench's inotify wait). Log times have millisecond resolution."""
    stages = ([], [], [])
    for unlinked, ms, name in repairs:
        decided = next((t for t in tail.repaired.get(name, []) if t is not None and t >= unlinked - 0.001), None)
        if decided is None:
            continue
        fetched = next((t for t in tail.fetched_after_repair.get(name, []) if t is not None and t >= decided), None)
        if fetched is None:
            continue
        back = unlinked + ms / 1000
        stages[0].append((decided - unlinked) * 1000)
        stages[1].append((fetched - decided) * 1000)
        stages[2].append((back - fetched) * 1000)
    return stages


class LogTail:
    """The agent's log read as it grows, never again from its start (a pass at 100,000 assets writes about 16 MB),
    following the file across rotation: the poll lines (a poll's end), the first one's time (the end of the
    agent's first pass: its cold sync on an empty DIR) and the SIGHUP lines (full passes asked for)."""

    def __init__(self, path):
        self.path, self.file, self.partial = path, None, b""
        # update() is called from the SIGHUP sender's thread too (below), so that the tail keeps up with a log
        # that rotates at every pass or two: a file rotated twice between two reads is never read.
        self.lock = threading.Lock()
        self.polls, self.sighups, self.first_poll_at = 0, 0, None
        # Per file name: the times of its repair lines (`event=repair`) and of the network hits that followed one
        # (`hit=network`): where a repair's time went (`repair_stages`).
        self.repaired, self.fetched_after_repair = {}, {}
        # The names of every network hit, in order: files the agent wrote, which the cold sync's repairs pick from
        # without listing DIR (a listing by another program holds the agent's renames back; see cold_sync_repairs).
        self.fetched = []

    def update(self):
        with self.lock:
            return self._update()

    def _update(self):
        while True:
            if self.file is None:
                try:
                    self.file = open(self.path, "rb")
                except OSError:
                    return self
            chunk = self.file.read(1 << 20)
            if chunk:
                self._count(chunk)
                continue
            try:
                rotated = os.stat(self.path).st_ino != os.fstat(self.file.fileno()).st_ino
            except OSError:
                rotated = False  # renamed away, the new file not made yet: read it next time
            if not rotated:
                return self
            self._count(self.file.read())  # what was written to it between the read above and the rename
            self.file.close()
            self.file, self.partial = None, b""

    def _count(self, chunk):
        lines = (self.partial + chunk).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            if b"event=poll" in line and b"result=" in line:
                self.polls += 1
                if self.first_poll_at is None:
                    self.first_poll_at = log_time(line) or time.time()
            elif b"event=signal" in line and b"SIGHUP" in line:
                self.sighups += 1
            elif b"event=repair" in line:
                name = log_field(line, b"file")
                if name:
                    self.repaired.setdefault(name, []).append(log_time(line))
            elif b"hit=network" in line:
                name = log_field(line, b"file")
                if name:
                    self.fetched.append(name)
                if name in self.repaired:
                    self.fetched_after_repair.setdefault(name, []).append(log_time(line))


IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE, IN_Q_OVERFLOW = 0x8, 0x80, 0x100, 0x4000


class DirectoryEvents:
    """An inotify watch on the mirror (Python's ctypes, no inotify-tools needed): wakes a repair's wait when a
    name appears in DIR (created, renamed in, written and closed). A wait also looks every `fallback` seconds
    without an event and counts what it finds then (`late`): a repair seen that way is timed up to `fallback` late."""

    def __init__(self, directory, fallback=0.05):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, os.fsencode(directory),
                                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0:
            raise SystemExit(f"inotify on {directory}: {os.strerror(ctypes.get_errno())}")
        self.fallback, self.late = fallback, 0

    def names(self):
        """The names of the events queued now (None among them: the queue overflowed, any name may have come)."""
        names = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return names
            at = 0
            while at < len(data):
                _, mask, _, size = struct.unpack_from("iIII", data, at)
                names.add(None if mask & IN_Q_OVERFLOW else data[at + 16:at + 16 + size].rstrip(b"\0").decode())
                at += 16 + size

    def wait(self, name, done, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], self.fallback)
            if ready:
                seen = self.names()
                if (name in seen or None in seen) and done():
                    return True
            elif done():
                self.late += 1
                return True
        return done()

    def close(self):
        os.close(self.fd)


def repair_latencies(directory, pick, count, going_on=lambda: True):
    """Deletes `count` files of the mirror one at a time, each named by `pick()`, while `going_on()`; for each,
    the wall-clock time of its unlink and the ms until it was back byte-identical."""
    repairs = []
    events = DirectoryEvents(directory)
    try:
        while len(repairs) < count and going_on():
            name = pick()
            if name is None:
                break
            path = os.path.join(directory, name)
            expected = open(path, "rb").read()
            def back():
                try:
                    with open(path, "rb") as f:
                        return f.read() == expected
                except OSError:
                    return False
            events.names()  # what came before the unlink is not this repair
            unlinked, start = time.time(), time.monotonic()
            os.unlink(path)
            if not events.wait(name, back, 30):
                raise SystemExit(f"{path} did not come back within 30 s")
            repairs.append((unlinked, (time.monotonic() - start) * 1000, name))
            time.sleep(0.01)
    finally:
        events.close()
        if events.late:
            print(f"  ({events.late} repairs seen without an inotify event: timed up to {events.fallback * 1000:.0f} ms late)")
    return repairs


def print_stages(repairs, tail):
    """Prints where the repairs' time went (`repair_stages`), from the agent's log as it is now."""
    tail.update()
    for label, values in zip(("unlink to the repair line", "repair line to the network hit line",
                              "network hit line to the file seen"), repair_stages(repairs, tail)):
        if values:
            s = sorted(values)
            pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]
            print(f"  {label:<40} p50={pick(0.5):.1f} ms p99={pick(0.99):.1f} ms max={s[-1]:.1f} ms (n={len(s)})",
                  flush=True)


def print_repairs(label, repairs, extra="", target=""):
    latencies = [ms for _, ms, _ in repairs]
    if not latencies:
        print(f"{label:<58} (not measured){extra}", flush=True)
        return
    s = sorted(latencies)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]
    print(f"{label:<58} p50={pick(0.5):.2f} ms p99={pick(0.99):.2f} ms max={s[-1]:.2f} ms (n={len(s)})"
          f"{'   target ' + target if target else ''}{extra}", flush=True)


def fmt(label, values, unit, target=""):
    if not values:
        return f"{label:<58} (not measured)"
    return (f"{label:<58} {statistics.median(values):10.2f} {unit:<6} ({min(values):.2f}-{max(values):.2f}, n={len(values)})"
            f"{'   target ' + target if target else ''}")


class Agent:
    def __init__(self, binary, server, interval, work, log_level="info", reuse=None):
        self.dir = reuse or tempfile.mkdtemp(prefix="agent-", dir=work)
        self.log = os.path.join(self.dir, ".emojiart-sync", "sync.log")
        if reuse and os.path.exists(self.log):
            os.unlink(self.log)  # its lines are counted: only this run's
        self.proc = subprocess.Popen([binary, "--dir", self.dir, "--server", server, "--interval", str(interval), "-q",
                                      "--log-level", log_level],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.tail = LogTail(self.log)

    def polls(self):
        """Polls ended so far (`event=poll result=...` lines)."""
        return self.tail.update().polls

    def sighups(self):
        """Full passes asked for so far: SIGHUP lines the agent logged (each asks for one; requests coalesce)."""
        return self.tail.update().sighups

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class FeedVersions:
    """Two copies of the exported feed, the second with the first item's checksum changed, swapped in as hard links
    renamed over the feed (atomic, nothing copied): a poll or a SIGHUP that finds the other copy in place sees a
    real change. Removed by `close()`, the export's feed left as it was."""

    def __init__(self, feed):
        self.feed = feed
        self.paths = [feed + ".bench-a", feed + ".bench-b"]
        with open(feed, "rb") as f:
            original = f.read()
        at = original.index(b'"checksum":"') + len(b'"checksum":"')
        edited = original[:at] + (b"0" if original[at:at + 1] != b"0" else b"1") + original[at + 1:]
        now = time.time()
        for offset, (path, body) in enumerate(zip(self.paths, (original, edited))):
            with open(path, "wb") as f:
                f.write(body)
            # nginx's ETag and Last-Modified are the mtime in seconds and the size, the same for both copies
            # written in one second: their mtimes are set apart, or a swap would be answered 304.
            os.utime(path, (now - 10 * offset, now - 10 * offset))

    def swap(self, turn):
        """Puts copy `turn % 2` in place (0: the export's own feed)."""
        if os.path.samefile(self.paths[turn % 2], self.feed):
            return  # rename(2) of a link onto another link of the same file does nothing
        link = self.feed + ".bench-link"
        if os.path.exists(link):
            os.unlink(link)
        os.link(self.paths[turn % 2], link)
        os.replace(link, self.feed)

    def close(self):
        self.swap(0)
        for path in self.paths:
            os.unlink(path)


def full_pass_cpu_ms(agent, idle_per_s):
    """CPU (ms) of the full pass one SIGHUP asks for: from the signal until the agent is quiet again after the
    pass's poll line (its rescan and the end of the pass included), less the idle rate over that time; from the
    threads' schedstat (ns: a small gallery's pass is a few clock ticks), a thread that ends meanwhile lost."""
    pid, polls = agent.proc.pid, agent.polls()
    threads, start = thread_cpu_ns(pid), time.monotonic()
    os.kill(pid, signal.SIGHUP)
    if not wait_until(lambda: agent.polls() > polls, 1800, 0.02):
        raise SystemExit("the full pass asked for by SIGHUP did not end within 30 min")
    quiet_threads, quiet_at = quiet_since(pid, 0.5, 1, 60)
    return max(0.0, cpu_ms_between(threads, quiet_threads) - idle_per_s * (quiet_at - start))


def cold_sync_repairs(a, work):
    """Repairs while the agent's own first (cold) sync runs: an agent on an empty DIR, polls an hour apart; once
    `--cold-after` files are in DIR (at most a fifth of the export's images, so a small export has some left),
    deletes files it already wrote, one at a time, until the sync ends. A deletion made after the end of the
    sync (its first poll line) does not count.

    The script never lists DIR: a person deleting a file names it, and another program's listing of DIR holds the
    agent's renames back (as `rm -rf DIR` lists before it deletes; docs/RELIABILITY.md), which would time the
    script's own listing instead of the repair. Files are counted and picked from the agent's network hits."""
    images = sum(1 for n in os.listdir(os.path.join(a.export, "gallery", "image")) if n.endswith(".png"))
    threshold = max(1, min(a.cold_after, images // 5))
    started = time.time()
    agent = Agent(a.agent, a.server, 3600, work)
    try:
        fetched = lambda: agent.tail.update().fetched
        if not wait_until(lambda: len(fetched()) >= threshold or agent.polls() >= 1, 1800, 0.01):
            raise SystemExit(f"the agent's cold sync did not write {threshold} files within 30 min")
        rng = random.Random(42)
        def pick():
            names = fetched()
            for _ in range(1000):  # a hit's line may come just before its file is in place; a repair's may be out
                name = rng.choice(names)
                if os.path.exists(os.path.join(agent.dir, name)):
                    return name
            return None
        repairs = repair_latencies(agent.dir, pick, a.deletes,
                                   going_on=lambda: agent.tail.update().first_poll_at is None)
        if not wait_until(lambda: agent.polls() >= 1, 1800, 0.1):
            raise SystemExit("the agent's cold sync did not end within 30 min")
        ended = agent.tail.first_poll_at
        during = [(unlinked, ms, name) for unlinked, ms, name in repairs if unlinked < ended]
        back = sum(1 for unlinked, ms, _ in during if unlinked + ms / 1000 <= ended)
        print_repairs(a.label + " agent repair latency, its own cold sync running", during,
                      f"; deletions from file {threshold} on: {len(during)} of {len(repairs)} made before the "
                      f"sync ended, {back} back before it ended; cold sync {ended - started:.1f} s",
                      target="p99 ≤ 60 ms")
        print_stages(during, agent.tail)
    finally:
        agent.stop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agent", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--feed", required=True, help="the exported feed file (two copies of it make the feed change)")
    p.add_argument("--export", required=True, help="the export directory")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--deletes", type=int, default=50)
    p.add_argument("--cold-after", type=int, default=2000,
                   help="files the cold sync writes before the first deletion (at most a fifth of the export's images)")
    p.add_argument("--window", type=float, default=10.0, help="seconds per idle and per poll measurement")
    p.add_argument("--idle-window", type=float, default=None,
                   help="seconds per idle measurement (default: --window; 60 resolves 10 ms/min)")
    p.add_argument("--work", default=None, help="where the mirrors go (default: the system's temporary directory)")
    p.add_argument("--reuse", default=None,
                   help="a directory the agent already mirrors this gallery into: the agents start warm from it")
    p.add_argument("--only", default="idle,sighup,repair,poll,cold",
                   help="comma-separated phases to run: idle (CPU and RSS), sighup (a full pass's CPU), repair, "
                        "poll, cold (repairs during the agent's own cold sync)")
    p.add_argument("--label", default="")
    a = p.parse_args()
    phases = set(a.only.split(","))
    work = tempfile.mkdtemp(prefix="emojiart-scale-agent-", dir=a.work)
    versions = FeedVersions(a.feed) if phases & {"sighup", "poll"} else None
    try:
        # 1. Idle CPU: one agent, polls an hour apart; after its first sync nothing should wake it.
        agent = Agent(a.agent, a.server, 3600, work, reuse=a.reuse)
        if not wait_until(lambda: agent.polls() >= 1, 1800, 0.1):
            raise SystemExit("the agent did not finish its first poll within 30 min")
        # The end of the first pass (index checkpoint, status) may still be running: idle starts when two
        # seconds pass with less than two clock ticks of CPU (at most two minutes of waiting).
        quiet_since(agent.proc.pid, 2, 2, 120)
        idle = []
        idle_window = a.idle_window or a.window
        for _ in range(a.runs if "idle" in phases else 0):
            before = thread_cpu_ns(agent.proc.pid)
            time.sleep(idle_window)
            idle.append(cpu_ms_between(before, thread_cpu_ns(agent.proc.pid)) * 60.0 / idle_window)
        if "idle" in phases:
            print(fmt(f"{a.label} agent idle CPU (ms per minute, {idle_window:.0f} s windows)", idle, "ms"), flush=True)
            print(f"{a.label + ' agent RSS, idle after the first pass':<58} {memory_kib(agent.proc.pid, 'VmRSS') / 1024:10.1f} MiB   "
                  f"(peak so far {memory_kib(agent.proc.pid, 'VmHWM') / 1024:.1f} MiB)   target ≤ 60 MiB", flush=True)
        idle_per_s = statistics.median(idle) / 60.0 if idle else 0.0

        # 2. A full pass on SIGHUP, on the same agent: the feed as the agent has it, then the other copy in place.
        if "sighup" in phases:
            unchanged, changed = [], []
            for turn in range(1, a.runs + 1):
                unchanged.append(full_pass_cpu_ms(agent, idle_per_s))
                versions.swap(turn)
                changed.append(full_pass_cpu_ms(agent, idle_per_s))
            versions.swap(0)
            full_pass_cpu_ms(agent, idle_per_s)  # not counted: the agent back in line with the export's feed
            print(fmt(f"{a.label} agent CPU of a full pass on SIGHUP, feed unchanged", unchanged, "ms", "≤ 500 ms"),
                  flush=True)
            print(fmt(f"{a.label} agent CPU of a full pass on SIGHUP, feed changed", changed, "ms", "≤ 500 ms"),
                  flush=True)

        # 3. Repair latency on the same agent: idle, then while full passes run (SIGHUP every 0.5 s).
        if "repair" in phases:
            names = sorted(n for n in os.listdir(agent.dir) if n.endswith(".png"))
            rng = random.Random(42)
            pick = lambda: rng.choice(names) if names else None
            lone = repair_latencies(agent.dir, pick, a.deletes)
            print_repairs(a.label + " agent repair latency, a lone deletion (idle)", lone, target="p99 ≤ 10 ms")
            print_stages(lone, agent.tail)
            stop_hup = threading.Event()
            def hup():
                while not stop_hup.wait(0.5):
                    os.kill(agent.proc.pid, signal.SIGHUP)
                    agent.tail.update()  # each pass writes a line per asset: read before the log rotates twice
            sender = threading.Thread(target=hup, daemon=True)
            passes0 = agent.sighups()
            sender.start()
            try:
                wait_until(lambda: agent.sighups() > passes0, 600, 0.05)  # a full pass has begun to run
                busy = repair_latencies(agent.dir, pick, max(30, a.deletes))
            finally:
                stop_hup.set()
                sender.join()
            print_repairs(a.label + " agent repair latency, full passes running (SIGHUP/0.5 s)", busy,
                          f"; {agent.sighups() - passes0} passes asked for meanwhile", target="p99 ≤ 60 ms")
            print_stages(busy, agent.tail)
        agent.stop()
        mirror = agent.dir  # the polling agents below start from it, warm, rather than fetching everything again

        # 4. Poll CPU: an agent polling every second; CPU over a window minus the idle rate, per poll seen.
        rss = {}

        def poll_cpu(change_feed):
            # At debug level: an unchanged (304) poll logs its line only there, and the polls are counted by it.
            agent = Agent(a.agent, a.server, 1, work, "debug", reuse=mirror)
            try:
                if not wait_until(lambda: agent.polls() >= 2, 1800, 0.1):
                    raise SystemExit("the polling agent did not finish two polls")
                values = []
                turn, seen = 0, agent.polls()
                for _ in range(a.runs):
                    polls0, cpu0, t0 = agent.polls(), cpu_ms(agent.proc.pid), time.monotonic()
                    while time.monotonic() - t0 < a.window:
                        if change_feed == "touch":
                            os.utime(a.feed)  # new mtime: nginx sends a new ETag and Last-Modified
                        elif change_feed == "edit" and agent.polls() > seen:
                            seen, turn = agent.polls(), turn + 1
                            versions.swap(turn)  # the poll that follows sees one checksum changed
                        time.sleep(0.2)
                    polls = agent.polls() - polls0
                    spent = cpu_ms(agent.proc.pid) - cpu0 - idle_per_s * (time.monotonic() - t0)
                    if polls > 0:
                        values.append(max(0.0, spent) / polls)
                rss[change_feed] = (memory_kib(agent.proc.pid, "VmRSS"), memory_kib(agent.proc.pid, "VmHWM"))
                return values
            finally:
                agent.stop()
                versions.swap(0)
        if "poll" in phases:
            print(fmt(f"{a.label} agent CPU per poll, feed unchanged (304 if conditional)", poll_cpu("none"), "ms"),
                  flush=True)
            print(fmt(f"{a.label} agent CPU per poll, feed re-sent (new ETag, same items)", poll_cpu("touch"), "ms"),
                  flush=True)
            print(fmt(f"{a.label} agent CPU per poll, feed changed (one checksum differs)", poll_cpu("edit"), "ms"),
                  flush=True)
        for changed, what in (("none", "unchanged"), ("touch", "re-sent"), ("edit", "changed")):
            if changed in rss:
                now, peak = rss[changed]
                print(f"{a.label + ' agent RSS after polling every second, feed ' + what:<58} {now / 1024:10.1f} MiB   "
                      f"(peak {peak / 1024:.1f} MiB)", flush=True)

        # 5. Repairs while the agent's own cold sync runs: a fresh agent on an empty DIR.
        if "cold" in phases:
            cold_sync_repairs(a, work)
    finally:
        if versions:
            versions.close()
        shutil.rmtree(work, ignore_errors=True)  # a --reuse directory is the caller's and stays


if __name__ == "__main__":
    main()
