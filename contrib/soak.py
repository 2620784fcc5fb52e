#!/usr/bin/env python3
"""Soak test (opt-in, outside the default test run): minutes of damage on both sides of a running agent.

Mirror side: random deletes, corruptions, truncations, replacements, burst deletes, memory and disk purges,
single SIGHUPs and SIGHUP storms (20 within 200 ms), and, when the script runs as root and may mount a tmpfs,
ENOSPC: DIR sits on a tmpfs sized about 3x the mirror, which is filled to the last byte for a few seconds
(while files are deleted) and then freed; the agent must recover on its own.
Gallery side: fault plans (corrupt, truncated, serverError, endless, slow, latency, feed status, empty feed,
dropped items) and restarts: the gallery is killed (SIGKILL or SIGTERM) and started again on the same port
with a new image generation, so every image's bytes and every feed checksum change.

At the end the faults stop, the agent gets one SIGHUP ("retry everything now"), and:
- the mirror must hold every image of the feed, byte-identical to what the final gallery generation serves
  (compared by SHA-256 with the gallery's own bytes, fetched over HTTP; no file may be lost),
  and nothing else outside DIR/.emojiart-sync. One exception, by design: a purge or a dropped item leaves a
  file it finds changed in place and the path stops being the agent's ("move it away", says its log); such
  paths, when they hold the soak's own damage, are moved away once progress stops and must then come back.
  A path the agent refuses over content the soak never wrote is a FAIL (the files, the agent's logs and its
  index are kept in /tmp/emojiart-soak-*-kept for a post-mortem);
- the agent must be the same process throughout (any exit is a FAIL) and stop with status 0 on SIGTERM;
- sampled every 5 s: open descriptors must end <= first + 2, threads <= first + 2, and RSS must be flat
  (last sample within 25% + 8 MiB of the first half's peak); the first sample is taken after the first sync.

Usage (exit 0 = pass):
  contrib/soak.sh [--minutes 3] [--count 200] [--seed 1] [--restarts 2] [--no-enospc] [--small]
  contrib/soak.sh --count 20000 --minutes 10 --small   # the load run of issue 7
Full-size images take the gallery tens of ms of CPU each to paint on first request, so at 20,000 of them the
first sync and every restart's new generation take minutes on a small machine; --small serves 16x16 ones.
The waits are bounded by progress (no new good file for --stall seconds is a FAIL), not by a fixed deadline.
"""
import argparse, collections, errno, hashlib, http.client, json, os, random, re, shutil, signal, subprocess, sys
import tempfile, threading, time, urllib.parse, urllib.request

SAMPLE_EVERY = 5.0
CONFLICT = re.compile(r'error="(.+?) is a file the agent did not write')


def proc_status(pid):
    """(VmRSS KiB, Threads) of a live process."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def file_digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).digest()
    except FileNotFoundError:
        return None


class Gallery:
    """The gallery process; restarts keep its port. `generation` is part of every plan posted."""

    def __init__(self, binary, count, log, small=False):
        self.binary, self.count, self.log, self.small = binary, count, log, small
        self.proc, self.url, self.port, self.generation = None, None, 0, 0

    def start(self, held=False):
        # A restarted gallery starts held (feed 503, every image 500) until the plan with the new generation
        # is posted: it must never serve the old generation's bytes under its new feed checksums.
        cmd = [self.binary, "--host", "127.0.0.1", "--port", str(self.port), "--count", str(self.count), "--quiet"]
        if self.small:
            cmd.append("--small")
        if held:
            cmd += ["--feed-status", "503", "--server-error", "all"]
        for _ in range(100):  # the port may still be held for a moment after a kill
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
            line = proc.stdout.readline().strip()
            if line:
                self.proc, self.url = proc, line
                self.port = urllib.parse.urlparse(line).port
                if held:
                    self.plan({})
                return
            proc.wait()
            time.sleep(0.2)
        raise SystemExit(f"gallery did not start again on port {self.port}")

    def plan(self, fault):
        post(f"{self.url}/_control/faults", {**fault, "generation": self.generation})

    def stop(self, sig):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)


def reference_digests(url, numbers, workers=2):
    """SHA-256 of every image as the gallery serves it now, over keep-alive connections."""
    parsed = urllib.parse.urlparse(url)
    out, errors = {}, []

    def work(part):
        conn = None
        for n in part:
            for attempt in range(5):
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
                    conn.request("GET", f"/gallery/image?{n}")
                    resp = conn.getresponse()
                    body = resp.read()
                    if resp.status != 200 or not body.startswith(b"\x89PNG"):
                        raise RuntimeError(f"image {n}: status {resp.status}, {len(body)} bytes")
                    out[n] = hashlib.sha256(body).digest()
                    break
                except (OSError, http.client.HTTPException, RuntimeError) as error:
                    conn = None
                    if attempt == 4:
                        errors.append(str(error))
                    time.sleep(0.5)
        if conn:
            conn.close()

    threads = [threading.Thread(target=work, args=(numbers[i::workers],)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"cannot read the gallery's reference bytes: {errors[:3]}")
    return out


def conflicts_in_log(state_dir):
    """Paths the agent's logs (current and rotated) report as files it did not write."""
    found = set()
    for name in ("sync.log.2", "sync.log.1", "sync.log"):
        try:
            with open(os.path.join(state_dir, name), errors="replace") as f:
                for line in f:
                    if "did not write" in line and (match := CONFLICT.search(line)):
                        found.add(match.group(1))
        except FileNotFoundError:
            pass
    return found


def mount_tmpfs(path, size_bytes):
    if os.geteuid() != 0:
        return "not running as root"
    os.makedirs(path)
    mib = (size_bytes + (1 << 20) - 1) >> 20
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0700", "emojiart-soak", path],
                            capture_output=True, text=True)
    if result.returncode != 0:
        os.rmdir(path)
        return f"mount -t tmpfs failed: {result.stderr.strip() or result.returncode}"
    return None


def fill_until_enospc(path):
    """Writes `path` until the file system is full; returns the bytes written."""
    written = 0
    with open(path, "wb", buffering=0) as f:
        for size in (1 << 20, 4096, 1):
            chunk = b"\0" * size
            try:
                while True:
                    written += f.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--gallery", required=True)
    parser.add_argument("--minutes", type=float, default=3)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--restarts", type=int, default=2,
                        help="gallery restarts with a new generation, spread evenly over the run (default 2)")
    parser.add_argument("--no-enospc", action="store_true", help="do not put DIR on a tmpfs, no ENOSPC actions")
    parser.add_argument("--small", action="store_true",
                        help="the gallery serves 16x16 images (emojiart-gallery --small): cheap to paint at 20,000")
    parser.add_argument("--stall", type=float, default=180,
                        help="seconds without a new good file that fail the first sync or the convergence")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="emojiart-soak-")
    fs = os.path.join(work, "fs")
    kept = work.rstrip("/") + "-kept"
    gallery = Gallery(args.gallery, args.count, open(os.path.join(work, "gallery.log"), "w"), small=args.small)
    agent = None
    mounted = False
    ok = False
    numbers = [n for n in range(1, args.count + 1) if n % 10 != 0]
    names = {n: f"gallery_image_{n}.png" for n in numbers}
    try:
        gallery.start()
        url = gallery.url
        enospc_note = "--no-enospc" if args.no_enospc else None
        if not enospc_note:
            sample = rng.sample(numbers, min(10, len(numbers)))
            average = sum(len(urllib.request.urlopen(f"{url}/gallery/image?{n}", timeout=60).read())
                          for n in sample) / max(1, len(sample))
            # A tmpfs gives every file whole 4 KiB pages: a 110-byte small image takes 4 KiB.
            per_file = -(-int(average) // 4096) * 4096
            size = 3 * per_file * len(numbers) + (64 << 20)
            enospc_note = mount_tmpfs(fs, size)
            mounted = enospc_note is None
            if mounted:
                print(f"soak: DIR on a tmpfs of {size >> 20} MiB (3x {len(numbers)} images of ~{int(average)} B in {per_file} B of pages + 64 MiB)")
        if enospc_note:
            print(f"soak: no ENOSPC actions ({enospc_note})")
        mirror = os.path.join(fs if mounted else work, "mirror")
        filler = os.path.join(fs, "soak-filler")
        # --max-body-size 4M: the endless fault is cut there (the 1G default would write a gibibyte per attempt).
        agent = subprocess.Popen([args.agent, "--dir", mirror, "--server", url, "--interval", "5", "-q",
                                  "--max-body-size", "4M"])
        agent_pid = agent.pid
        paths = {n: os.path.join(mirror, f) for n, f in names.items()}
        wanted = set(names.values())
        wanted_list = [names[n] for n in numbers]  # in a fixed order: --seed replays the run

        def check_agent():
            if agent.poll() is not None:
                raise SystemExit(f"FAIL: agent (pid {agent_pid}) exited with status {agent.returncode}")

        # First sync: bounded by progress, not by a fixed time (the gallery paints images on first request).
        started = time.monotonic()
        best, progress_at = 0, started
        while True:
            check_agent()
            present = len(wanted.intersection(os.listdir(mirror))) if os.path.isdir(mirror) else 0
            if present == len(wanted):
                break
            if present > best:
                best, progress_at = present, time.monotonic()
            if time.monotonic() - progress_at > args.stall:
                raise SystemExit(f"FAIL: first sync stalled at {present}/{len(wanted)} files")
            time.sleep(1)
        print(f"soak: first sync of {len(wanted)} files in {time.monotonic() - started:.0f} s")
        time.sleep(2)

        samples = []  # (elapsed s, phase, rss KiB, fds, threads, files in DIR)
        soak_start = time.monotonic()

        phase = ["start"]

        def sample():
            rss, threads = proc_status(agent_pid)
            samples.append((time.monotonic() - soak_start, phase[0], rss, fds(agent_pid), threads,
                            len(wanted.intersection(os.listdir(mirror)))))

        def sampler():  # a thread of its own: sampling goes on while the main loop waits or reads
            while not stop_sampling.wait(SAMPLE_EVERY):
                try:
                    sample()
                except OSError:
                    return  # the agent is gone: the main loop says so

        sample()
        phase[0] = "soak"
        stop_sampling = threading.Event()
        threading.Thread(target=sampler, daemon=True).start()
        actions = collections.Counter()
        gallery_faults = collections.Counter()
        mirror_faults = collections.Counter()
        restarts = collections.Counter()
        enospc_episodes = 0
        damage = collections.defaultdict(set)  # path -> SHA-256 of every content the soak left there
        duration = args.minutes * 60
        end = soak_start + duration
        restart_at = [soak_start + duration * (i + 1) / (args.restarts + 1) for i in range(args.restarts)]
        last_disk_purge = last_enospc = 0.0
        kinds = ["delete", "delete", "corrupt", "truncate", "replace", "purge-memory", "purge-disk", "hup",
                 "hup-storm", "fault", "fault", "clear-fault", "burst-delete"] + (["enospc"] if mounted else [])
        while time.monotonic() < end:
            now = time.monotonic()
            if restart_at and now >= restart_at[0]:
                restart_at.pop(0)
                how = rng.choice(["SIGKILL", "SIGTERM"])
                gallery.stop(signal.SIGKILL if how == "SIGKILL" else signal.SIGTERM)
                time.sleep(rng.uniform(0.5, 5))
                gallery.generation += 1
                gallery.start(held=True)
                restarts[how] += 1
                actions["gallery-restart"] += 1
                gallery_faults["restart"] += 1
                continue
            n = rng.choice(numbers)
            path = paths[n]
            action = rng.choice(kinds)
            if action == "purge-disk" and (rng.random() >= 0.2 or now - last_disk_purge < 30):
                action = "hup"
            if action == "enospc" and now - last_enospc < 30:
                action = "delete"
            actions[action] += 1
            try:
                if action == "delete":
                    os.unlink(path)
                    mirror_faults["delete"] += 1
                elif action == "corrupt":
                    with open(path, "r+b") as f:
                        f.seek(rng.randrange(8, 2000)); f.write(bytes([rng.randrange(256)]))
                    damage[path].add(file_digest(path))
                    mirror_faults["corrupt"] += 1
                elif action == "truncate":
                    os.truncate(path, rng.randrange(0, 100))
                    damage[path].add(file_digest(path))
                    mirror_faults["truncate"] += 1
                elif action == "replace":
                    with open(paths[rng.choice(numbers)], "rb") as f:
                        other = f.read()
                    tmp = os.path.join(mirror, ".soak-tmp")
                    with open(tmp, "wb") as f:
                        f.write(other)
                    os.rename(tmp, path)
                    damage[path].add(hashlib.sha256(other).digest())
                    mirror_faults["replace"] += 1
                elif action == "purge-memory":
                    agent.send_signal(signal.SIGUSR1)
                elif action == "purge-disk":
                    agent.send_signal(signal.SIGUSR2)
                    last_disk_purge = now
                elif action == "hup":
                    agent.send_signal(signal.SIGHUP)
                elif action == "hup-storm":
                    for _ in range(20):
                        agent.send_signal(signal.SIGHUP)
                        time.sleep(0.01)
                elif action == "fault":
                    fault = rng.choice([
                        {"allImages": "corrupt"}, {"allImages": "truncated"}, {"allImages": "serverError"},
                        {"allImages": "slow:300"}, {"latencyMilliseconds": 200}, {"feedStatus": 500},
                        {"emptyFeed": True}, {"imageFaults": {str(n): "endless"}},
                        {"droppedItems": rng.sample(numbers, max(1, len(numbers) // 100))}])
                    gallery.plan(fault)
                    gallery_faults[next(iter(fault)) + ("=" + fault["allImages"] if "allImages" in fault else "")] += 1
                elif action == "clear-fault":
                    gallery.plan({})
                elif action == "burst-delete":
                    for f in rng.sample(wanted_list, min(rng.choice([50, max(50, len(wanted) // 40)]), len(wanted))):
                        try:
                            os.unlink(os.path.join(mirror, f))
                            mirror_faults["delete"] += 1
                        except FileNotFoundError:
                            pass
                elif action == "enospc":
                    written = fill_until_enospc(filler)
                    hold_until = time.monotonic() + rng.uniform(2, 5)
                    while time.monotonic() < hold_until:  # repairs now must fail with ENOSPC
                        try:
                            os.unlink(paths[rng.choice(numbers)])
                            mirror_faults["delete"] += 1
                        except FileNotFoundError:
                            pass
                        check_agent()
                        time.sleep(0.5)
                    os.unlink(filler)
                    enospc_episodes += 1
                    last_enospc = time.monotonic()
                    if enospc_episodes == 1:
                        print(f"soak: first ENOSPC episode filled {written >> 20} MiB")
            except FileNotFoundError:
                pass
            check_agent()
            time.sleep(rng.uniform(0.01, 0.2))

        gallery.plan({})
        phase[0] = "converge"
        # Failures built up backoff during the faults (up to 5 minutes per asset); SIGHUP is the documented
        # "retry everything now", as a user would send after fixing the gallery.
        agent.send_signal(signal.SIGHUP)
        converge_start = time.monotonic()
        reference = reference_digests(gallery.url, numbers)
        print(f"soak: reference bytes of generation {gallery.generation} read in {time.monotonic() - converge_start:.0f} s")
        # By design a purge (SIGUSR2) or a dropped item leaves a file it finds changed in place, and the path
        # stops being the agent's: the soak's damage can thus become a file the agent refuses to touch, and its
        # log says "move it away". Once progress stops, such paths are moved away, as a user would, and must
        # then come back. A conflict over content the soak never wrote is the agent's fault.
        pending = set(numbers)
        released, released_not_ours = [], []
        best, progress_at, scanned_for = len(pending), time.monotonic(), None
        while pending:
            check_agent()
            pending = {n for n in pending if file_digest(paths[n]) != reference[n]}
            if len(pending) < best:
                best, progress_at = len(pending), time.monotonic()
            if not pending or time.monotonic() - progress_at > args.stall:
                break
            if time.monotonic() - progress_at > 15 and scanned_for != progress_at:
                scanned_for = progress_at
                foreign = conflicts_in_log(os.path.join(mirror, ".emojiart-sync"))
                taken = [n for n in sorted(pending) if paths[n] in foreign and n not in released + released_not_ours]
                for n in taken:
                    if file_digest(paths[n]) in damage[paths[n]]:
                        released.append(n)
                    else:  # kept for a post-mortem, with the agent's state, outside the tmpfs
                        released_not_ours.append(n)
                        os.makedirs(kept, exist_ok=True)
                        shutil.copy2(paths[n], kept)
                    os.unlink(paths[n])
                if taken:
                    agent.send_signal(signal.SIGHUP)
                    best, progress_at = len(pending), time.monotonic()
            time.sleep(1)
        converged_in = time.monotonic() - converge_start
        time.sleep(2)
        # The verdict: one full pass over every file.
        lost = sorted(n for n in numbers if file_digest(paths[n]) != reference[n])
        extras = sorted(set(os.listdir(mirror)) - wanted - {".emojiart-sync"})
        leftovers = os.listdir(os.path.join(mirror, ".emojiart-sync", "tmp")) \
            if os.path.isdir(os.path.join(mirror, ".emojiart-sync", "tmp")) else []
        stop_sampling.set()
        phase[0] = "end"
        sample()

        # Samples: one row per period (a minute, or 15 s for short runs), and the last.
        period = 60 if duration >= 300 else 15
        print(f"soak: samples every {SAMPLE_EVERY:.0f} s, one row per {period} s:")
        print("soak:   time  phase      RSS MiB   fds  threads   files")
        shown = -1
        for i, (t, phase, rss, fd, th, files) in enumerate(samples):
            if int(t // period) != shown or i == len(samples) - 1:
                shown = int(t // period)
                print(f"soak: {t:6.0f}  {phase:<9} {rss / 1024:8.1f} {fd:5d} {th:8d} {files:7d}")
        first, last = samples[0], samples[-1]
        first_half_peak = max(s[2] for s in samples[: max(2, len(samples) // 2)])
        rss_ok = last[2] <= first_half_peak * 1.25 + 8192
        fds_ok = last[3] <= first[3] + 2
        threads_ok = last[4] <= first[4] + 2
        # "Flat": after the allocator reaches its high-water mark (endless bodies go to disk up to the 4 MiB
        # body limit the soak sets, and glibc keeps freed heap), RSS must stop growing: the end is compared with the peak
        # of the first half of the run, not with the idle start.
        print(f"soak: {args.minutes} min, {args.count} items ({len(numbers)} images), seed {args.seed}")
        print(f"soak: actions {dict(sorted(actions.items()))}")
        print(f"soak: faults injected: gallery {sum(gallery_faults.values())} {dict(sorted(gallery_faults.items()))}, "
              f"mirror {sum(mirror_faults.values())} {dict(sorted(mirror_faults.items()))}, ENOSPC {enospc_episodes}"
              + ("" if mounted else " (skipped)"))
        print(f"soak: crashes survived: gallery killed {restarts['SIGKILL']}, stopped {restarts['SIGTERM']}, "
              f"restarted with generation 1..{gallery.generation}; agent pid {agent_pid} throughout")
        print(f"soak: RSS MiB first {first[2] / 1024:.1f}, first-half peak {first_half_peak / 1024:.1f}, "
              f"peak {max(s[2] for s in samples) / 1024:.1f}, last {last[2] / 1024:.1f} {'ok' if rss_ok else 'GREW'}")
        print(f"soak: fds first {first[3]}, peak {max(s[3] for s in samples)}, last {last[3]} {'ok' if fds_ok else 'GREW'}")
        print(f"soak: threads first {first[4]}, peak {max(s[4] for s in samples)}, last {last[4]} {'ok' if threads_ok else 'GREW'}")
        print(f"soak: converged in {converged_in:.0f} s; files lost {len(lost)}"
              + (f" {[names[n] for n in lost[:5]]}" if lost else "")
              + f"; stray files in DIR {len(extras)}" + (f" {extras[:5]}" if extras else "")
              + f"; temporary files left {len(leftovers)}")
        print(f"soak: paths released by design and restored after the soak moved them away: {len(released)} "
              "(damaged by the soak when a purge or a dropped item found them)"
              + (f"; conflicts over content the soak never wrote: {[names[n] for n in released_not_ours]}"
                 if released_not_ours else ""))
        print(f"soak: mirror {'complete and byte-identical to generation ' + str(gallery.generation) if not lost else 'INCOMPLETE'}")
        try:
            status = json.loads(subprocess.run([args.agent, "status", "--dir", mirror, "--json"],
                                               capture_output=True, text=True, timeout=30).stdout)
            print(f"soak: agent status: assets {status.get('assets')}, hits {status.get('hits')}, "
                  f"repairs {status.get('repairs')}, fetched {status.get('bytesFetched', 0) >> 20} MiB")
        except (ValueError, subprocess.SubprocessError) as error:
            print(f"soak: agent status unreadable: {error}")
        log = os.path.join(mirror, ".emojiart-sync", "sync.log")
        if mounted and os.path.exists(log):
            with open(log, errors="replace") as f:
                full = sum(1 for line in f if "No space left on device" in line)
            print(f"soak: agent log lines naming ENOSPC: {full}")
        ok = not lost and not extras and not released_not_ours and rss_ok and fds_ok and threads_ok
        if released_not_ours:
            for name in os.listdir(os.path.join(mirror, ".emojiart-sync")):
                if name.startswith(("sync.log", "index.sqlite3")):
                    shutil.copy2(os.path.join(mirror, ".emojiart-sync", name), kept)
            print(f"soak: kept those files and the agent's log and index in {kept}")
        if not ok and os.path.exists(log):
            print("soak: last lines of the agent's log:")
            with open(log, errors="replace") as f:
                for line in collections.deque(f, 15):
                    print("  " + line.rstrip())
        agent.send_signal(signal.SIGTERM)
        code = agent.wait(timeout=30)
        print(f"soak: agent exit status {code}; {'PASS' if ok and code == 0 else 'FAIL'}")
        ok = ok and code == 0
    finally:
        for proc in (agent, gallery.proc):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
        if mounted:
            if os.path.exists(filler):
                os.unlink(filler)
            if subprocess.run(["umount", fs]).returncode != 0:
                subprocess.run(["umount", "-l", fs])
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
