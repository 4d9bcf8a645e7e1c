"""The line-heavy loop of the bench (traced with --lines benchlines)."""


def loop(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i * 2
        else:
            total -= 1
    return 1
