"""Workloads of tests/bench/b-python.sh: each run() returns the number of
Python-level function calls it makes (for ns per call)."""
import json
import re


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


FIB_N = 27


def run_fib():
    fib(FIB_N)
    a, b = 0, 1
    for _ in range(FIB_N + 1):
        a, b = b, a + b
    return 2 * a - 1	# calls of fib(n): 2 * F(n + 1) - 1


class Item:
    def __init__(self, i):
        self.i = i
        self.name = "item%d" % i

    def score(self):
        return (self.i * 7919) % 1000


WORD = re.compile(r"[a-z]+(\d+)")


def parse(name):
    m = WORD.match(name)
    return int(m.group(1)) if m else -1


def run_mixed():
    items = [Item(i) for i in range(20000)]
    ranked = sorted(items, key=lambda it: it.score())
    doc = json.dumps([{"n": it.name, "s": it.score()} for it in ranked[:5000]])
    back = json.loads(doc)
    total = sum(parse(d["n"]) for d in back)
    table = {}
    for it in items:
        table.setdefault(it.score() % 97, []).append(it.i)
    return total + len(table)


def run_lines():
    import benchlines
    return benchlines.loop(200000)
