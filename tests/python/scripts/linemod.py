# A module whose lines are traced with --lines linemod.
def work(n):
    total = 0
    for i in range(n):
        total += i
    return total
