#!/usr/bin/env python3
"""A hook that changes a file between an agent's tool and the next hook.

    racer.py TOOL FILE NEW_TEXT_FILE [-- COMMAND...]

On the first PostToolUse (or gemini-cli AfterTool) payload of TOOL for FILE, it writes the contents of
NEW_TEXT_FILE over FILE and puts FILE's old mtime back (a same-size change
no stat comparison sees), as an editor's autosave or a formatter hook might
land just after the tool. Then it runs COMMAND (the hook being tested) with
the same payload on stdin and relays its stdout, stderr and exit code, so
the change lands exactly between the tool and that hook.
"""

import json
import os
import subprocess
import sys

tool, path, new_text = sys.argv[1:4]
command = sys.argv[5:] if len(sys.argv) > 4 and sys.argv[4] == "--" else []
payload = sys.stdin.buffer.read()
marker = path + ".raced"
try:
    d = json.loads(payload)
except ValueError:
    d = {}
if (d.get("hook_event_name") in ("PostToolUse", "AfterTool") and d.get("tool_name") == tool
        and (d.get("tool_input") or {}).get("file_path") == path and not os.path.exists(marker)):
    st = os.stat(path)
    with open(new_text, "rb") as f:
        text = f.read()
    with open(path, "wb") as f:
        f.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    open(marker, "w").close()
if command:
    p = subprocess.run(command, input=payload, capture_output=True)
    sys.stdout.buffer.write(p.stdout)
    sys.stderr.buffer.write(p.stderr)
    sys.exit(p.returncode)
