#!/usr/bin/env python3
"""Soak test (opt-in, outside the default test run): minutes of random deletes, corruptions,
truncations, replacements, purges, SIGHUPs and gallery faults against a running agent. At the end the
faults stop and the mirror must come back complete and byte-identical, the agent's descriptor count must
not have grown, and its RSS must be flat (last sample within 25% + 8 MiB of the first after warm-up).

Usage: contrib/soak.sh [--minutes 3] [--count 200]     (exit 0 = pass)
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, time, urllib.request


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=5).read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--gallery", required=True)
    parser.add_argument("--minutes", type=float, default=3)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="emojiart-soak-")
    mirror = os.path.join(work, "mirror")
    gallery = subprocess.Popen([args.gallery, "--host", "127.0.0.1", "--port", "0", "--count", str(args.count), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = gallery.stdout.readline().strip()
    agent = subprocess.Popen([args.agent, "--dir", mirror, "--server", url, "--interval", "5", "-q"])
    names = {n: f"gallery_image_{n}.png" for n in range(1, args.count + 1) if n % 10 != 0}
    expected = {n: urllib.request.urlopen(f"{url}/gallery/image?{n}", timeout=10).read() for n in names}
    ok = False
    try:
        deadline = time.monotonic() + 60
        while not all(os.path.exists(os.path.join(mirror, f)) for f in names.values()):
            if time.monotonic() > deadline:
                raise SystemExit("first sync did not finish")
            time.sleep(0.1)
        time.sleep(2)
        samples = [(rss_kib(agent.pid), fds(agent.pid))]
        actions = {}
        end = time.monotonic() + args.minutes * 60
        next_sample = time.monotonic() + 5
        while time.monotonic() < end:
            n = rng.choice(list(names))
            path = os.path.join(mirror, names[n])
            action = rng.choice(["delete", "delete", "corrupt", "truncate", "replace", "purge-memory", "purge-disk",
                                 "hup", "fault", "clear-fault", "burst-delete"])
            actions[action] = actions.get(action, 0) + 1
            try:
                if action == "delete":
                    os.unlink(path)
                elif action == "corrupt":
                    with open(path, "r+b") as f:
                        f.seek(rng.randrange(8, 2000)); f.write(bytes([rng.randrange(256)]))
                elif action == "truncate":
                    os.truncate(path, rng.randrange(0, 100))
                elif action == "replace":
                    other = rng.choice(list(names))
                    tmp = os.path.join(mirror, ".soak-tmp"); open(tmp, "wb").write(expected[other]); os.rename(tmp, path)
                elif action == "purge-memory":
                    agent.send_signal(signal.SIGUSR1)
                elif action == "purge-disk" and rng.random() < 0.2:
                    agent.send_signal(signal.SIGUSR2)
                elif action == "hup":
                    agent.send_signal(signal.SIGHUP)
                elif action == "fault":
                    fault = rng.choice([{"allImages": "corrupt"}, {"allImages": "truncated"}, {"allImages": "serverError"},
                                        {"latencyMilliseconds": 200}, {"feedStatus": 500}, {"imageFaults": {str(n): "endless"}}])
                    post(f"{url}/_control/faults", fault)
                elif action == "clear-fault":
                    post(f"{url}/_control/faults", {})
                elif action == "burst-delete":
                    for f in rng.sample(list(names.values()), min(50, len(names))):
                        try: os.unlink(os.path.join(mirror, f))
                        except FileNotFoundError: pass
            except FileNotFoundError:
                pass
            if agent.poll() is not None:
                raise SystemExit(f"agent died with status {agent.returncode}")
            if time.monotonic() >= next_sample:
                samples.append((rss_kib(agent.pid), fds(agent.pid)))
                next_sample = time.monotonic() + 5
            time.sleep(rng.uniform(0.01, 0.2))
        post(f"{url}/_control/faults", {})
        # Failures built up backoff during the faults (up to 5 minutes per asset); SIGHUP is the documented
        # "retry everything now", as a user would send after fixing the gallery.
        agent.send_signal(signal.SIGHUP)
        converge = time.monotonic() + 60
        while time.monotonic() < converge:
            bad = [f for n, f in names.items() if not os.path.exists(os.path.join(mirror, f))
                   or open(os.path.join(mirror, f), "rb").read() != expected[n]]
            if not bad:
                break
            time.sleep(0.2)
        time.sleep(2)
        samples.append((rss_kib(agent.pid), fds(agent.pid)))
        first_rss, first_fds = samples[0]
        last_rss, last_fds = samples[-1]
        # "Flat": after the allocator reaches its high-water mark (endless bodies are buffered up to the 4 MiB
        # body limit, and glibc keeps freed heap), RSS must stop growing: the end is compared with the peak
        # of the first half of the run, not with the idle start.
        first_half_peak = max(s[0] for s in samples[: max(2, len(samples) // 2)])
        thirds = [samples[len(samples) // 3][0], samples[2 * len(samples) // 3][0], last_rss]
        print(f"soak: {args.minutes} min, actions {dict(sorted(actions.items()))}")
        print(f"soak: RSS KiB idle {first_rss}, first-half peak {first_half_peak}, at 1/3 2/3 end {thirds}, max {max(s[0] for s in samples)} ({len(samples)} samples)")
        print(f"soak: fds first {first_fds}, last {last_fds}")
        print(f"soak: mirror {'complete and byte-identical' if not bad else f'INCOMPLETE: {bad[:5]}'}")
        ok = not bad and last_fds <= first_fds + 2 and last_rss <= first_half_peak * 1.25 + 8192
        agent.send_signal(signal.SIGTERM)
        status = agent.wait(timeout=10)
        print(f"soak: agent exit status {status}; {'PASS' if ok and status == 0 else 'FAIL'}")
        ok = ok and status == 0
    finally:
        for p in (agent, gallery):
            if p.poll() is None:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
