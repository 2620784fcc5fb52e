#!/usr/bin/env python3
"""Where the CPU of one run went, machine-wide: reads a `perf record -a -g` recording made while a command ran and
prints seconds of CPU per owner (the command's own binary, each library it calls, the kernel work its system calls
cause grouped by what they do, nginx, other processes, idle), then (given --target) what the command's own code
can win at most.

    cpu-owners.py PERF_DATA --comm NAME --hz HZ --wall SECONDS [--target SECONDS] [--cores N]

NAME is the command's main thread name (`emojiart-sync`, `curl`): every thread of a process that ran a thread so
named is the command's. A sample in the kernel is charged to the system call on its stack (softirq work done
inside it included: the loopback delivery of what `sendto` sends to nginx is the sender's); page faults and
interrupts outside any call go to "memory and threads" and "other". Seconds are samples / HZ.

Columns split the command's CPU by thread role (numbered threads of one kind together).
With --target, the last line bounds what changing the command's own code could win: were its own binary's CPU gone
(for emojiart-sync its Swift code and the Swift runtime linked into it, with libc on the threads that run it) and
everything else the same, the wall could not drop below (busy - own) / cores (no core ever idle), and would be
(busy - own + idle) / cores were the idle time the same.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

KERNEL_GROUPS = [
    ("files", "files (openat, linkat, write, close, stat)",
     {"openat", "open", "linkat", "link", "write", "writev", "close", "close_range", "renameat2", "renameat", "rename",
      "unlinkat", "unlink", "newfstatat", "fstat", "newfstat", "statx", "newlstat", "fcntl", "ftruncate", "getdents64",
      "read", "readv", "lseek", "openat2", "open_execat", "mkdirat", "fchmod", "utimensat", "fallocate", "copy_file_range", "sendfile64"}),
    ("network", "network (send, recv, poll; loopback delivery)",
     {"sendto", "recvfrom", "sendmsg", "recvmsg", "poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_ctl",
      "connect", "socket", "setsockopt", "getsockopt", "getsockname", "getpeername", "shutdown", "select"}),
    ("index", "database I/O (pread64, pwrite64)", {"pread64", "pwrite64", "preadv", "pwritev"}),
    ("flush", "flushes (syncfs, fsync, fdatasync)", {"syncfs", "fsync", "fdatasync", "sync_file_range"}),
    ("memory", "memory, threads (faults, mmap, futex)",
     {"mmap", "mmap_pgoff", "munmap", "mprotect", "madvise", "brk", "mremap", "futex", "sched_yield", "clone3", "clone",
      "rt_sigprocmask", "nanosleep", "clock_nanosleep", "exit", "exit_group", "set_robust_list", "rseq"}),
]
LIBRARY_GROUPS = [
    ("libc", "libc (malloc, memcpy, ...: whoever calls)", re.compile(r"^(libc\.so|libm\.so|ld-linux|\[vdso\])")),
    ("libcurl", "libcurl", re.compile(r"^libcurl")),
    ("tls", "TLS (libssl, libcrypto)", re.compile(r"^(libssl|libcrypto)")),
    ("sqlite", "SQLite", re.compile(r"^libsqlite3")),
    ("png", "libpng, zlib", re.compile(r"^(libpng|libz)")),
]
# The call's entry on the stack: `__x64_sys_NAME`, or where the kernel inlined that wrapper, the `ksys_NAME` /
# `do_sys_NAME` it calls (`write` shows as `ksys_write`, `mmap` as `ksys_mmap_pgoff`).
SYSCALL = re.compile(r"\b(?:__x64_sys|__do_sys|__se_sys|__ia32_sys|ksys|do_sys)_(\w+)")


def samples(path):
    """Yields (comm, pid, frames) per sample, frames as (symbol, dso basename), leaf first."""
    try:
        run = subprocess.run(
            ["perf", "script", "-i", path, "-F", "comm,pid,tid,ip,sym,dso"], capture_output=True, text=True,
            errors="replace")
    except FileNotFoundError:
        sys.exit("cpu-owners.py: perf is not installed (Debian: apt-get install linux-perf)")
    if run.returncode != 0:
        detail = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
        sys.exit(f"cpu-owners.py: perf script cannot read {path}: {detail}")
    script = run.stdout
    for block in script.split("\n\n"):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        head = re.match(r"^\s*(.*?)\s+(\d+)/(\d+)\s*$", lines[0])
        if not head:
            continue
        frames = []
        for line in lines[1:]:
            part = re.match(r"^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$", line)
            if part:
                frames.append((part.group(1), part.group(2).rsplit("/", 1)[-1]))
        yield head.group(1), int(head.group(2)), frames


def library(dso, binary):
    """The owner key of user-space code in `dso`."""
    if dso == binary:
        return "own"
    for key, _, pattern in LIBRARY_GROUPS:
        if pattern.search(dso):
            return key
    return "lib-other"


def thread_group(comm):
    """A thread's role by its name: numbered threads of a kind together; Swift's global executor threads
    (`com.apple.root.default-qos`, cut to the kernel's 15 bytes) by name."""
    if comm.endswith("default-qos"):
        return "Swift pool"
    return re.sub(r"[-_]?\d+$", "", comm)


def owner(frames, binary):
    """The owner key of one of the command's samples."""
    if not frames:
        return "k-other"
    dso = frames[0][1]
    if dso.startswith("[kernel"):
        for frame_symbol, _ in frames:
            call = SYSCALL.search(frame_symbol)
            if call:
                name = call.group(1)
                for key, _, calls in KERNEL_GROUPS:
                    if name in calls:
                        return "k-" + key
                return "k-other"
        if any("page_fault" in frame_symbol for frame_symbol, _ in frames):
            return "k-memory"
        return "k-other"
    return library(dso, binary)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data")
    parser.add_argument("--comm", required=True)
    parser.add_argument("--hz", type=float, required=True)
    parser.add_argument("--wall", type=float, required=True)
    parser.add_argument("--target", type=float, help="the wall to reach: prints the bound on what the command's own code can win")
    parser.add_argument("--cores", type=int)
    arguments = parser.parse_args()
    cores = arguments.cores or os.cpu_count()

    every = list(samples(arguments.data))
    pids = {pid for comm, pid, _ in every if comm == arguments.comm}
    if not pids:
        sys.exit(f"cpu-owners.py: no sample of a thread named {arguments.comm} in {arguments.data}")
    binary = arguments.comm  # the program's file is named as its main thread (emojiart-sync, curl)
    seconds = collections.Counter()
    by_thread = collections.defaultdict(collections.Counter)
    for comm, pid, frames in every:
        if pid in pids:
            key = owner(frames, binary)
            seconds[key] += 1
            by_thread[thread_group(comm)][key] += 1
        elif pid == 0:
            seconds["idle"] += 1
        elif comm.startswith("nginx"):
            seconds["nginx"] += 1
        else:
            seconds["others"] += 1

    name = arguments.comm
    rows = [("own", "its own code (the binary" + (", Swift runtime in it)" if name == "emojiart-sync" else ")"))]
    rows += [(key, label) for key, label, _ in LIBRARY_GROUPS]
    rows += [("lib-other", "other libraries")]
    rows += [("k-" + key, "kernel: " + label) for key, label, _ in KERNEL_GROUPS]
    rows += [("k-other", "kernel: other (syscall entry, interrupts, ...)")]
    groups = [group for group, counts in sorted(by_thread.items(), key=lambda item: -sum(item[1].values()))
              if sum(counts.values()) / arguments.hz >= 0.05]
    print(f"  {'seconds of CPU: ' + name:<56} {'in all':>7}" + "".join(f" {group[:14]:>14}" for group in groups))
    for key, label in rows:
        print(f"    {label:<54} {seconds[key] / arguments.hz:7.2f}"
              + "".join(f" {by_thread[group][key] / arguments.hz:14.2f}" for group in groups))
    command_total = sum(value for key, value in seconds.items() if key not in ("nginx", "others", "idle"))
    print(f"    {'in all':<54} {command_total / arguments.hz:7.2f}"
          + "".join(f" {sum(by_thread[group].values()) / arguments.hz:14.2f}" for group in groups))
    for key, label in [("nginx", "nginx (user and kernel)"), ("others", "other processes, kernel threads"),
                       ("idle", "idle")]:
        print(f"  {label:<56} {seconds[key] / arguments.hz:7.2f}")
    total = sum(seconds.values()) / arguments.hz
    print(f"  {'sampled in all':<56} {total:7.2f}   (cores x wall: {cores} x {arguments.wall:.2f} s = "
          f"{cores * arguments.wall:.2f} s)")
    if arguments.target is None:
        return
    busy = total - seconds["idle"] / arguments.hz
    idle = seconds["idle"] / arguments.hz
    own = seconds["own"] / arguments.hz
    # libc's callers cannot be told from frame-pointer stacks (libc keeps none): its time on the threads that run
    # the command's own code is counted as that code's, which overstates it (SQLite runs there too).
    own_threads = {group for group, counts in by_thread.items() if counts["own"] >= 0.2 * sum(counts.values())}
    own_with_libc = own + sum(by_thread[group]["libc"] for group in own_threads) / arguments.hz
    print(f"  were {name}'s own code to take no CPU at all ({own:.2f} s, and {own_with_libc - own:.2f} s of libc on "
          f"the threads that run it: {own_with_libc:.2f} s),\n  the rest unchanged, the wall would be at best {(busy - own_with_libc) / cores:.2f} s with no core ever idle, "
          f"{(busy - own_with_libc + idle) / cores:.2f} s with the idle time as it was"
          + f"; target {arguments.target:.2f} s")


if __name__ == "__main__":
    main()
