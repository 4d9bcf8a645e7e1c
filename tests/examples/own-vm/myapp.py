"""A small application of our own for tests/examples/t-own-vm-guide.sh:
it saves files durably (write, flush, fsync), as a program that must not
lose data does; the guide's report says where each save's time went."""
import os


def save(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def main():
    for i in range(12):
        save("/data/record-%02d.bin" % i, os.urandom(192 * 1024))


if __name__ == "__main__":
    main()
