#!/usr/bin/env python3
"""Repair latency of the background agent: delete one of its files, time until the file is back and
byte-identical. Prints p50/p90/p99/max over N deletes (default 250).

Peer, in the same run when `inotifywait` (inotify-tools) is installed: a shell watcher of the kind people
write by hand, `inotifywait -m -e delete DIR | while read ...; do curl -o ...; done`, repairing the same
kind of delete in a second directory.

Usage: contrib/bench/repair-latency.py --agent BIN --gallery BIN [--deletes 250]
(contrib/bench/repair-latency.sh builds release binaries and calls this.)
"""
import argparse, os, random, shutil, signal, statistics, subprocess, sys, tempfile, time


def wait_until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.0005)
    return predicate()


def same(path, expected):
    try:
        with open(path, "rb") as f:
            return f.read() == expected
    except OSError:
        return False


def measure(directory, names, originals, deletes, rng):
    latencies = []
    for _ in range(deletes):
        name = rng.choice(names)
        path = os.path.join(directory, name)
        if not wait_until(lambda: same(path, originals[name]), 10):
            raise SystemExit(f"{path} not intact before the delete")
        start = time.monotonic()
        os.unlink(path)
        if not wait_until(lambda: same(path, originals[name]), 10):
            raise SystemExit(f"{path} did not come back within 10 s")
        latencies.append((time.monotonic() - start) * 1000)
        time.sleep(0.01)
    return latencies


def summary(label, values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return f"{label:<44} n={len(values):<4} p50={pick(0.50):7.2f} ms  p90={pick(0.90):7.2f} ms  p99={pick(0.99):7.2f} ms  max={values[-1]:7.2f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--gallery", required=True)
    parser.add_argument("--deletes", type=int, default=250)
    parser.add_argument("--count", type=int, default=100)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="emojiart-latency-")
    procs = []
    try:
        gallery = subprocess.Popen([args.gallery, "--host", "127.0.0.1", "--port", "0", "--count", str(args.count), "--quiet"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(gallery)
        url = gallery.stdout.readline().strip()
        mirror = os.path.join(work, "mirror")
        agent = subprocess.Popen([args.agent, "--dir", mirror, "--server", url, "--interval", "3600", "-q"])
        procs.append(agent)
        names = [f"gallery_image_{n}.png" for n in range(1, args.count + 1) if n % 10 != 0]
        if not wait_until(lambda: all(os.path.exists(os.path.join(mirror, n)) for n in names), 60):
            raise SystemExit("the agent did not finish its first sync")
        time.sleep(0.5)
        originals = {n: open(os.path.join(mirror, n), "rb").read() for n in names}
        rng = random.Random(42)
        ours = measure(mirror, names, originals, args.deletes, rng)
        print(summary("emojiart-sync (inotify -> repair)", ours))

        if shutil.which("inotifywait"):
            peer_dir = os.path.join(work, "peer")
            os.makedirs(peer_dir)
            for n in names:
                shutil.copyfile(os.path.join(mirror, n), os.path.join(peer_dir, n))
            script = (f'inotifywait -q -m -e delete --format %f "{peer_dir}" | while read -r f; do '
                      f'n=${{f#gallery_image_}}; n=${{n%.png}}; '
                      f'curl -s -o "{peer_dir}/.tmp.$f" "{url}/gallery/image?$n" && mv "{peer_dir}/.tmp.$f" "{peer_dir}/$f"; done')
            peer = subprocess.Popen(["bash", "-c", script], start_new_session=True)
            procs.append(peer)
            time.sleep(0.5)
            theirs = measure(peer_dir, names, originals, args.deletes, random.Random(42))
            print(summary("peer: inotifywait | curl shell loop", theirs))
        else:
            print("peer: inotifywait not installed (apt-get install inotify-tools); skipped")
        agent.send_signal(signal.SIGTERM)
        status = agent.wait(timeout=10)
        print(f"agent exit status after SIGTERM: {status}")
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM) if p.args[0] == "bash" else p.terminate()
                except Exception:
                    p.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
