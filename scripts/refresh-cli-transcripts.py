#!/usr/bin/env python3
"""Re-runs every `$ command` in docs/cli.md's ```console blocks and writes the
real output back, the way tests/docs.rs checks it. Run after `cargo build`."""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
doc = os.path.join(root, "docs", "cli.md")
bindir = os.path.join(root, "target", "debug")
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), NO_COLOR="1")

def run(cmd):
    out = subprocess.run(["sh", "-c", "exec 2>&1\n" + cmd], cwd=root, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True)
    lines = [l.rstrip() for l in out.stdout.decode("utf-8", "replace").split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    return lines

text = open(doc).read()
def block(m):
    body = m.group(2)
    out = []
    for line in body.split("\n"):
        if line.startswith("$ "):
            out.append(line)
            out.extend(run(line[2:]))
    return m.group(1) + "\n".join(out) + "\n```"
new = re.sub(r"(```console\n)(.*?)\n```", block, text, flags=re.S)
if new != text:
    open(doc, "w").write(new)
    print("docs/cli.md updated")
