#!/usr/bin/env python3
"""The metrics port under hostile clients: threads of the agent and scrape latency while N clients (default
300) hold connections with half a request line sent, against a quiet baseline. Prints thread counts (from
/proc/PID/task) and p50/p90/max scrape latency over M scrapes (default 50) for each phase, and whether the
junk clients were disconnected within the request timeout (5 s).

Usage: contrib/bench/metrics-slowloris.py --agent BIN --gallery BIN [--clients 300] [--scrapes 50]
(contrib/bench/metrics-slowloris.sh builds release binaries and calls this.)
"""
import argparse, os, shutil, signal, socket, subprocess, sys, tempfile, time


def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def scrape(port):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    if not data.startswith(b"HTTP/1.1 200") or b"emojiart_sync_hits_total" not in data:
        raise SystemExit(f"bad scrape: {data[:200]!r}")
    return (time.monotonic() - start) * 1000


def latencies(port, count):
    values = sorted(scrape(port) for _ in range(count))
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return f"p50={pick(0.5):6.2f} ms  p90={pick(0.9):6.2f} ms  max={values[-1]:6.2f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--gallery", required=True)
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--scrapes", type=int, default=50)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="metrics-slowloris-")
    gallery = subprocess.Popen([args.gallery, "--port", "0", "--count", "29"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    agent = None
    try:
        url = gallery.stdout.readline().strip()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        agent = subprocess.Popen([args.agent, "--dir", os.path.join(work, "emoji"), "--server", url, "-q",
                                  "--metrics-listen", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                scrape(port)
                break
            except (OSError, SystemExit):
                if time.monotonic() > deadline:
                    raise SystemExit("the metrics endpoint never answered")
                time.sleep(0.05)
        # The first pass done (27 of the 29 items are images): its work is not what is measured.
        emoji = os.path.join(work, "emoji")
        deadline = time.monotonic() + 300
        while len([n for n in os.listdir(emoji) if n.endswith(".png")]) < 27:
            if time.monotonic() > deadline:
                raise SystemExit("the first pass did not finish")
            time.sleep(0.05)
        time.sleep(1)
        print(f"quiet:      threads={threads(agent.pid):<4} scrapes: {latencies(port, args.scrapes)}")
        junk = []
        for _ in range(args.clients):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /metrics HT")
            junk.append(s)
        time.sleep(0.2)  # let the agent accept them all
        print(f"{args.clients} junk:   threads={threads(agent.pid):<4} scrapes: {latencies(port, args.scrapes)}")
        # Wait for the last (still held) junk client to be disconnected: the request timeout.
        start = time.monotonic()
        last = junk[-1]
        last.settimeout(30)
        try:
            closed = last.recv(1) == b""
        except ConnectionResetError:
            closed = True
        print(f"the newest junk client was {'closed' if closed else 'NOT closed'} after {time.monotonic() - start:.2f} s more")
        for s in junk:
            s.close()
    finally:
        if agent:
            agent.send_signal(signal.SIGTERM)
            agent.wait(timeout=10)
        gallery.send_signal(signal.SIGTERM)
        gallery.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
