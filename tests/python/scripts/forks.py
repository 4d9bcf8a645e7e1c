# fork(): the child traces into its own directory, never the parent's files.
import os


def child_work():
    return sum(range(5))


def parent_work():
    return sum(range(6))


pid = os.fork()
if pid == 0:
    child_work()
    os._exit(0)
os.waitpid(pid, 0)
parent_work()
print(pid)
