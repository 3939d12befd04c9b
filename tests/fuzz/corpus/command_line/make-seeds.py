#!/usr/bin/env python3
# Seeds for command_line_fuzz: every command line of docs/*.md that starts with "vperf " inside a
# code block (``` fences, or `...` spans of one line), split as a shell would (shlex), written
# as its words after "vperf", NUL-separated. Lines that do not split (a quote left open by the
# excerpt) or hold placeholders ([...], |, <...>) are left out. Run from the repository root.
import glob, hashlib, os, re, shlex

out_dir = os.path.dirname(os.path.abspath(__file__))
lines = set()
for doc in sorted(glob.glob("docs/*.md")):
    in_fence = False
    for line in open(doc, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        candidates = [line.strip()] if in_fence else re.findall(r"`(vperf [^`]+)`", line)
        for text in candidates:
            text = re.sub(r"^(\$|#) ", "", text)
            if not text.startswith("vperf ") or re.search(r"[\[\]|<>]|\.\.\.", text):
                continue
            try:
                words = shlex.split(text, comments=True)
            except ValueError:
                continue
            if len(words) > 1:
                lines.add(tuple(words[1:]))
for words in sorted(lines):
    data = "\0".join(words).encode()
    name = "docs-" + re.sub(r"[^a-z]", "", words[0]) + "-" + hashlib.sha1(data).hexdigest()[:8]
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)
print(len(lines), "seeds")
