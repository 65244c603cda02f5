#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every command example in README.md and docs/*.md, classified and run (issue 14).

The convention. Right before each fenced code block that holds a command
line, an HTML comment (it does not render) says what the block is:

  <!-- example: run -->          run each command; each must exit 0, or the
                                 status its comment names ("# ... exit 8")
  <!-- example: run-output -->   the same, and the lines shown after each
                                 `$ CMD` line must be exactly CMD's output
  <!-- example: pair -->         two hosts: `hostA$ CMD` / `hostB$ CMD` lines,
                                 run in order, each host in its own directory;
                                 a hostA command directly followed by a hostB
                                 command is a server and runs in the
                                 background until that hostB command is done
  <!-- example: not-run: REASON -->   not run, and REASON says why (needs two
                                 real hosts, a benchmark of minutes, a usage
                                 synopsis, ...)

Other names (`<!-- example: endpoint-json -->`) mark blocks that are not
commands and that a test of their own reads (tests/unit/oob/codec_docs_test.cc).

A block holds a command line when its fence is sh, bash, console or shell, or
when it is unlabelled (or `text`) and a line starts with `$ `, with one of our
tools (qp-connect, qp-validate, qp-info, qp-inspect, qp-trace, qp-mesh)
followed by a space, or with tools/, build/, tests/ or examples/. In a block
with `$ ` lines only those are commands (the rest is output); otherwise every
line that is not blank or a comment is one. A line ending in `\\`, or with an
open single quote, continues on the next.

The lab's names are put in, nothing else: mlx5_0 and rxe0 -> QPC_DEV0, mlx5_1
and rxe1 -> QPC_DEV1 (in a pair block mlx5_0 is QPC_DEV0 on hostA and QPC_DEV1
on hostB), 10.99.0.1 and a `hostA` argument -> QPC_IP0, 10.99.0.2 -> QPC_IP1,
and in a pair block `-g N` -> each host's QPC_GIDn; `scp` between the hosts is
a `cp` between their directories. build/ is the build tree, the other
relative paths are the source tree's. The VM's own names are rxe0, rxe1 and
10.99.0.1, so there most of this changes nothing.

Usage:
  doc_examples.py check FILE...                 every command block classified
  doc_examples.py list FILE...                  the classification of each block
  doc_examples.py run --src DIR --build DIR [--kind K]... [--no-lab] FILE...
                                                run the runnable blocks (in the lab)
Exit status: 0 all well, 1 a finding or a failed example, 2 bad usage.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

KINDS = ("run", "run-output", "pair", "not-run")
COMMAND_FENCES = ("sh", "bash", "console", "shell")
TOOLS = ("qp-connect", "qp-validate", "qp-info", "qp-inspect", "qp-trace", "qp-mesh")
COMMAND_LINE = re.compile(r"^(\$ |(%s)(\s|$)|(tools|build|tests|examples)/)" %
                          "|".join(TOOLS))
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = re.compile(r"<!--\s*example:\s*(.*?)\s*-->", re.S)
COMMAND_TIMEOUT = 120  # seconds, each command; a server gets as long after its client


class Block:
    def __init__(self, path, line, info, body, marker, marker_line):
        self.path, self.line, self.info, self.body = path, line, info, body
        self.marker, self.marker_line = marker, marker_line  # marker text or None
        self.kind, self.reason = None, ""
        if marker is not None:
            kind, _, rest = marker.partition(":")
            self.kind, self.reason = kind.strip(), rest.strip()

    def where(self):
        return "%s:%d" % (self.path, self.line)

    def has_command(self):
        if self.info in COMMAND_FENCES:
            return True
        if self.info not in ("", "text"):
            return False
        return any(COMMAND_LINE.match(l) for l in self.body)


def parse(path, shown):
    """Returns (blocks, findings) of one markdown file, named `shown` in them."""
    lines = open(path, encoding="utf-8").read().split("\n")
    path = shown
    blocks, findings, used_markers = [], [], set()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(2), m.group(3)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        body = lines[i + 1:j]
        # The marker: the nearest non-blank line(s) above the fence.
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = marker_line = None
        if k >= 0 and lines[k].rstrip().endswith("-->"):
            s = k
            while s >= 0 and "<!--" not in lines[s]:
                s -= 1
            mm = MARKER.search("\n".join(lines[max(s, 0):k + 1]))
            if mm:
                marker, marker_line = " ".join(mm.group(1).split()), s + 1
                used_markers.add(s + 1)
        blocks.append(Block(path, i + 1, info, body, marker, marker_line))
        i = j + 1
    # A marker that no fence follows classifies nothing.
    for n, l in enumerate(lines, 1):
        if re.match(r"\s*<!--\s*example:", l) and n not in used_markers:
            findings.append("%s:%d: an example marker with no fenced block right after it"
                            % (path, n))
    return blocks, findings


def check(blocks):
    findings = []
    for b in blocks:
        if b.marker is None:
            if b.has_command():
                findings.append("%s: a command block with no <!-- example: ... --> marker"
                                % b.where())
            continue
        if b.kind not in KINDS and not b.has_command():
            continue  # a named example another test reads (codec_docs_test)
        if b.kind not in KINDS:
            findings.append("%s: unknown example kind '%s' (one of %s)"
                            % (b.where(), b.kind, ", ".join(KINDS)))
        elif b.kind == "not-run" and not b.reason:
            findings.append("%s: not-run without a reason (<!-- example: not-run: WHY -->)"
                            % b.where())
        elif b.kind != "not-run" and b.reason:
            findings.append("%s: '%s' takes no argument" % (b.where(), b.kind))
        elif b.kind in ("run", "run-output", "pair") and not (b.has_command() and commands(b)):
            findings.append("%s: marked %s but holds no command" % (b.where(), b.kind))
        elif b.kind == "pair":
            for host, _, _ in commands(b):
                if host is None:
                    findings.append("%s: a pair block line without hostA$ or hostB$"
                                    % b.where())
                    break
    return findings


def commands(b):
    """[(host, command, expected output lines)] of a block; host is hostA,
    hostB or None."""
    prompted = any(l.startswith("$ ") for l in b.body)
    out, cur, output = [], None, None
    for l in b.body:
        if cur is not None and (cur[1].endswith("\\") or cur[1].count("'") % 2 == 1):
            cur[1] += "\n" + l
            continue
        host, text = None, None
        if prompted:
            if l.startswith("$ "):
                text = l[2:]
        else:
            m = re.match(r"^(hostA|hostB)\$ (.*)$", l)
            if m:
                host, text = m.group(1), m.group(2)
            elif l.strip() and not l.lstrip().startswith("#"):
                text = l
        if text is not None:
            output = []
            cur = [host, text, output]
            out.append(cur)
        elif output is not None and prompted:
            output.append(l)
    result = []
    for host, text, output in out:
        while output and not output[-1].strip():
            output.pop()
        result.append((host, text, output))
    return result


def expected_status(cmd):
    m = re.search(r"#[^'\"\n]*\bexit (\d+)\b[^'\"\n]*$", cmd.split("\n")[-1])
    return int(m.group(1)) if m else 0


def substitute(cmd, host, kind, env, hosts):
    dev0, dev1 = env["QPC_DEV0"], env["QPC_DEV1"]
    if kind == "pair":
        mine = dev0 if host == "hostA" else dev1
        gid = env["QPC_GID0"] if host == "hostA" else env["QPC_GID1"]
        cmd = re.sub(r"\bmlx5_0\b", mine, cmd)
        cmd = re.sub(r"(\s-g )\d+\b", r"\g<1>" + gid, cmd)
        other = os.path.join(hosts, "hostB")
        cmd = re.sub(r"^scp (-p )?(\S+) hostB:(\s|$)", r"cp \g<1>\g<2> " + other + r"/\3", cmd)
        cmd = re.sub(r"^scp (-p )?hostB:(\S+) ", r"cp \g<1>" + other + r"/\g<2> ", cmd)
    cmd = re.sub(r"\bmlx5_0\b", dev0, cmd)
    cmd = re.sub(r"\bmlx5_1\b", dev1, cmd)
    cmd = re.sub(r"\brxe0\b", dev0, cmd)
    cmd = re.sub(r"\brxe1\b", dev1, cmd)
    cmd = cmd.replace("10.99.0.1", env["QPC_IP0"]).replace("10.99.0.2", env["QPC_IP1"])
    cmd = re.sub(r"(?<=\s)hostA(?=\s|$)", env["QPC_IP0"], cmd)
    return cmd


def listening_inodes():
    """The inodes of the TCP sockets in LISTEN state on this host (or kernel)."""
    inodes = set()
    for t in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(t) as f:
                for l in f:
                    fields = l.split()
                    if fields[3:4] == ["0A"] and len(fields) > 9:
                        inodes.add(fields[9])
        except OSError:
            pass
    return inodes


def group_socket_inodes(pgid):
    """The inodes of the sockets open in the processes of process group `pgid`
    (a server started in a session of its own, and whatever it started)."""
    inodes = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat = f.read()
            if int(stat[stat.rindex(")") + 2:].split()[2]) != pgid:
                continue
            for fd in os.listdir("/proc/%s/fd" % pid):
                link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if link.startswith("socket:["):
                    inodes.add(link[len("socket:["):-1])
        except (OSError, ValueError, IndexError):
            continue  # gone, or not ours to read
    return inodes


def wait_listening(p, limit=30.0):
    """Waits until the server `p` (started with start_new_session) itself
    listens on a TCP socket (a stock client connects only once), or exits, or
    `limit` s pass. Its own socket: another program's listener appearing or
    going away meanwhile must not start the client early."""
    end = time.monotonic() + limit
    while time.monotonic() < end and p.poll() is None:
        if listening_inodes() & group_socket_inodes(p.pid):
            time.sleep(0.1)
            return
        time.sleep(0.05)


def show(text, n=6):
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    for l in lines[-n:]:
        print("    " + l)


def run_blocks(blocks, args):
    env = dict(os.environ)
    if args.no_lab:  # the runner's own unit test: no device is used
        for k, v in (("QPC_DEV0", "rxe0"), ("QPC_DEV1", "rxe1"), ("QPC_IP0", "10.99.0.1"),
                     ("QPC_IP1", "10.99.0.2"), ("QPC_GID0", "1"), ("QPC_GID1", "1")):
            env.setdefault(k, v)
    elif "QPC_DEV0" not in env:
        print("FAIL: not in the lab (QPC_DEV0 unset): run under tools/lab/lab-run")
        return 1
    src, build = os.path.abspath(args.src), os.path.abspath(args.build)
    tooldirs = []
    tools_root = os.path.join(build, "tools")
    if os.path.isdir(tools_root):
        for d in sorted(os.listdir(tools_root)):
            if os.path.isfile(os.path.join(tools_root, d, d)):
                tooldirs.append(os.path.join(tools_root, d))
    env["PATH"] = os.pathsep.join(tooldirs + [env.get("PATH", "/usr/bin:/bin")])
    work = tempfile.mkdtemp(prefix="qpc-docex.")
    try:
        # The tree the examples' relative paths mean: the source tree, with
        # build/ the build tree. Links, so nothing is written into either.
        tree = os.path.join(work, "tree")
        os.mkdir(tree)
        for e in os.listdir(src):
            if e not in ("build", ".git"):
                os.symlink(os.path.join(src, e), os.path.join(tree, e))
        os.symlink(build, os.path.join(tree, "build"))
        return run_in(blocks, env, work, tree, args.kind)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_in(blocks, env, work, tree, kinds):
    failed, ran, skipped = 0, 0, 0
    for b in blocks:
        if b.kind not in (kinds or ("run", "run-output", "pair")):
            if b.kind == "not-run":
                skipped += 1
            continue
        print("=== %s (%s)" % (b.where(), b.kind))
        cmds = commands(b)
        hosts = os.path.join(work, "%s.%d" % (os.path.basename(b.path), b.line))  # fresh hosts
        server = None  # (Popen, label, output file)
        for idx, (host, text, output) in enumerate(cmds):
            if b.kind == "pair":
                cwd = os.path.join(hosts, host)
                os.makedirs(os.path.join(hosts, "hostA"), exist_ok=True)
                os.makedirs(os.path.join(hosts, "hostB"), exist_ok=True)
            else:
                cwd = tree
            cmd = substitute(text, host, b.kind, env, hosts)
            want = expected_status(text)
            label = "%s %s$ %s" % (b.where(), host or "", cmd.split("\n")[0])
            is_server = (b.kind == "pair" and host == "hostA" and idx + 1 < len(cmds)
                         and cmds[idx + 1][0] == "hostB")
            print("--- %s$ %s" % (host or "", cmd))
            if is_server:
                f = open(os.path.join(hosts, "server.out"), "w+")
                p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=f,
                                     stderr=subprocess.STDOUT, start_new_session=True)
                server = (p, label, f, want)
                wait_listening(p)
                continue
            ran += 1
            t0 = time.monotonic()
            # Its own process group, so a timeout kills what it started too.
            r = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, errors="replace",
                                 start_new_session=True)
            try:
                out, _ = r.communicate(timeout=COMMAND_TIMEOUT)
                rc = r.returncode
            except subprocess.TimeoutExpired:
                os.killpg(r.pid, signal.SIGKILL)
                out, _ = r.communicate()
                rc = "timeout"
            show(out)
            print("    [exit %s, %.1f s]" % (rc, time.monotonic() - t0))
            if rc != want:
                print("FAIL: %s exited %s, the doc says %d" % (label, rc, want))
                failed += 1
            elif b.kind == "run-output" and out.rstrip("\n").split("\n") != output:
                print("FAIL: %s printed something else than the doc shows; the doc:" % label)
                for l in output:
                    print("    " + l)
                failed += 1
            if server is not None:
                p, slabel, f, swant = server
                ran += 1
                try:
                    server_rc = p.wait(timeout=COMMAND_TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    server_rc = "timeout"
                f.seek(0)
                print("--- (server) %s: exit %s" % (slabel, server_rc))
                show(f.read())
                f.close()
                if server_rc != swant:
                    print("FAIL: %s exited %s, the doc says %d" % (slabel, server_rc, swant))
                    failed += 1
                server = None
    print("docs examples: %d command(s) run, %d failed; %d block(s) not run (marked not-run)"
          % (ran, failed, skipped))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("check", "list", "run"))
    ap.add_argument("files", nargs="+")
    ap.add_argument("--src", default=".")
    ap.add_argument("--build", default="build")
    ap.add_argument("--kind", action="append", choices=("run", "run-output", "pair"),
                    help="run only blocks of this kind (repeatable)")
    ap.add_argument("--no-lab", action="store_true",
                    help="run without the lab's QPC_* variables (the runner's own test)")
    args = ap.parse_args()
    blocks, findings = [], []
    for f in args.files:
        rel = os.path.relpath(f, args.src)  # names in messages as the docs link them
        bs, fs = parse(f, f if rel.startswith("..") else rel)
        blocks += bs
        findings += fs
    findings += check(blocks)
    if args.mode == "list":
        for b in blocks:
            if b.marker is not None or b.has_command():
                print("%s\t%s\t%s" % (b.where(), b.kind or "UNCLASSIFIED", b.reason))
    for f in findings:
        print("FAIL: " + f)
    if findings:
        return 1
    if args.mode == "check":
        n = sum(1 for b in blocks if b.marker is not None)
        print("docs examples: %d classified block(s) in %d file(s), none unclassified"
              % (n, len(args.files)))
        return 0
    if args.mode == "run":
        return run_blocks(blocks, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
