#!/usr/bin/env python3
"""What the index's write-ahead log costs a cold pass, without the agent: inserts --rows rows shaped like the agent's
`files` table (Sources/EmojiArtSync/Index/AssetIndex.swift) in a random order of names, --per-transaction rows a
transaction, WAL mode, 2 KiB pages, no checkpoint, and prints the log's size and frames per row, for the table with
its unique index of names and with an index of an 8-byte hash of the name instead.

    contrib/bench/index-wal.py [--rows 90000] [--per-transaction 64,256] [--dir /dev/shm]

A frame is one page written to the log (two `pwrite`s: its header, then the page); a transaction writes each page
it dirtied once. docs/BENCHMARKS.md (twenty-first session) has the figures and what they mean for the cold sync."""
import argparse, hashlib, os, random, sqlite3, tempfile

COLUMNS = """name TEXT NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, tag TEXT, etag TEXT,
    last_modified TEXT, device INTEGER, inode INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, owner_device INTEGER,
    owner_inode INTEGER, name_hash INTEGER"""
INDEXES = {"name": "CREATE UNIQUE INDEX files_by_name ON files(name)",
           "hash": "CREATE INDEX files_by_hash ON files(name_hash)"}
PAGE = 2048


def run(directory, index, rows, per_transaction):
    path = os.path.join(directory, "index.sqlite3")
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in (f"page_size={PAGE}", "journal_mode=WAL", "synchronous=NORMAL", "wal_autocheckpoint=0", "cache_size=-2048"):
        db.execute("PRAGMA " + pragma)
    db.execute(f"CREATE TABLE files({COLUMNS})")
    db.execute(INDEXES[index])
    order = list(range(1, rows + 1))
    random.Random(1).shuffle(order)
    for start in range(0, rows, per_transaction):
        db.execute("BEGIN")
        for n in order[start:start + per_transaction]:
            name = f"asset-gallery_image_{n}_png-{hashlib.md5(str(n).encode()).hexdigest()}.png"
            digest = hashlib.sha256(name.encode()).digest()
            db.execute("INSERT INTO files VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
                name, f"/gallery/image/{n}.png", 106, digest.hex(), "7b8f4a2e-1c3d-4e5f-a6b7-c8d9e0f1a2b3",
                '"65a1b2c3-6a"', "Sun, 06 Dec 2026 09:00:00 GMT", 2049, 1_000_000 + n, 1_796_540_000_000_000_000 + n,
                1_796_540_000_000_000_000 + n, None, None, int.from_bytes(digest[:8], "little", signed=True)))
        db.execute("COMMIT")
    wal = os.path.getsize(path + "-wal")
    frames = (wal - 32) // (PAGE + 24)
    print(f"index of {index:4s}, {per_transaction:5d} rows a transaction: log {wal / 1e6:7.1f} MB, {frames:7d} frames, "
          f"{frames / rows:.2f} a row", flush=True)
    db.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=90000)
    p.add_argument("--per-transaction", default="64,256")
    p.add_argument("--dir", default=None, help="where the scratch database goes (default: the temporary directory)")
    a = p.parse_args()
    for index in INDEXES:
        for per_transaction in (int(x) for x in a.per_transaction.split(",")):
            with tempfile.TemporaryDirectory(dir=a.dir) as directory:
                run(directory, index, a.rows, per_transaction)


if __name__ == "__main__":
    main()
