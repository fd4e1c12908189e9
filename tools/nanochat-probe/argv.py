"""The one argv reader the nanochat probes share (torch-free, so that the data-only tools can import it too).

`argval(argv, '-b', '--batch-size', default=8)`: the value given as `-b 8`, `--batch-size 8` or `--batch-size=8`, the
first of the names found, else `default`.
"""


def argval(argv, *names, default=None):
    for i, a in enumerate(argv):
        for n in names:
            if a.startswith(n + '='):
                return a.split('=', 1)[1]
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
    return default
