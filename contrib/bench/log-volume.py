#!/usr/bin/env python3
"""Lines and bytes the log gets per pass (issue 24: a log a person tails at any size).

Runs the bundled gallery with N small items (each listed three times in the feed) and measures, with the
binaries given:
  cold    a first --once run (every asset fetched)
  warm    a second --once run (every asset a disk hit: what each restart's full pass writes)
  start   a running agent's first pass (a full pass) and one unchanged (304) poll, which is at info as the
          first of the hour (a heartbeat)
  changed one poll after the feed changed by one item (dropped; its file removed)

    contrib/bench/log-volume.py [--count 1000] [--bin .build/release]
"""
import argparse, json, os, signal, subprocess, tempfile, time, urllib.request

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--bin", default=".build/release")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="log-volume-")
    gallery = subprocess.Popen([f"{args.bin}/emojiart-gallery", "--port", "0", "--count", str(args.count), "--small"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = gallery.stdout.readline().strip()
    log = f"{work}/sync.log"
    sync = [f"{args.bin}/emojiart-sync", "--dir", f"{work}/dir", "--server", url, "--log-file", log, "-q"]

    def size():
        return os.path.getsize(log) if os.path.exists(log) else 0

    def lines_between(start):
        with open(log, "rb") as f:
            f.seek(start)
            return f.read().decode().splitlines()

    def report(name, start):
        lines = lines_between(start)
        asset = sum(1 for l in lines if "event=asset" in l or "event=refresh" in l)
        print(f"{name:8} {len(lines):8} lines {size() - start:11} bytes {asset:8} asset/refresh lines"
              f" {(size() - start) / max(1, len(lines)):6.0f} bytes/line")

    def control(plan):
        request = urllib.request.Request(f"{url}/_control/faults", data=json.dumps(plan).encode(), method="POST")
        urllib.request.urlopen(request).read()

    for name in ["cold", "warm"]:
        start = size()
        subprocess.run(sync + ["--once"], stderr=subprocess.DEVNULL)
        report(name, start)

    agent = subprocess.Popen(sync + ["--interval", "2s"], stderr=subprocess.DEVNULL)

    def wait_for_polls(count, start):
        deadline = time.time() + 600
        while time.time() < deadline:
            if os.path.exists(log) and sum(1 for l in lines_between(start) if "event=poll" in l) >= count:
                return
            time.sleep(0.2)
        raise SystemExit("the agent did not poll")

    start = size()
    wait_for_polls(2, start)  # the first (full) pass, then a 304 at info
    report("start", start)
    start = size()
    control({"droppedItems": [3]})
    wait_for_polls(1, start)
    time.sleep(1)  # the pass line follows the poll line
    report("changed", start)
    agent.send_signal(signal.SIGTERM)
    agent.wait()
    gallery.send_signal(signal.SIGTERM)
    gallery.wait()
    print(f"log: {log}")

main()
