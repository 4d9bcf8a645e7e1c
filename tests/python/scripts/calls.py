# Known call tree: nested calls, an exception leaving two frames, C calls.
def leaf(x):
    return len(str(x))


def middle(x):
    return leaf(x) + leaf(x + 1)


def boom():
    raise KeyError("k")


def catcher():
    try:
        boom()
    except KeyError:
        return "caught"


def top():
    middle(1)
    catcher()
    sorted([3, 1, 2])


top()
