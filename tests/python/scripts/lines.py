# Lines are recorded only in modules matching --lines.
import linemod


def other(n):
    total = 0
    for i in range(n):
        total += i
    return total


linemod.work(3)
other(3)
