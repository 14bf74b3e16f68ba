#!/usr/bin/env python3
"""Requests per second and latency percentiles of one page of `runner serve`, localhost only.

  runner serve --results DIR --bind 127.0.0.1:8080 &
  python3 runner/benches/serve_load.py http://127.0.0.1:8080/ --requests 500 --clients 4

Each client keeps one HTTP/1.1 connection and sends its share of the requests one after the
other (a bounded loop: exactly --requests requests in all). Prints requests/s, p50, p99, max
and the page's size. Refuses any host but 127.0.0.1 / localhost / ::1.

  --streams N   first opens N event streams (/events) and keeps them open while the requests
                run; says how many had their first event.
  --pid PID     the server's resident memory (VmRSS, VmHWM) after the run.
"""
import argparse
import http.client
import threading
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--streams", type=int, default=0)
    ap.add_argument("--pid", type=int, default=0)
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"{u.hostname}: only a server on this machine is measured")
    path = (u.path or "/") + (f"?{u.query}" if u.query else "")
    per = [a.requests // a.clients + (1 if i < a.requests % a.clients else 0) for i in range(a.clients)]
    times, sizes, errors = [], [], []
    lock = threading.Lock()

    def client(n):
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=60)
        mine, size = [], 0
        for _ in range(n):
            t = time.perf_counter()
            conn.request("GET", path)
            r = conn.getresponse()
            body = r.read()
            mine.append(time.perf_counter() - t)
            size = len(body)
            if r.status != 200:
                with lock:
                    errors.append(r.status)
        with lock:
            times.extend(mine)
            sizes.append(size)

    socks, first = [], []
    for _ in range(a.streams):
        c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=60)
        c.request("GET", "/events", headers={"Accept": "text/event-stream"})
        r = c.getresponse()
        socks.append((c, r))

    def first_event(r):
        while True:
            line = r.fp.readline()
            if not line or line.startswith(b"event:"):
                with lock:
                    first.append(bool(line))
                return

    readers = [threading.Thread(target=first_event, args=(r,), daemon=True) for _, r in socks]
    for t in readers:
        t.start()
    for t in readers:
        t.join(60)

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in per]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    times.sort()
    pct = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1000
    print(f"{path}: {len(times)} requests, {a.clients} clients, {len(times) / wall:.0f} req/s, "
          f"p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, max {times[-1] * 1000:.1f} ms, "
          f"{max(sizes)} bytes, {len(errors)} non-200")
    if a.streams:
        print(f"{a.streams} event streams open, {sum(first)} had their first event")
    if a.pid:
        with open(f"/proc/{a.pid}/status") as f:
            mem = {l.split(":")[0]: l.split(":")[1].strip() for l in f if l.startswith("Vm")}
        print(f"server RSS {mem.get('VmRSS')}, peak {mem.get('VmHWM')}")


if __name__ == "__main__":
    main()
