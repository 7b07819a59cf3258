#!/usr/bin/env python3
"""How long a waiting cmdguard takes to notice a decision from `cmdguard approve`.

Starts a wrapper with no terminal (`--no-tty wait`), lets it wait long enough for its polling
to back off fully, approves it from a pseudo-terminal, and measures the time from the `y`
keystroke to the wrapper's exit. Usage: bench/queue-latency.py [BINARY] [RUNS]
"""
import json, os, pty, subprocess, sys, tempfile, time

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/cmdguard")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
root = tempfile.mkdtemp()
env = dict(os.environ, HOME=root, XDG_CONFIG_HOME=f"{root}/c", XDG_STATE_HOME=f"{root}/s")
os.makedirs(f"{root}/c/cmdguard")
with open(f"{root}/c/cmdguard/rules.toml", "w") as f:
    f.write("[[rule]]\nid = \"bench.touch\"\naction = \"ask\"\npattern = '^touch '\nreason = \"bench\"\n")

def pending():
    out = subprocess.run([binary, "--json", "pending"], env=env, cwd=root, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]

lat = []
for i in range(runs):
    w = subprocess.Popen([binary, "--no-tty", "wait", "--session-key", f"b{i}", "-c", f"touch f{i}"], env=env,
                         cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    while not pending():
        time.sleep(0.01)
    time.sleep(1.5)  # the wrapper's polling has backed off to its longest interval
    rid = pending()[0]["id"]
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(binary, [binary, "approve", rid, "--scope", "once"], env)
    buf = b""
    while b"any other key cancels" not in buf:
        buf += os.read(fd, 4096)
    t0 = time.monotonic()
    os.write(fd, b"y")
    w.wait()
    lat.append(time.monotonic() - t0)
    os.waitpid(pid, 0)
    os.close(fd)
lat.sort()
print(f"decision noticed after: median {lat[len(lat)//2]*1000:.0f} ms, max {lat[-1]*1000:.0f} ms over {runs} runs")
