#!/usr/bin/env python3
"""Queue latencies, measured with real processes and a real pseudo-terminal.

decision: how long a waiting cmdguard takes to notice a decision from `cmdguard approve`. Starts
a wrapper with no terminal (`--no-tty wait`), lets it wait long enough for its polling to back
off fully, approves it from a pseudo-terminal, and measures the time from the last keystroke of
the confirmation code to the wrapper's exit.

watch: how long `cmdguard watch` takes to show a new request. Starts `watch` on a
pseudo-terminal, lets it settle, starts a waiting wrapper, and measures the time from the
wrapper's start to its command appearing on the screen.

Usage: bench/queue-latency.py [BINARY] [RUNS] [decision|watch|both]
"""
import fcntl, json, os, pty, re, select, struct, subprocess, sys, tempfile, termios, time

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/cmdguard")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
which = sys.argv[3] if len(sys.argv) > 3 else "both"
root = tempfile.mkdtemp()
env = dict(os.environ, HOME=root, XDG_CONFIG_HOME=f"{root}/c", XDG_STATE_HOME=f"{root}/s", TERM="xterm")
os.makedirs(f"{root}/c/cmdguard")
with open(f"{root}/c/cmdguard/rules.toml", "w") as f:
    f.write("[[rule]]\nid = \"bench.touch\"\naction = \"ask\"\npattern = '^touch '\nreason = \"bench\"\n")

def pending():
    out = subprocess.run([binary, "--json", "pending"], env=env, cwd=root, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]

def waiter(i):
    return subprocess.Popen([binary, "--no-tty", "wait", "--session-key", f"b{i}", "-c", f"touch f{i}"], env=env,
                            cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)

def read_until(fd, pattern, buf=b"", timeout=30):
    end = time.monotonic() + timeout
    while not re.search(pattern, buf):
        left = end - time.monotonic()
        if left <= 0:
            raise SystemExit(f"never saw {pattern!r}: {buf[-300:]!r}")
        if select.select([fd], [], [], left)[0]:
            buf += os.read(fd, 65536)
    return buf

def report(name, lat):
    lat.sort()
    print(f"{name}: median {lat[len(lat)//2]*1000:.0f} ms, max {lat[-1]*1000:.0f} ms over {len(lat)} runs")

def decision():
    lat = []
    for i in range(runs):
        w = waiter(i)
        while not pending():
            time.sleep(0.01)
        time.sleep(1.5)  # the wrapper's polling has backed off to its longest interval
        rid = pending()[0]["id"]
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(binary, [binary, "approve", rid, "--scope", "once"], env)
        buf = read_until(fd, rb"type the code ([A-Z0-9]{4})")
        code = re.search(rb"type the code ([A-Z0-9]{4})", buf).group(1)
        os.write(fd, code[:-1])
        time.sleep(0.05)
        t0 = time.monotonic()
        os.write(fd, code[-1:])
        w.wait()
        lat.append(time.monotonic() - t0)
        os.waitpid(pid, 0)
        os.close(fd)
    report("decision noticed after", lat)

def watch():
    lat = []
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(binary, [binary, "watch"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    read_until(fd, rb"waiting for requests")
    for i in range(runs):
        time.sleep(1.2)  # whatever watch does between rounds, we land anywhere in it
        t0 = time.monotonic()
        w = waiter(i)
        read_until(fd, f"touch f{i}".encode())
        lat.append(time.monotonic() - t0)
        w.terminate()
        w.wait()
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    report("new request on the watch screen after", lat)

if which in ("decision", "both"):
    decision()
if which in ("watch", "both"):
    watch()
